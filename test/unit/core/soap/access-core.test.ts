import '../aws-matchers';
import { PublishCommand, SNSClient } from '@aws-sdk/client-sns';
import { mockClient } from 'aws-sdk-client-mock';
import type Redis from 'ioredis';
import RedisMock from 'ioredis-mock';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { credentialKeys } from '../../../../core/budget/keys';
import { credentialIdOf } from '../../../../core/credentials';
import type { AccessConfigInput } from '../../../../core/settings/config';
import { decideWithAccessCore } from '../../../../core/soap/proxy';
import { createSoapAccessProxyHandler } from '../../../../lambdas/soap/handler';
import { freePort } from '../../../../local/redis';
import { type SoapEchoServer, startSoapEcho } from '../../../../local/soap-echo';
import { accessConfig, END, SERVICE, T0, TOPIC } from '../../handlers/fixtures';
import {
  authorized,
  CapturingLogger,
  CapturingMetrics,
  countingRedis,
  denied,
  FakePlatform,
  hourly,
  invalidCredential,
  usageIn,
} from '../fakes';
import { CONTENT_TYPES, envelope, KEY, NS, proxyEvent, soapSettings } from './fixtures';

const RULES = [
  { method: 'POST', pattern: '/GetQuote', metric: 'get_quote', delta: 1 },
  { method: 'POST', pattern: '/GetPrice', metric: 'get_price', delta: 2 },
];
const ID = credentialIdOf(SERVICE, { kind: 'user_key', userKey: KEY });

const snsMock = mockClient(SNSClient);
let echo: SoapEchoServer;
let platform: FakePlatform;
let logger: CapturingLogger;
let metrics: CapturingMetrics;
let store: Redis;
let redisCalls: string[];

beforeAll(async () => {
  echo = await startSoapEcho();
});

afterAll(async () => {
  await echo.stop();
});

beforeEach(async () => {
  snsMock.reset();
  snsMock.on(PublishCommand).resolves({ MessageId: 'm-1' });
  platform = new FakePlatform();
  // The authrep of a first call has counted it (current 1 of 3 on the method's metric).
  platform.authrepAnswer = () => authorized([hourly('get_quote', 3, 1, END)]);
  logger = new CapturingLogger();
  metrics = new CapturingMetrics();
  store = new RedisMock() as unknown as Redis;
  await store.flushall();
});

afterEach(() => {
  const published = snsMock.commandCalls(PublishCommand).map((call) => call.args[0].input.Message);
  const everything = JSON.stringify([logger.lines, published]);
  expect(everything).not.toContain(KEY);
  expect(everything).not.toContain('pk-demo');
});

/** The proxy Lambda's handler with the real access core on a fake Redis and a fake platform. */
function proxy(overrides: Partial<AccessConfigInput> = {}, backendUrl = echo.url) {
  const counted = countingRedis(store);
  redisCalls = counted.calls;
  const handler = createSoapAccessProxyHandler({
    settings: soapSettings({ soapBackendUrl: backendUrl }),
    config: accessConfig({ mappingRules: RULES, ...overrides }),
    redis: counted.redis,
    sns: new SNSClient({ region: 'us-east-1' }),
    platform,
    now: () => T0,
    logger,
    metrics,
  });
  // Script definitions at construction are not calls.
  redisCalls.length = 0;
  return handler;
}

const call = (method = 'GetQuote', header = `<t:ApiKey>${KEY}</t:ApiKey><t:method>${method}</t:method>`) =>
  proxyEvent(envelope({ header, body: `<q:${method} xmlns:q="urn:example:quotes"/>` }));

describe('the SOAP proxy deciding with the access core', () => {
  it('asks the platform on a first call (authrep of the method metric), then decides from Redis in one round trip', async () => {
    const handle = proxy();
    expect((await handle(call('GetPrice'))).statusCode).toBe(200);
    expect(platform.calls).toEqual([
      { op: 'authrep', credential: { kind: 'user_key', userKey: KEY }, usage: { get_price: 2 } },
    ]);
    redisCalls.length = 0;
    const hot = await handle(call('GetQuote'));
    expect(hot.statusCode).toBe(200);
    expect(hot.body).toContain('<op:operation>GetQuote</op:operation>');
    expect(redisCalls).toEqual(['accessCheck']);
    expect(platform.calls).toHaveLength(1);
    expect(await usageIn(store, credentialKeys(SERVICE, ID).pending)).toEqual({ get_quote: 1 });
    expect(snsMock).toHaveReceivedCommandWith(PublishCommand, { TopicArn: TOPIC });
  });

  it('holds the limit of the snapshot: the call over it is a limits_exceeded fault, and not counted', async () => {
    const handle = proxy();
    const statuses: number[] = [];
    for (let i = 0; i < 4; i++) statuses.push((await handle(call())).statusCode);
    expect(statuses).toEqual([200, 200, 200, 500]);
    const refused = await handle(call());
    expect(refused.body).toContain('<faultstring>Usage limits exceeded</faultstring>');
    expect(await usageIn(store, credentialKeys(SERVICE, ID).pending)).toEqual({ get_quote: 2 });
  });

  it('refuses an operation without a mapping rule before any Redis or platform call', async () => {
    const handle = proxy();
    const result = await handle(call('DeleteEverything'));
    expect(result.body).toContain('No mapping rule matches the operation: DeleteEverything');
    expect(redisCalls).toEqual([]);
    expect(platform.calls).toEqual([]);
  });

  it('answers the platform refusals as faults: an unknown key, a denied application', async () => {
    platform.authrepAnswer = () => invalidCredential();
    expect((await proxy()(call())).body).toContain('<faultstring>Invalid credential</faultstring>');
    await store.flushall();
    platform.authrepAnswer = () => denied('application_not_active');
    expect((await proxy()(call())).body).toContain('Application is not active');
  });

  it('reads an app_id credential from AppId and AppKey', async () => {
    const header = '<t:AppId>app-1</t:AppId><t:AppKey>k-1</t:AppKey><t:method>GetQuote</t:method>';
    expect((await proxy({ credentialMode: 'app_id' })(call('GetQuote', header))).statusCode).toBe(200);
    expect(platform.calls[0]).toMatchObject({
      credential: { kind: 'app_id', appId: 'app-1', appKey: 'k-1' },
    });
  });

  it('takes back the pending usage of an allowed call whose backend is down (the first call stays counted at the platform)', async () => {
    const handle = proxy({}, `http://127.0.0.1:${await freePort()}/soap`);
    await handle(call());
    const result = await handle(
      proxyEvent(
        envelope({
          version: '1.2',
          header: `<t:ApiKey>${KEY}</t:ApiKey><t:method>GetQuote</t:method>`,
          body: '<q:GetQuote xmlns:q="urn:q"/>',
        }),
        { 'content-type': CONTENT_TYPES['1.2'] },
      ),
    );
    expect(result.statusCode).toBe(502);
    expect(result.body).toContain(`xmlns:t="${NS}"`);
    expect(result.body).toContain('t:backend_unavailable');
    expect(platform.calls).toHaveLength(1);
    expect(await store.exists(credentialKeys(SERVICE, ID).pending, credentialKeys(SERVICE, ID).since)).toBe(
      0,
    );
    expect(redisCalls).toContain('accessGiveBack');
  });
});

describe('decideWithAccessCore', () => {
  it('hands the core the request as it is, and refuses an access token the core cannot verify', async () => {
    const seen: unknown[] = [];
    const decide = decideWithAccessCore({
      decideCall: async (request) => {
        seen.push(request);
        return { effect: 'unauthorized' };
      },
      giveBack: async () => ({}),
    });
    const credential = { kind: 'user_key', userKey: KEY } as const;
    expect(await decide({ credential, method: 'POST', path: '/GetQuote', query: {} })).toEqual({
      effect: 'unauthorized',
    });
    expect(seen).toEqual([{ credential, method: 'POST', path: '/GetQuote', query: {} }]);
    await expect(
      decide({
        credential: { kind: 'access_token', accessToken: 'a.b.c' },
        method: 'POST',
        path: '/X',
        query: {},
      }),
    ).rejects.toThrow(/oauth/);
  });
});
