import '../core/aws-matchers';
import { PublishCommand, SNSClient } from '@aws-sdk/client-sns';
import type { APIGatewayRequestAuthorizerEvent } from 'aws-lambda';
import { mockClient } from 'aws-sdk-client-mock';
import type Redis from 'ioredis';
import RedisMock from 'ioredis-mock';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createLogger } from '../../../adapters/powertools/observability';
import { AUTHORIZER_ERROR } from '../../../contract/authorizer-context';
import { credentialKeys, serviceKeys } from '../../../core/budget/keys';
import { createRedisClient } from '../../../core/budget/redis-client';
import { parseReportMessage } from '../../../core/reporting/message';
import type { AccessConfigInput } from '../../../core/settings/config';
import { createAuthorizerHandler } from '../../../lambdas/authorizer/handler';
import { captureProcessOutput } from '../../reliability/support/capture';
import {
  authorized,
  CapturingLogger,
  CapturingMetrics,
  countingRedis,
  denied,
  dumpRedis,
  FakePlatform,
  hourly,
  invalidCredential,
  MISCONFIGURED,
  UNAVAILABLE,
  usageIn,
} from '../core/fakes';
import {
  ARN,
  accessConfig,
  END,
  authorizerEvent as event,
  ID,
  KEY,
  RULES,
  SERVICE,
  T0,
  TOPIC,
} from './fixtures';

const snsMock = mockClient(SNSClient);
let clock: number;
let platform: FakePlatform;
let logger: CapturingLogger;
let metrics: CapturingMetrics;
let store: Redis;
let redisCalls: string[];

/** `redis` null: no cache configured. */
function handlerWith(overrides: Partial<AccessConfigInput> = {}, redis: Redis | null = countedRedis()) {
  return createAuthorizerHandler({
    config: accessConfig(overrides),
    ...(redis && { redis }),
    sns: new SNSClient({ region: 'us-east-1' }),
    platform,
    now: () => clock,
    logger,
    metrics,
  });
}

function countedRedis(): Redis {
  const counted = countingRedis(store);
  redisCalls = counted.calls;
  return counted.redis;
}

function published(): string[] {
  return snsMock.commandCalls(PublishCommand).map((call) => String(call.args[0].input.Message));
}

beforeEach(async () => {
  snsMock.reset();
  snsMock.on(PublishCommand).resolves({ MessageId: 'm-1' });
  clock = T0;
  platform = new FakePlatform();
  platform.authrepAnswer = () => authorized([hourly('hits', 100, 1, END)]);
  logger = new CapturingLogger();
  metrics = new CapturingMetrics();
  store = new RedisMock() as unknown as Redis;
  await store.flushall();
});

afterEach(() => {
  const everything = JSON.stringify([logger.lines, published()]);
  expect(everything).not.toContain(KEY);
  expect(everything).not.toContain('pk-demo');
});

const HOUR = 3_600_000;

/** The service's budget keys in Redis: not the per-second count of first calls (core/decision/first-call-gate.ts). */
async function cacheKeys(): Promise<string[]> {
  const keys = serviceKeys(SERVICE);
  return (await store.keys('*')).filter((key) => keys.credentialIdOfKey(key) !== undefined);
}

describe('malformed credentials', () => {
  const cases: [string, Partial<APIGatewayRequestAuthorizerEvent>][] = [
    ['missing', { headers: {}, multiValueHeaders: {} }],
    ['null headers', { headers: null, multiValueHeaders: null }],
    ['empty', { headers: { apikey: '' }, multiValueHeaders: { apikey: [''] } }],
    ['too long', { headers: { apikey: 'k'.repeat(257) }, multiValueHeaders: null }],
    ['bad characters', { headers: { apikey: 'k\u0000y' }, multiValueHeaders: null }],
    ['a space', { headers: { apikey: 'k y' }, multiValueHeaders: null }],
    ['several values', { headers: { apikey: 'b' }, multiValueHeaders: { apikey: ['a', 'b'] } }],
    ['comma-joined', { headers: { apikey: 'a,b' }, multiValueHeaders: null }],
    ['twice under different case', { headers: { apikey: 'a', ApiKey: 'a' }, multiValueHeaders: null }],
  ];
  it.each(cases)('%s: 401 with no Redis, platform or SNS call', async (_, overrides) => {
    const handle = handlerWith();
    redisCalls.length = 0;
    await expect(handle(event(overrides))).rejects.toThrow(/^Unauthorized$/);
    expect(redisCalls).toEqual([]);
    expect(platform.calls).toEqual([]);
    expect(snsMock).toHaveReceivedCommandTimes(PublishCommand, 0);
    expect(metrics.counts.MalformedCredential).toBe(1);
  });
});

describe('mapping rules', () => {
  it('no rule matched: Deny no_mapping_rule with no Redis, platform or SNS call', async () => {
    const handle = handlerWith();
    redisCalls.length = 0;
    const result = await handle(event({ httpMethod: 'DELETE' }));
    expect(result.policyDocument.Statement).toEqual([
      { Action: 'execute-api:Invoke', Effect: 'Deny', Resource: ARN },
    ]);
    expect(result.context).toMatchObject({ reason: 'no_mapping_rule', credentialId: ID });
    expect(redisCalls).toEqual([]);
    expect(platform.calls).toEqual([]);
  });

  it('no rules configured: every request is one hit', async () => {
    await handlerWith({ mappingRules: [] })(event({ httpMethod: 'DELETE' }));
    expect(platform.calls).toEqual([
      { op: 'authrep', credential: { kind: 'user_key', userKey: KEY }, usage: { hits: 1 } },
    ]);
  });

  it('usage is computed from the path the consumer called, not the resource template', async () => {
    const handle = handlerWith({
      mappingRules: [
        ...RULES,
        { method: 'GET', pattern: '/v1/words/special.json$', metric: 'hits', delta: 5 },
      ],
    });
    await handle(event({ path: '/prod/v1/words/special.json' }));
    expect(platform.calls[0]).toMatchObject({ usage: { get_word: 1, hits: 5 } });
  });
});

describe('first call (cache miss)', () => {
  it('authreps the mapped usage, stores the answer and allows exactly the method ARN', async () => {
    const result = await handlerWith()(event());
    expect(platform.calls).toEqual([
      { op: 'authrep', credential: { kind: 'user_key', userKey: KEY }, usage: { get_word: 1 } },
    ]);
    expect(result).toEqual({
      principalId: ID,
      policyDocument: {
        Version: '2012-10-17',
        Statement: [{ Action: 'execute-api:Invoke', Effect: 'Allow', Resource: ARN }],
      },
      context: { credentialId: ID, plan: 'Basic', metrics: 'get_word' },
    });
    expect(metrics.counts).toMatchObject({ CacheMiss: 1, PlatformCall: 1 });
    expect(metrics.published).toBe(1);
    expect(await store.hget(credentialKeys(SERVICE, ID).app, 'limit:hour:hits')).toBe(
      `${END - HOUR} ${END} 100 1`,
    );
    expect(await store.exists(credentialKeys(SERVICE, ID).pending)).toBe(0);
    expect(published()).toEqual([]);
  });

  it('gives the application id in app_id mode', async () => {
    const result = await handlerWith({ credentialMode: 'app_id' })(
      event({ headers: { app_id: 'app-1', app_key: 'secret-app-key' }, multiValueHeaders: null }),
    );
    expect(result.context).toMatchObject({ applicationId: 'app-1', plan: 'Basic' });
    expect(JSON.stringify(result)).not.toContain('secret-app-key');
    expect(await dumpRedis(store)).not.toContain('secret-app-key');
  });

  it('an invalid key: 401, a negative entry, and a second attempt makes no platform call', async () => {
    platform.authrepAnswer = () => invalidCredential();
    // Without the instance's memory of refusals, the second attempt reads the negative entry in Redis.
    const handle = handlerWith({ refusalMemoryMs: 0 });
    await expect(handle(event())).rejects.toThrow('Unauthorized');
    await expect(handle(event())).rejects.toThrow('Unauthorized');
    expect(platform.count('authrep')).toBe(1);
    expect(metrics.counts.NegativeCacheHit).toBe(1);
    expect(await cacheKeys()).toEqual([credentialKeys(SERVICE, ID).negative]);
  });

  it('a wrong app key is an invalid credential too (401)', async () => {
    platform.authrepAnswer = () => denied('application_key_invalid');
    const handle = handlerWith({ credentialMode: 'app_id' });
    const appEvent = event({ headers: { app_id: 'a', app_key: 'wrong' }, multiValueHeaders: null });
    await expect(handle(appEvent)).rejects.toThrow('Unauthorized');
    await expect(handle(appEvent)).rejects.toThrow('Unauthorized');
    expect(platform.count('authrep')).toBe(1);
  });

  it('a suspended application: Deny with its reason, then from the cache', async () => {
    platform.authrepAnswer = () => denied('application_not_active', [hourly('hits', 100, 1, END)]);
    const handle = handlerWith();
    for (let i = 0; i < 2; i++) {
      const result = await handle(event());
      expect(result.policyDocument.Statement[0]).toMatchObject({ Effect: 'Deny', Resource: ARN });
      expect(result.context).toMatchObject({ reason: 'application_not_active' });
    }
    expect(platform.count('authrep')).toBe(1);
  });

  it('limits exceeded at the platform: Deny, and later calls decide from the stored snapshot', async () => {
    platform.authrepAnswer = () => denied('limits_exceeded', [hourly('hits', 5, 5, END)]);
    const handle = handlerWith();
    expect((await handle(event())).context).toMatchObject({ reason: 'limits_exceeded', plan: 'Basic' });
    expect((await handle(event())).context).toMatchObject({ reason: 'limits_exceeded' });
    expect(platform.count('authrep')).toBe(1);
    clock = END;
    expect((await handle(event())).policyDocument.Statement[0].Effect).toBe('Allow');
    expect(platform.count('authrep')).toBe(1);
  });

  it('limits exceeded at the platform in soft mode: Allow, the usage kept pending and one message', async () => {
    platform.authrepAnswer = () => denied('limits_exceeded', [hourly('hits', 5, 5, END)]);
    const result = await handlerWith({ limitMode: 'soft' })(event());
    expect(result.policyDocument.Statement[0].Effect).toBe('Allow');
    expect(await usageIn(store, credentialKeys(SERVICE, ID).pending)).toEqual({ get_word: 1 });
    expect(published()).toHaveLength(1);
    expect(metrics.counts.SoftLimitExceeded).toBe(1);
  });

  it('soft mode over the limit with Redis refusing writes: Allow, and said loudly that the usage is not recorded', async () => {
    platform.authrepAnswer = () => denied('limits_exceeded', [hourly('hits', 5, 5, END)]);
    const readOnly = new Proxy(store, {
      get: (target, property, receiver) =>
        property === 'accessStore' || property === 'accessAdmit'
          ? () => Promise.reject(new Error("READONLY You can't write against a read only replica."))
          : Reflect.get(target, property, receiver),
    });
    const result = await handlerWith({ limitMode: 'soft' }, readOnly)(event());
    expect(result.policyDocument.Statement[0].Effect).toBe('Allow');
    expect(metrics.counts.UsageNotRecorded).toBe(1);
    expect(metrics.counts.AuthorizerError).toBeUndefined();
  });

  it('an answer that cannot be stored still answers the call', async () => {
    const readOnly = new Proxy(store, {
      get: (target, property, receiver) =>
        property === 'accessStore'
          ? () => Promise.reject(new Error("READONLY You can't write against a read only replica."))
          : Reflect.get(target, property, receiver),
    });
    const handle = handlerWith({}, readOnly);
    expect((await handle(event())).policyDocument.Statement[0].Effect).toBe('Allow');
    expect(metrics.counts.CacheWriteFailed).toBe(1);
  });
});

describe('cached calls (hot path)', () => {
  it('cost one Redis round trip, no platform call, and publish one message per window', async () => {
    const handle = handlerWith();
    await handle(event());
    redisCalls.length = 0;
    expect((await handle(event())).policyDocument.Statement[0].Effect).toBe('Allow');
    expect(redisCalls).toEqual(['accessCheck']);
    expect(platform.calls).toHaveLength(1);
    clock += 5_000;
    await handle(event());
    expect(published()).toHaveLength(1);
    expect(snsMock).toHaveReceivedCommandWith(PublishCommand, { TopicArn: TOPIC });
    expect(parseReportMessage(published()[0])).toEqual({ v: 1, serviceId: SERVICE, credentialId: ID });
    clock += 5_000;
    await handle(event());
    expect(published()).toHaveLength(2);
    expect(await usageIn(store, credentialKeys(SERVICE, ID).pending)).toEqual({ get_word: 3 });
    expect(metrics.counts).toMatchObject({ CacheHit: 3, ReportPublished: 2 });
  });

  it('window 0: one message per call', async () => {
    const handle = handlerWith({ reportWindowSeconds: 0 });
    for (let i = 0; i < 4; i++) await handle(event());
    expect(published()).toHaveLength(3);
  });

  it('hold the hard limit from the snapshot plus pending usage', async () => {
    platform.authrepAnswer = () => authorized([hourly('hits', 3, 1, END)]);
    const handle = handlerWith();
    const effects: string[] = [];
    for (let i = 0; i < 4; i++) {
      const result = await handle(event());
      effects.push(`${result.policyDocument.Statement[0].Effect}:${result.context?.reason ?? ''}`);
    }
    expect(effects).toEqual(['Allow:', 'Allow:', 'Allow:', 'Deny:limits_exceeded']);
    expect(platform.calls).toHaveLength(1);
  });

  it('soft limits: allow over the limit and count it', async () => {
    platform.authrepAnswer = () => authorized([hourly('hits', 1, 1, END)]);
    const handle = handlerWith({ limitMode: 'soft' });
    await handle(event());
    expect((await handle(event())).policyDocument.Statement[0].Effect).toBe('Allow');
    expect(metrics.counts.SoftLimitExceeded).toBe(1);
    expect(await usageIn(store, credentialKeys(SERVICE, ID).pending)).toEqual({ get_word: 1 });
  });

  it('a new period lets calls through again (injected clock)', async () => {
    platform.authrepAnswer = () => authorized([hourly('hits', 1, 1, END)]);
    const handle = handlerWith();
    await handle(event());
    expect((await handle(event())).context?.reason).toBe('limits_exceeded');
    clock = END + 1;
    expect((await handle(event())).policyDocument.Statement[0].Effect).toBe('Allow');
  });

  it('a new endpoint of a known credential is decided from its snapshot, with no platform call', async () => {
    const handle = handlerWith();
    await handle(event());
    expect((await handle(event({ httpMethod: 'POST' }))).policyDocument.Statement[0].Effect).toBe('Allow');
    expect(platform.calls.map((call) => call.op)).toEqual(['authrep']);
  });

  it('SNS publish failed: the call is answered, the usage stays pending, a metric and a log line say so', async () => {
    snsMock.on(PublishCommand).rejects(new Error('SNS throttled'));
    const handle = handlerWith();
    await handle(event());
    expect((await handle(event())).policyDocument.Statement[0].Effect).toBe('Allow');
    expect(metrics.counts.ReportPublishFailed).toBe(1);
    expect(logger.lines).toContainEqual(
      expect.objectContaining({
        level: 'warn',
        attributes: expect.objectContaining({ error: 'SNS throttled' }),
      }),
    );
    expect(await usageIn(store, credentialKeys(SERVICE, ID).pending)).toEqual({ get_word: 1 });
    expect(await store.exists(credentialKeys(SERVICE, ID).since)).toBe(1);
  });

  it('never store, log, publish or answer the raw key', async () => {
    const handle = handlerWith();
    for (let i = 0; i < 3; i++) await handle(event());
    const dump = await dumpRedis(store);
    expect(dump).toContain(ID);
    expect(dump).not.toContain(KEY);
    expect(platform.calls).toHaveLength(1);
  });
});

describe('Redis unavailable or not configured', () => {
  it('Redis unreachable: every call is an authrep and is answered', async () => {
    const unreachable = createRedisClient({ host: '127.0.0.1', port: 1, tls: false }, { logger });
    try {
      const handle = handlerWith({}, unreachable);
      for (let i = 0; i < 2; i++)
        expect((await handle(event())).policyDocument.Statement[0].Effect).toBe('Allow');
      expect(platform.count('authrep')).toBe(2);
      expect(metrics.counts.CacheUnavailable).toBe(2);
      // No script was sent: the platform's authrep is the only count of each call.
      expect(metrics.counts.CacheAnswerLost).toBeUndefined();
    } finally {
      unreachable.disconnect();
    }
  });

  it('no Redis configured: authrep per call, no message', async () => {
    const handle = handlerWith({ redis: undefined, topicArn: undefined }, null);
    await handle(event());
    await handle(event());
    expect(platform.count('authrep')).toBe(2);
    expect(published()).toEqual([]);
  });

  it('no Redis, soft limits exceeded: allowed and reported at once', async () => {
    platform.authrepAnswer = () => denied('limits_exceeded', [hourly('hits', 1, 1, END)]);
    const handle = handlerWith({ redis: undefined, limitMode: 'soft' }, null);
    expect((await handle(event())).policyDocument.Statement[0].Effect).toBe('Allow');
    expect(platform.reported()).toEqual({ get_word: 1 });
  });

  it('Redis without a topic is refused at start-up, naming the setting', () => {
    expect(() => handlerWith({ topicArn: undefined })).toThrow(/topicArn/);
  });
});

describe('failure modes (platform unavailable)', () => {
  async function seedSnapshot(
    handle: ReturnType<typeof handlerWith>,
    answer = authorized([hourly('hits', 100, 1, END)]),
  ) {
    platform.authrepAnswer = () => answer;
    await handle(event());
    platform.authrepAnswer = () => UNAVAILABLE;
  }

  it('strict: an unknown credential is refused with a Deny, not a 5xx', async () => {
    platform.authrepAnswer = () => UNAVAILABLE;
    const result = await handlerWith()(event());
    expect(result.policyDocument.Statement[0].Effect).toBe('Deny');
    expect(result.context?.reason).toBe('platform_unavailable');
    expect(metrics.counts.PlatformUnavailable).toBe(1);
  });

  it('strict: a known credential needs no platform, even on a new endpoint', async () => {
    const handle = handlerWith();
    await seedSnapshot(handle);
    expect((await handle(event({ httpMethod: 'POST' }))).policyDocument.Statement[0].Effect).toBe('Allow');
    expect(metrics.counts.PlatformUnavailable).toBeUndefined();
  });

  it('resilient: the last cached answer for the credential keeps applying', async () => {
    const handle = handlerWith({ failureMode: 'resilient' });
    await seedSnapshot(handle);
    const result = await handle(event({ httpMethod: 'POST' }));
    expect(result.policyDocument.Statement[0].Effect).toBe('Allow');
    expect(await usageIn(store, credentialKeys(SERVICE, ID).pending)).toEqual({ post_word: 1 });
    expect(published()).toHaveLength(1);
  });

  it('resilient: a cached limit still denies', async () => {
    const handle = handlerWith({ failureMode: 'resilient' });
    await seedSnapshot(handle, authorized([hourly('hits', 1, 1, END)]));
    expect((await handle(event({ httpMethod: 'POST' }))).context?.reason).toBe('limits_exceeded');
  });

  it('resilient: a cached denial keeps applying after its negative entry expired', async () => {
    const handle = handlerWith({ failureMode: 'resilient' });
    await seedSnapshot(handle, denied('application_not_active', [hourly('hits', 100, 1, END)]));
    await store.del(credentialKeys(SERVICE, ID).negative);
    expect((await handle(event())).context?.reason).toBe('application_not_active');
  });

  it('resilient: an unknown credential is refused', async () => {
    platform.authrepAnswer = () => UNAVAILABLE;
    expect((await handlerWith({ failureMode: 'resilient' })(event())).context?.reason).toBe(
      'platform_unavailable',
    );
  });

  it('allow: an unknown credential is let through with its usage kept pending, sealed', async () => {
    platform.authrepAnswer = () => UNAVAILABLE;
    const handle = handlerWith({ failureMode: 'allow' });
    expect((await handle(event())).policyDocument.Statement[0].Effect).toBe('Allow');
    expect((await handle(event())).policyDocument.Statement[0].Effect).toBe('Allow');
    expect(platform.count('authrep')).toBe(2);
    expect(await usageIn(store, credentialKeys(SERVICE, ID).pending)).toEqual({ get_word: 2 });
    expect(await store.hget(credentialKeys(SERVICE, ID).app, 'cred')).toMatch(/^v1\./);
    expect(published()).toHaveLength(1);
  });

  it('allow: an invalid credential cached before stays refused', async () => {
    platform.authrepAnswer = () => invalidCredential();
    const handle = handlerWith({ failureMode: 'allow' });
    await expect(handle(event())).rejects.toThrow('Unauthorized');
    platform.authrepAnswer = () => UNAVAILABLE;
    await expect(handle(event())).rejects.toThrow('Unauthorized');
  });

  it('allow with Redis down too: let through, and said loudly that the usage is not recorded', async () => {
    platform.authrepAnswer = () => UNAVAILABLE;
    const unreachable = createRedisClient({ host: '127.0.0.1', port: 1, tls: false });
    try {
      const result = await handlerWith({ failureMode: 'allow' }, unreachable)(event());
      expect(result.policyDocument.Statement[0].Effect).toBe('Allow');
      expect(metrics.counts.UsageNotRecorded).toBe(1);
      expect(logger.lines.some((line) => line.level === 'error')).toBe(true);
    } finally {
      unreachable.disconnect();
    }
  });

  it('a misconfigured platform answer is refused, logged as an error, and not cached', async () => {
    platform.authrepAnswer = () => MISCONFIGURED;
    const handle = handlerWith({ failureMode: 'allow' });
    expect((await handle(event())).context?.reason).toBe('platform_misconfigured');
    expect((await handle(event())).context?.reason).toBe('platform_misconfigured');
    expect(platform.count('authrep')).toBe(2);
    expect(logger.lines).toContainEqual(
      expect.objectContaining({
        level: 'error',
        attributes: expect.objectContaining({ code: 'provider_key_invalid' }),
      }),
    );
    expect(await cacheKeys()).toEqual([]);
  });
  it("the platform's own words reach the Powertools log line (no reserved attribute drops them)", async () => {
    platform.authrepAnswer = () => MISCONFIGURED;
    const output = captureProcessOutput();
    try {
      await createAuthorizerHandler({
        config: accessConfig(),
        redis: countedRedis(),
        sns: new SNSClient({ region: 'us-east-1' }),
        platform,
        now: () => clock,
        logger: createLogger('authorizer-test'),
        metrics,
      })(event());
    } finally {
      output.restore();
    }
    const logged = output.text();
    expect(logged).toContain(MISCONFIGURED.message.replace(/"/g, '\\"'));
    expect(logged).not.toContain('reserved key');
  });
});

describe('unexpected failures', () => {
  it('a platform port that throws gives a Deny with reason authorizer_error, not a crash', async () => {
    platform.authrepAnswer = () => {
      throw new Error('bug');
    };
    const result = await handlerWith()(event());
    expect(result.policyDocument.Statement).toEqual([
      { Action: 'execute-api:Invoke', Effect: 'Deny', Resource: ARN },
    ]);
    expect(result.context).toEqual({ reason: AUTHORIZER_ERROR });
    expect(metrics.counts.AuthorizerError).toBe(1);
  });
});
