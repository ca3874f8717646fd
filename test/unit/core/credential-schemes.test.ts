import { describe, expect, it } from 'vitest';
import { parseConfig } from '../../../lambdas/core/config';
import { CREDENTIAL_SCHEMES, parseCredential, platformCredentialOf } from '../../../lambdas/core/credentials';
import type { Credential } from '../../../lambdas/core/platform/types';

const settings = parseConfig({
  serviceId: 's1',
  credentialHeader: 'X-Key',
  appIdHeader: 'X-App',
  appKeyHeader: 'X-App-Key',
});

describe('credential schemes', () => {
  it('name the headers API Gateway must see, as configured', () => {
    expect(CREDENTIAL_SCHEMES.user_key.identitySources(settings)).toEqual(['x-key']);
    expect(CREDENTIAL_SCHEMES.app_id.identitySources(settings)).toEqual(['x-app', 'x-app-key']);
  });

  it('tell a consumer where to send the credential', () => {
    expect(CREDENTIAL_SCHEMES.user_key.hint(settings)).toBe('send your key in the x-key header');
    expect(CREDENTIAL_SCHEMES.app_id.hint(settings)).toBe(
      'send your application id in the x-app header and its key in the x-app-key header',
    );
  });

  it('show an application as curl headers, or placeholders without one', () => {
    const application = { id: 'app-1', userKey: 'k-1', appKeys: ['ak-1', 'ak-2'] };
    expect(CREDENTIAL_SCHEMES.user_key.exampleHeaders(settings, application)).toEqual([['x-key', 'k-1']]);
    expect(CREDENTIAL_SCHEMES.app_id.exampleHeaders(settings, application)).toEqual([
      ['x-app', 'app-1'],
      ['x-app-key', 'ak-1'],
    ]);
    expect(CREDENTIAL_SCHEMES.app_id.exampleHeaders(settings, { id: 'app-2', appKeys: [] })).toEqual([
      ['x-app', 'app-2'],
    ]);
    expect(CREDENTIAL_SCHEMES.user_key.exampleHeaders(settings)).toEqual([['x-key', '<USER_KEY>']]);
  });
});

describe('platform credentials', () => {
  const userKey: Credential = { kind: 'user_key', userKey: 'k-1' };
  const appWithKey: Credential = { kind: 'app_id', appId: 'a-1', appKey: 'ak-1' };
  const appWithoutKey: Credential = { kind: 'app_id', appId: 'a-2' };

  it('send the credential to authorize and name only the application in reports', () => {
    expect(platformCredentialOf(userKey).authParams(userKey)).toEqual([['user_key', 'k-1']]);
    expect(platformCredentialOf(appWithKey).authParams(appWithKey)).toEqual([
      ['app_id', 'a-1'],
      ['app_key', 'ak-1'],
    ]);
    expect(platformCredentialOf(appWithoutKey).authParams(appWithoutKey)).toEqual([['app_id', 'a-2']]);
    expect(platformCredentialOf(appWithKey).reportParams(appWithKey)).toEqual([['app_id', 'a-1']]);
    expect(platformCredentialOf(userKey).reportParams(userKey)).toEqual([['user_key', 'k-1']]);
  });

  it('list every value to redact', () => {
    expect(platformCredentialOf(userKey).secrets(userKey)).toEqual(['k-1']);
    expect(platformCredentialOf(appWithKey).secrets(appWithKey)).toEqual(['a-1', 'ak-1']);
  });

  it('read back exactly what was sealed, and nothing that is not a credential', () => {
    for (const credential of [userKey, appWithKey, appWithoutKey]) {
      expect(parseCredential(JSON.parse(JSON.stringify(credential)))).toEqual(credential);
    }
    for (const value of [null, 'k', { kind: 'user_key' }, { kind: 'app_id', appId: 1 }, { kind: 'other' }]) {
      expect(parseCredential(value)).toBeUndefined();
    }
    expect(parseCredential({ kind: 'app_id', appId: 'a', appKey: 5 })).toBeUndefined();
  });
});
