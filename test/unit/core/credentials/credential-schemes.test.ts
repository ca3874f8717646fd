import { describe, expect, it } from 'vitest';
import { CREDENTIAL_SCHEMES, parseCredential, platformCredentialOf } from '../../../../core/credentials';
import type { Credential } from '../../../../core/platform/types';
import { parseConfig } from '../../../../core/settings/config';

const settings = parseConfig({
  serviceId: 's1',
  credentialHeader: 'X-Key',
  appIdHeader: 'X-App',
  appKeyHeader: 'X-App-Key',
});

const inQuery = { ...settings, credentialLocation: 'query' as const };
const oauth = parseConfig({ serviceId: 's1', credentialMode: 'oauth', oidcIssuer: 'https://issuer.example' });

describe('credential schemes', () => {
  it('name what API Gateway must see, as configured: never an optional app key, nothing for a token', () => {
    expect(CREDENTIAL_SCHEMES.user_key.identitySources(settings)).toEqual([
      { location: 'header', name: 'x-key' },
    ]);
    expect(CREDENTIAL_SCHEMES.app_id.identitySources(settings)).toEqual([
      { location: 'header', name: 'x-app' },
    ]);
    expect(CREDENTIAL_SCHEMES.user_key.identitySources(inQuery)).toEqual([
      { location: 'query', name: 'user_key' },
    ]);
    expect(CREDENTIAL_SCHEMES.app_id.identitySources(inQuery)).toEqual([
      { location: 'query', name: 'app_id' },
    ]);
    expect(CREDENTIAL_SCHEMES.oauth.identitySources(oauth)).toEqual([]);
  });

  it('tell a consumer where to send the credential', () => {
    expect(CREDENTIAL_SCHEMES.user_key.hint(settings)).toBe('send your key in the x-key header');
    expect(CREDENTIAL_SCHEMES.user_key.hint(inQuery)).toBe('send your key in the user_key query parameter');
    expect(CREDENTIAL_SCHEMES.app_id.hint(settings)).toBe(
      'send your application id in the x-app header and its key, if it has keys, in the x-app-key header',
    );
    expect(CREDENTIAL_SCHEMES.oauth.hint(oauth)).toContain('Authorization header (Bearer)');
  });

  it('give a 401 challenge only where a standard defines one (RFC 6750 for tokens)', () => {
    expect(CREDENTIAL_SCHEMES.user_key.challenge).toBeUndefined();
    expect(CREDENTIAL_SCHEMES.oauth.challenge?.(oauth)).toBe(
      'Bearer realm="https://issuer.example", error="invalid_token"',
    );
  });

  it('show an application as curl headers or query parameters, or placeholders without one', () => {
    const application = { id: 'app-1', userKey: 'k-1', appKeys: ['ak-1', 'ak-2'] };
    expect(CREDENTIAL_SCHEMES.user_key.example(settings, application)).toEqual({
      headers: [['x-key', 'k-1']],
      query: [],
    });
    expect(CREDENTIAL_SCHEMES.app_id.example(settings, application).headers).toEqual([
      ['x-app', 'app-1'],
      ['x-app-key', 'ak-1'],
    ]);
    expect(CREDENTIAL_SCHEMES.app_id.example(inQuery, application)).toEqual({
      headers: [],
      query: [
        ['app_id', 'app-1'],
        ['app_key', 'ak-1'],
      ],
    });
    expect(CREDENTIAL_SCHEMES.app_id.example(settings, { id: 'app-2', appKeys: [] }).headers).toEqual([
      ['x-app', 'app-2'],
    ]);
    expect(CREDENTIAL_SCHEMES.user_key.example(settings).headers).toEqual([['x-key', '<USER_KEY>']]);
    expect(CREDENTIAL_SCHEMES.oauth.example(oauth).query).toEqual([['access_token', '$ACCESS_TOKEN']]);
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
