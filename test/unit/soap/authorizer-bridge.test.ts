import { SNSClient } from '@aws-sdk/client-sns';
import { beforeEach, describe, expect, it } from 'vitest';
import { createAuthorizerHandler } from '../../../lambdas/authorizer/handler';
import { type AccessConfigInput, parseConfig } from '../../../lambdas/core/config';
import { silentLogger, silentMetrics } from '../../../lambdas/core/observability';
import type { SoapCredential } from '../../../lambdas/core/soap/access-header';
import type { SoapAccessRequest } from '../../../lambdas/core/soap/proxy';
import { authorizerEventOf, decideThroughAuthorizer } from '../../../lambdas/soap/authorizer-bridge';
import { denied, FakePlatform, invalidCredential } from '../core/fakes';
import { KEY } from './fixtures';

const RULES = [
  { method: 'POST', pattern: '/GetQuote$', metric: 'get_quote', delta: 1 },
  { method: 'POST', pattern: '/GetPrice$', metric: 'get_price', delta: 2 },
];

let platform: FakePlatform;

beforeEach(() => {
  platform = new FakePlatform();
});

function decideWith(overrides: Partial<AccessConfigInput> = {}) {
  const config = parseConfig({
    serviceId: 'svc-1',
    platformCredential: 'pk',
    mappingRules: RULES,
    ...overrides,
  });
  const authorize = createAuthorizerHandler({
    config,
    sns: new SNSClient({ region: 'us-east-1' }),
    platform,
    logger: silentLogger,
    metrics: silentMetrics,
  });
  return decideThroughAuthorizer(authorize, config);
}

function request(
  path: string,
  credential: SoapCredential = { kind: 'user_key', userKey: KEY },
): SoapAccessRequest {
  return { credential, method: 'POST', path, query: {} };
}

describe('deciding a SOAP call with the REST authorizer', () => {
  it('allows a call and counts it on the metric of the mapping rule of /<method>', async () => {
    expect(await decideWith()(request('/GetPrice'))).toEqual({ effect: 'allow' });
    expect(platform.calls).toEqual([
      { op: 'authrep', credential: { kind: 'user_key', userKey: KEY }, usage: { get_price: 2 } },
    ]);
  });

  it('denies an operation no mapping rule matches, before asking the platform', async () => {
    expect(await decideWith()(request('/DeleteEverything'))).toEqual({
      effect: 'deny',
      reason: 'no_mapping_rule',
    });
    expect(platform.calls).toEqual([]);
  });

  it('carries the platform denial reason, and answers unauthorized for an unknown key', async () => {
    platform.authrepAnswer = () => denied('limits_exceeded');
    expect(await decideWith()(request('/GetQuote'))).toEqual({ effect: 'deny', reason: 'limits_exceeded' });
    platform.authrepAnswer = () => invalidCredential();
    expect(await decideWith()(request('/GetQuote'))).toEqual({ effect: 'unauthorized' });
  });

  it('sends an app_id credential in the configured headers, the key only when there is one', async () => {
    const decide = decideWith({ credentialMode: 'app_id', appIdHeader: 'x-app', appKeyHeader: 'x-key' });
    await decide(request('/GetQuote', { kind: 'app_id', appId: 'app-1', appKey: 'k-1' }));
    await decide(request('/GetQuote', { kind: 'app_id', appId: 'app-1' }));
    expect(platform.calls.map((call) => 'credential' in call && call.credential)).toEqual([
      { kind: 'app_id', appId: 'app-1', appKey: 'k-1' },
      { kind: 'app_id', appId: 'app-1' },
    ]);
  });

  it('builds the REQUEST event of POST /<method>, so the cache endpoint is POST /<method>', () => {
    const event = authorizerEventOf(
      { credentialHeader: 'apikey', appIdHeader: 'app_id', appKeyHeader: 'app_key' },
      request('/GetQuote'),
    );
    expect(event).toMatchObject({
      httpMethod: 'POST',
      path: '/GetQuote',
      resource: '/GetQuote',
      headers: { apikey: KEY },
      multiValueHeaders: { apikey: [KEY] },
    });
  });

  it('refuses an access token, which the REST core of this version cannot verify', async () => {
    await expect(
      decideWith()(request('/GetQuote', { kind: 'access_token', accessToken: 'a.b.c' })),
    ).rejects.toThrow(/oauth/);
  });
});
