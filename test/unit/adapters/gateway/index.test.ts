import { SNSClient } from '@aws-sdk/client-sns';
import { describe, expect, it } from 'vitest';
import { type AuthorizerEvent, formatNameOf } from '../../../../adapters/gateway';
import type { AccessConfigInput } from '../../../../core/settings/config';
import { createAuthorizerHandler } from '../../../../lambdas/authorizer/handler';
import { authorized, CapturingLogger, CapturingMetrics, FakePlatform, hourly } from '../../core/fakes';
import { accessConfig, END, T0 } from '../../handlers/fixtures';
import { httpV1SampleEvent, httpV2SampleEvent, restSampleEvent } from './sample-events';

describe('the format of an event', () => {
  it('is told by its version: none on REST, 1.0 and 2.0 on an HTTP API', () => {
    expect(formatNameOf(restSampleEvent())).toBe('rest');
    expect(formatNameOf(httpV1SampleEvent())).toBe('http-1.0');
    expect(formatNameOf(httpV2SampleEvent())).toBe('http-2.0');
  });

  it('refuses a TOKEN authorizer event and an unknown version with a clear error', () => {
    const token = { type: 'TOKEN', methodArn: 'arn', authorizationToken: 'x' } as unknown as AuthorizerEvent;
    expect(() => formatNameOf(token)).toThrow(/does not read this event: type TOKEN/);
    const future = { ...httpV2SampleEvent(), version: '3.0' };
    expect(() => formatNameOf(future)).toThrow(/version 3.0/);
  });
});

/** One bundle, every format: the same handler decides each credential mode on a 2.0 event. */
describe('the authorizer on HTTP API payload 2.0', () => {
  const platform = new FakePlatform();
  platform.authrepAnswer = () => authorized([hourly('hits', 100, 1, END)]);
  const handler = (overrides: Partial<AccessConfigInput>) =>
    createAuthorizerHandler({
      config: accessConfig({ mappingRules: [], redis: undefined, ...overrides }),
      sns: new SNSClient({ region: 'us-east-1' }),
      platform,
      now: () => T0,
      logger: new CapturingLogger(),
      metrics: new CapturingMetrics(),
    });

  it.each([
    ['the apikey header', {}, { headers: { apikey: 'k-1' } }],
    ['user_key in the query', { credentialLocation: 'query' }, { rawQueryString: 'user_key=k-1' }],
    ['app_id and app_key headers', { credentialMode: 'app_id' }, { headers: { app_id: 'a', app_key: 'k' } }],
  ] as const)('allows a call with %s', async (_, config, event) => {
    const answer = await handler(config)(httpV2SampleEvent(event));
    expect(answer).toMatchObject({ isAuthorized: true, context: { plan: 'Basic' } });
  });

  it('refuses a missing credential with isAuthorized false, and so does a repeated user_key', async () => {
    expect(await handler({})(httpV2SampleEvent({ headers: {} }))).toEqual({
      isAuthorized: false,
      context: { reason: 'invalid_credential' },
    });
    const repeated = httpV2SampleEvent({ rawQueryString: 'user_key=k-1&user_key=k-2' });
    expect(await handler({ credentialLocation: 'query' })(repeated)).toMatchObject({ isAuthorized: false });
  });

  it('answers a REST event and a payload 1.0 event from the same handler with policies', async () => {
    const handle = handler({});
    const rest = await handle(restSampleEvent({ headers: { apikey: 'k-1' }, multiValueHeaders: {} }));
    expect(rest.policyDocument.Statement[0]).toMatchObject({ Effect: 'Allow' });
    const v1 = await handle(httpV1SampleEvent({ headers: { apikey: 'k-1' } }));
    expect(v1).toMatchObject({ policyDocument: { Statement: [{ Effect: 'Allow' }] } });
  });
});
