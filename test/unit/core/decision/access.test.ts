/**
 * The authorizer's core: its decisions (AccessDecision) and what it does with its ports. The handler
 * tests (test/unit/handlers/authorizer.test.ts) map the decisions to API Gateway's contract.
 */
import type { APIGatewayRequestAuthorizerEvent } from 'aws-lambda';
import type Redis from 'ioredis';
import RedisMock from 'ioredis-mock';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { credentialKeys, serviceKeys } from '../../../../core/budget/keys';
import { credentialIdOf } from '../../../../core/credentials';
import { createAccessAuthorizer } from '../../../../core/decision/access';
import type { AccessDecision, DenyReason } from '../../../../core/decision/decision';
import { firstCallCounterKey } from '../../../../core/decision/first-call-gate';
import { RECHECK_GRACE_MS } from '../../../../core/decision/refusal-memory';
import type { AuthOutcome } from '../../../../core/platform/types';
import { type ReportMessage, reportMessage } from '../../../../core/reporting/message';
import type { AccessConfigInput } from '../../../../core/settings/config';
import { describeOnTopologies } from '../../../support/redis-topology';
import { accessConfig, END, gatewayRequest as event, ID, KEY, SERVICE, T0 } from '../../handlers/fixtures';
import {
  authorized,
  CapturingLogger,
  CapturingMetrics,
  countingRedis,
  denied,
  FakePlatform,
  hourly,
  invalidCredential,
  MISCONFIGURED,
  UNAVAILABLE,
  usageIn,
} from '../fakes';

const HOUR = 3_600_000;
/** strictTrustSeconds of the failure-mode tests, in ms. */
const TRUST_MS = 60_000;

let redis: Redis;
let platform: FakePlatform;
let logger: CapturingLogger;
let metrics: CapturingMetrics;
let messages: ReportMessage[];
let publishFails: boolean;
let clock: number;

function authorizer(overrides: Partial<AccessConfigInput> = {}) {
  return createAccessAuthorizer({
    config: accessConfig(overrides),
    redis,
    publisher: {
      async publish(message) {
        if (publishFails) throw new Error('SNS throttled');
        messages.push(message);
      },
    },
    platform,
    now: () => clock,
    logger,
    metrics,
  });
}

const POST = { httpMethod: 'POST' } as const satisfies Partial<APIGatewayRequestAuthorizerEvent>;

/** The usage pending report, summed per metric over its period buckets. */
const pendingUsage = () => usageIn(redis, credentialKeys(SERVICE, ID).pending);

/** A decision with these fields; the limit it names, if any, is asserted apart. */
function decided(fields: Partial<Extract<AccessDecision, { effect: 'allow' | 'deny' }>>): AccessDecision {
  return expect.objectContaining({ credentialId: ID, ...fields });
}

function allowed(plan = 'Basic', metricNames = 'get_word'): AccessDecision {
  return decided({ effect: 'allow', plan, metrics: metricNames });
}

function refused(reason: DenyReason, plan = '', metricNames = 'get_word'): AccessDecision {
  return decided({ effect: 'deny', reason, plan, metrics: metricNames });
}

beforeEach(async () => {
  redis = new RedisMock() as unknown as Redis;
  await redis.flushall();
  platform = new FakePlatform();
  platform.authrepAnswer = () => authorized([hourly('hits', 100, 1, END)]);
  logger = new CapturingLogger();
  metrics = new CapturingMetrics();
  messages = [];
  publishFails = false;
  clock = T0;
});

afterEach(() => {
  expect(JSON.stringify([logger.lines, messages])).not.toContain(KEY);
});

describe('decisions before any port', () => {
  it('a malformed credential is unauthorized, with no platform, Redis or publisher call', async () => {
    const decide = authorizer();
    const decision = await decide.decide(event({ headers: {}, multiValueHeaders: {} }));
    expect(decision).toEqual({ effect: 'unauthorized' });
    expect(platform.calls).toEqual([]);
    expect(await redis.keys('*')).toEqual([]);
  });

  it('a request no mapping rule matches is denied, naming no metric', async () => {
    expect(await authorizer().decide(event({ httpMethod: 'DELETE' }))).toEqual(
      refused('no_mapping_rule', '', ''),
    );
    expect(platform.calls).toEqual([]);
  });
});

describe("the platform's answer, on the first call and then from the cache", () => {
  const cases: [string, AuthOutcome, AccessDecision][] = [
    ['authorized', authorized([hourly('hits', 100, 1, END)]), allowed()],
    [
      'over its limits',
      denied('limits_exceeded', [hourly('hits', 5, 5, END)]),
      refused('limits_exceeded', 'Basic'),
    ],
    ['suspended', denied('application_not_active'), refused('application_not_active')],
    ['an invalid key', invalidCredential(), { effect: 'unauthorized' }],
  ];

  it.each(cases)('%s', async (_, answer, decision) => {
    platform.authrepAnswer = () => answer;
    const decide = authorizer();
    expect(await decide.decide(event())).toEqual(decision);
    expect(await decide.decide(event())).toEqual(decision);
    expect(platform.calls).toEqual([
      { op: 'authrep', credential: { kind: 'user_key', userKey: KEY }, usage: { get_word: 1 } },
    ]);
  });

  it('our configuration refused: denied as platform_misconfigured each time, nothing cached', async () => {
    platform.authrepAnswer = () => MISCONFIGURED;
    const decide = authorizer();
    expect(await decide.decide(event())).toEqual(refused('platform_misconfigured'));
    expect(await decide.decide(event())).toEqual(refused('platform_misconfigured'));
    expect(platform.count('authrep')).toBe(2);
    // Only the count of platform calls for credentials never seen, which lasts two seconds.
    expect(await redis.keys('*')).toEqual([firstCallCounterKey(serviceKeys(SERVICE), clock)]);
  });

  it('stores the answer; the usage the first call reported is not pending', async () => {
    await authorizer().decide(event());
    const keys = credentialKeys(SERVICE, ID);
    expect(await redis.hget(keys.app, 'limit:hour:hits')).toBe(`${END - HOUR} ${END} 100 1`);
    expect(await redis.exists(keys.pending)).toBe(0);
  });

  it('decides every endpoint of a budget it has a snapshot of, without the platform', async () => {
    const decide = authorizer();
    await decide.decide(event());
    expect(await decide.decide(event(POST))).toEqual(allowed('Basic', 'post_word'));
    expect(platform.calls.map((call) => call.op)).toEqual(['authrep']);
  });

  it('names every metric of the call, and the application in app_id mode', async () => {
    const decision = await authorizer({
      credentialMode: 'app_id',
      mappingRules: [
        { method: 'GET', pattern: '/v1/words/{word}.json', metric: 'get_word', delta: 1 },
        { method: 'GET', pattern: '/', metric: 'hits', delta: 1 },
      ],
    }).decide(event({ headers: { app_id: 'app-1', app_key: 'k-1' }, multiValueHeaders: null }));
    expect(decision).toMatchObject({ effect: 'allow', metrics: 'get_word,hits', applicationId: 'app-1' });
  });
});

describe('limits the decisions name', () => {
  it('an allowed call carries its most constrained limit, a refused one the limit it hit', async () => {
    platform.authrepAnswer = () => authorized([hourly('hits', 3, 1, END)]);
    const decide = authorizer();
    // The first call's authrep counted it at the platform: nothing recorded here to take back.
    expect(await decide.decide(event())).not.toHaveProperty('recorded');
    const limit = { metric: 'hits', period: 'hour', max: 3, resetAt: END };
    const fields = { credentialId: ID, plan: 'Basic', metrics: 'get_word' };
    expect(await decide.decide(event())).toEqual({
      effect: 'allow',
      ...fields,
      limit: { ...limit, remaining: 1 },
      recorded: { bucket: END - 3_600_000, usage: { get_word: 1 } },
    });
    expect(await decide.decide(event())).toMatchObject({ limit: { remaining: 0 } });
    expect(await decide.decide(event())).toEqual({
      effect: 'deny',
      reason: 'limits_exceeded',
      ...fields,
      limit,
      // The consumer's Retry-After: until the hour ends.
      retryAfterSeconds: Math.ceil((END - clock) / 1000),
    });
  });
});

describe('a first call over its limits', () => {
  it("names the exceeded limit the platform reported, and so when it passes (the consumer's Retry-After)", async () => {
    platform.authrepAnswer = () => denied('limits_exceeded', [hourly('hits', 5, 5, END)]);
    expect(await authorizer().decide(event())).toMatchObject({
      effect: 'deny',
      reason: 'limits_exceeded',
      limit: { metric: 'hits', period: 'hour', max: 5, resetAt: END },
      retryAfterSeconds: Math.ceil((END - T0) / 1000),
    });
  });
});

describe('throttles (docs/throttling.md)', () => {
  it("counts the first call in its plan's throttle, and refuses past the burst with rate_limited, counting nothing", async () => {
    platform.authrepAnswer = () => authorized([hourly('hits', 100, 0, END)]);
    const decide = authorizer({ throttles: { Basic: { rate: 0.001, burst: 2 } } });
    expect(await decide.decide(event())).toMatchObject({ effect: 'allow' });
    expect(await decide.decide(event())).toMatchObject({
      effect: 'allow',
      throttle: { rate: 0.001, burst: 2, remaining: 0 },
    });
    const pending = await pendingUsage();
    expect(await decide.decide(event())).toEqual({
      effect: 'deny',
      reason: 'rate_limited',
      credentialId: ID,
      plan: 'Basic',
      metrics: 'get_word',
      throttle: { rate: 0.001, burst: 2, retryInMs: expect.any(Number) },
      retryAfterSeconds: expect.any(Number),
    });
    expect(await pendingUsage()).toEqual(pending);
    expect(metrics.counts.RateLimited).toBe(1);
  });
});

describe("refusals kept in the instance's memory", () => {
  function retryInMsOf(decision: AccessDecision): number {
    if (decision.effect === 'unauthorized' || decision.throttle === undefined) return Number.NaN;
    return 'retryInMs' in decision.throttle ? decision.throttle.retryInMs : Number.NaN;
  }

  /** The Redis client calls the authorizer makes, counted from here on. */
  function countRedisCalls(): { readonly count: () => number } {
    const counted = countingRedis(redis);
    redis = counted.redis;
    return { count: () => counted.calls.length };
  }

  /** An authorizer with the memory on, whose application has spent its one call of the hour and was refused. */
  async function refusedOverItsLimit(): Promise<ReturnType<typeof authorizer>> {
    platform.authrepAnswer = () => authorized([hourly('hits', 1, 1, END)]);
    const decide = authorizer({ refusalMemoryMs: 1000 });
    await decide.decide(event());
    expect(await decide.decide(event())).toEqual(refused('limits_exceeded', 'Basic'));
    return decide;
  }

  /** From here on the authorizer's Redis calls can be made to fail, as a command that timed out does. */
  function redisThatTimesOut(): { readonly fail: () => void } {
    let failing = false;
    const target = redis;
    redis = new Proxy(target, {
      get(client, property, receiver) {
        const value = Reflect.get(client, property, receiver);
        if (typeof value !== 'function') return value;
        return (...args: unknown[]) =>
          failing ? Promise.reject(new Error('Command timed out')) : value.apply(client, args);
      },
    });
    return { fail: () => (failing = true) };
  }

  it('keep a throttle refusal whose re-check cannot reach Redis, instead of asking the platform', async () => {
    const redisCalls = redisThatTimesOut();
    platform.authrepAnswer = () => authorized([hourly('hits', 100, 0, END)]);
    const decide = authorizer({ refusalMemoryMs: 1000, throttles: { Basic: { rate: 0.001, burst: 1 } } });
    expect(await decide.decide(event())).toMatchObject({ effect: 'allow' });
    expect(await decide.decide(event())).toMatchObject({ effect: 'deny', reason: 'rate_limited' });
    const platformCalls = platform.calls.length;
    clock += 1000;
    redisCalls.fail();
    // The platform knows no throttle: it would let the call through.
    expect(await decide.decide(event())).toMatchObject({ effect: 'deny', reason: 'rate_limited' });
    expect(platform.calls.length).toBe(platformCalls);
  });

  it('ask the platform, which knows a raised limit, when a limit refusal cannot be re-checked in Redis', async () => {
    const redisCalls = redisThatTimesOut();
    const decide = await refusedOverItsLimit();
    platform.authrepAnswer = () => authorized([hourly('hits', 100, 2, END)]);
    clock += 1000;
    redisCalls.fail();
    expect(await decide.decide(event())).toMatchObject({ effect: 'allow' });
  });

  it('refuse a call over a limit again without Redis until the bound, then ask Redis', async () => {
    const sent = countRedisCalls();
    const decide = await refusedOverItsLimit();
    const before = sent.count();
    clock += 999;
    expect(await decide.decide(event())).toEqual(refused('limits_exceeded', 'Basic'));
    expect(sent.count()).toBe(before);
    expect(metrics.counts.RefusedFromMemory).toBe(1);
    clock += 1;
    expect(await decide.decide(event())).toEqual(refused('limits_exceeded', 'Basic'));
    expect(sent.count()).toBeGreaterThan(before);
  });

  it('past the bound, send one of the calls that come at once to Redis, and refuse the others from memory', async () => {
    const sent = countRedisCalls();
    const decide = await refusedOverItsLimit();
    clock += 1000;
    const before = sent.count();
    const calls = await Promise.all([decide.decide(event()), decide.decide(event()), decide.decide(event())]);
    expect(calls).toEqual(Array(3).fill(refused('limits_exceeded', 'Basic')));
    expect(metrics.counts.RefusedFromMemory).toBe(2);
    const oneCheck = sent.count() - before;
    expect(oneCheck).toBeGreaterThan(0);
    // Refused again: the re-check's answer is kept for another bound, then one call re-checks again.
    clock += RECHECK_GRACE_MS;
    await decide.decide(event());
    expect(sent.count() - before).toBe(oneCheck);
    clock += 1000 - RECHECK_GRACE_MS;
    await Promise.all([decide.decide(event()), decide.decide(event())]);
    expect(sent.count() - before).toBe(2 * oneCheck);
  });

  it('let a call through once its re-check is allowed: the calls refused while it ran are not refused after', async () => {
    const decide = await refusedOverItsLimit();
    // The limit was raised: the budget is asked of the platform again, which allows.
    await redis.del(credentialKeys(SERVICE, ID).app);
    platform.authrepAnswer = () => authorized([hourly('hits', 100, 2, END)]);
    clock += 1000;
    const [recheck, during] = await Promise.all([decide.decide(event()), decide.decide(event())]);
    expect(recheck).toMatchObject({ effect: 'allow' });
    expect(during).toEqual(refused('limits_exceeded', 'Basic'));
    expect(await decide.decide(event())).toMatchObject({ effect: 'allow' });
  });

  it('end a limit refusal when its re-check is refused for another reason: the calls after it get that answer', async () => {
    const decide = await refusedOverItsLimit();
    // The application was suspended meanwhile: the platform is asked again, and refuses it.
    await redis.del(credentialKeys(SERVICE, ID).app);
    platform.authrepAnswer = () => denied('application_not_active');
    clock += 1000;
    const [recheck, during] = await Promise.all([decide.decide(event()), decide.decide(event())]);
    expect(recheck).toEqual(refused('application_not_active'));
    expect(during).toEqual(refused('limits_exceeded', 'Basic'));
    expect(await decide.decide(event())).toEqual(refused('application_not_active'));
  });

  it('refuse a throttled call again without Redis until the bound, saying how long is left, then ask Redis', async () => {
    platform.authrepAnswer = () => authorized([hourly('hits', 100, 0, END)]);
    const sent = countRedisCalls();
    // One call at once, then one per 1,000 s: the GCRA's wait is far beyond the memory's bound.
    const decide = authorizer({ refusalMemoryMs: 1000, throttles: { Basic: { rate: 0.001, burst: 1 } } });
    expect(await decide.decide(event())).toMatchObject({ effect: 'allow' });
    const first = await decide.decide(event());
    expect(first).toMatchObject({ effect: 'deny', reason: 'rate_limited' });
    const before = sent.count();
    clock += 999;
    const remembered = await decide.decide(event());
    expect(remembered).toEqual({
      ...first,
      throttle: { rate: 0.001, burst: 1, retryInMs: expect.any(Number) },
      retryAfterSeconds: Math.ceil(retryInMsOf(remembered) / 1000),
    });
    expect(retryInMsOf(remembered)).toBe(retryInMsOf(first) - 999);
    expect(sent.count()).toBe(before);
    expect(metrics.counts.RefusedFromMemory).toBe(1);
    expect(metrics.counts.RateLimited).toBe(2);
    clock += 1;
    expect(await decide.decide(event())).toMatchObject({ effect: 'deny', reason: 'rate_limited' });
    expect(sent.count()).toBeGreaterThan(before);
  });

  it('refuse a credential the platform refused (401) again without Redis or the platform', async () => {
    platform.authrepAnswer = () => invalidCredential('user_key_invalid');
    const sent = countRedisCalls();
    const decide = authorizer({ refusalMemoryMs: 1000 });
    expect(await decide.decide(event())).toEqual({ effect: 'unauthorized' });
    const before = { redis: sent.count(), platform: platform.calls.length };
    expect(await decide.decide(event())).toEqual({ effect: 'unauthorized' });
    expect(sent.count()).toBe(before.redis);
    expect(platform.calls.length).toBe(before.platform);
  });

  it('never allow: with the memory off, every refusal asks Redis', async () => {
    platform.authrepAnswer = () => authorized([hourly('hits', 1, 1, END)]);
    const sent = countRedisCalls();
    const decide = authorizer({ refusalMemoryMs: 0 });
    await decide.decide(event());
    await decide.decide(event());
    const before = sent.count();
    expect(await decide.decide(event())).toEqual(refused('limits_exceeded', 'Basic'));
    expect(sent.count()).toBeGreaterThan(before);
  });
});

describe('platform calls for credentials never seen', () => {
  const keyed = (key: string) => event({ headers: { apikey: key }, multiValueHeaders: null });

  it('are bounded per second: past the bound a first call is refused at once, a known key never', async () => {
    const decide = authorizer({ unseenCredentialCallsPerSecond: 2 });
    expect(await decide.decide(event())).toEqual(allowed());
    expect(await decide.decide(keyed('made-up-1'))).toMatchObject({ effect: 'allow' });
    expect(await decide.decide(keyed('made-up-2'))).toMatchObject({
      effect: 'deny',
      reason: 'platform_busy',
    });
    expect(platform.count('authrep')).toBe(2);
    expect(metrics.counts.PlatformBusy).toBe(1);
    expect(await decide.decide(event())).toEqual(allowed());
    clock += 1000;
    expect(await decide.decide(keyed('made-up-2'))).toMatchObject({ effect: 'allow' });
    expect(platform.count('authrep')).toBe(3);
  });

  it('never counts a credential seen before, even when its snapshot is gone', async () => {
    const decide = authorizer({ unseenCredentialCallsPerSecond: 1 });
    expect(await decide.decide(event())).toEqual(allowed());
    await redis.del(credentialKeys(SERVICE, ID).app);
    clock += 1000;
    // The second's bound is spent by a made-up key; the known one is asked about all the same.
    await decide.decide(keyed('made-up-1'));
    expect(await decide.decide(event())).toEqual(allowed());
    expect(platform.count('authrep')).toBe(3);
  });

  it('cost a first call three Redis round trips: the check (with the seen mark), the gate, the store (marking it)', async () => {
    const counted = countingRedis(redis);
    redis = counted.redis;
    const decide = authorizer({ unseenCredentialCallsPerSecond: 1 });
    expect(await decide.decide(event())).toEqual(allowed());
    expect(counted.calls.filter((call) => call !== 'defineCommand')).toEqual([
      'accessCheck',
      'eval',
      'accessStore',
    ]);
    // Its snapshot gone, the key is still known: the check says so, and the gate is not asked.
    await redis.del(credentialKeys(SERVICE, ID).app);
    counted.calls.length = 0;
    expect(await decide.decide(event())).toEqual(allowed());
    expect(counted.calls).toEqual(['accessCheck', 'accessStore']);
  });
});

// A real redis-server: the flood is 1,290 decisions, each a script run, too slow on the in-memory stand-in.
describeOnTopologies(['redis-server'], (testRedis) => {
  const keyed = (key: string) => event({ headers: { apikey: key }, multiValueHeaders: null });

  beforeEach(async () => {
    await testRedis().flushAll();
    redis = (await testRedis().client()) as unknown as Redis;
  });

  afterEach(() => {
    redis.disconnect();
  });

  it('under a flood of made-up keys from one address, new customers from other addresses still get the platform', async () => {
    // The flood: 250 made-up keys a second from one address against the default bound of 20,
    // and 8 legitimate never-seen keys a second from other addresses, for 5 seconds.
    const legitimate = new Set(Array.from({ length: 40 }, (_, i) => `customer-${i}`));
    platform.authrepAnswer = (credential) =>
      credential.kind === 'user_key' && legitimate.has(credential.userKey)
        ? authorized([hourly('hits', 100, 1, END)])
        : invalidCredential('user_key_invalid');
    const decide = authorizer({ unseenCredentialCallsPerSecond: 20 });
    const decidedByPlatform: string[] = [];
    for (let second = 0; second < 5; second++) {
      clock = T0 + second * 1000;
      for (let n = 0; n < 250; n++) {
        await decide.decide({ ...keyed(`made-up-${second}-${n}`), sourceAddress: '198.51.100.7' });
        if (n % 30 === 29 && n < 240) {
          const customer = `customer-${second * 8 + (n - 29) / 30}`;
          const decision = await decide.decide({ ...keyed(customer), sourceAddress: `203.0.113.${n}` });
          if (decision.effect === 'allow') decidedByPlatform.push(customer);
        }
      }
    }
    expect(decidedByPlatform.length).toBeGreaterThanOrEqual(38);
    // The flood reached the platform at most its address's share a second.
    const floodCalls = platform.calls.filter(
      (call) =>
        'credential' in call &&
        call.credential.kind === 'user_key' &&
        !legitimate.has(call.credential.userKey),
    );
    expect(floodCalls.length).toBeLessThanOrEqual(5 * 2);
  });
});

describe('the counts per platform metric (the dashboard)', () => {
  const twoMetrics = {
    mappingRules: [
      { method: 'GET', pattern: '/v1/words/{word}.json', metric: 'get_word', delta: 1 },
      { method: 'GET', pattern: '/', metric: 'hits', delta: 1 },
    ],
  };

  it('counts Allowed, then Denied at the limit, once per metric the call maps to', async () => {
    platform.authrepAnswer = () => authorized([hourly('hits', 2, 0, END)]);
    const decide = authorizer(twoMetrics);
    await decide.decide(event());
    await decide.decide(event());
    expect(await decide.decide(event())).toMatchObject({ effect: 'deny', reason: 'limits_exceeded' });
    expect(metrics.perMetric).toEqual({
      'Allowed/get_word': 2,
      'Allowed/hits': 2,
      'Denied/get_word': 1,
      'Denied/hits': 1,
    });
  });

  it('counts a credential the platform does not know as Denied; nothing per metric without a metric', async () => {
    platform.authrepAnswer = () => invalidCredential();
    const decide = authorizer();
    expect(await decide.decide(event())).toEqual({ effect: 'unauthorized' });
    await decide.decide(event({ httpMethod: 'DELETE' }));
    await decide.decide(event({ headers: {}, multiValueHeaders: {} }));
    expect(metrics.perMetric).toEqual({ 'Denied/get_word': 1 });
  });

  it('never uses the credential or its id as a platform metric', async () => {
    const decide = authorizer();
    await decide.decide(event());
    await decide.decide(event());
    expect(JSON.stringify(metrics.perMetric)).not.toContain(KEY);
    expect(JSON.stringify(metrics.perMetric)).not.toContain(ID);
  });
});

describe('the report publisher', () => {
  it('gets one message per report window, naming the credential by its id', async () => {
    const decide = authorizer();
    await decide.decide(event());
    for (let i = 0; i < 3; i++) expect(await decide.decide(event())).toEqual(allowed());
    expect(messages).toEqual([reportMessage(SERVICE, ID)]);
    clock += 10_000;
    await decide.decide(event());
    expect(messages).toHaveLength(2);
  });

  it('failing: the call is allowed all the same and its usage stays pending for the sweep', async () => {
    const decide = authorizer();
    await decide.decide(event());
    publishFails = true;
    expect(await decide.decide(event())).toEqual(allowed());
    expect(metrics.counts.ReportPublishFailed).toBe(1);
    expect(await pendingUsage()).toEqual({ get_word: 1 });
  });
});

describe('failure modes, the platform unavailable', () => {
  type Situation =
    | 'unknown credential'
    | 'known'
    | 'known at its limit'
    | 'known, unconfirmed past the strict bound'
    | 'known at its limit, unconfirmed past the strict bound';
  const known = authorized([hourly('hits', 100, 1, END)]);
  const atItsLimit = authorized([hourly('hits', 1, 1, END)]);
  /** The platform's answer before the outage, and how long before the call it confirmed it. */
  const situations: Record<Situation, { answer?: AuthOutcome; confirmedAgoMs: number }> = {
    'unknown credential': { confirmedAgoMs: 0 },
    known: { answer: known, confirmedAgoMs: TRUST_MS },
    'known at its limit': { answer: atItsLimit, confirmedAgoMs: 0 },
    'known, unconfirmed past the strict bound': { answer: known, confirmedAgoMs: TRUST_MS + 1 },
    'known at its limit, unconfirmed past the strict bound': { answer: atItsLimit, confirmedAgoMs: HOUR / 2 },
  };
  const unavailable = refused('platform_unavailable', '', 'post_word');
  const limited = refused('limits_exceeded', 'Basic', 'post_word');
  const table: [AccessConfigInput['failureMode'], Situation, AccessDecision][] = [
    ['strict', 'unknown credential', unavailable],
    ['strict', 'known', allowed('Basic', 'post_word')],
    ['strict', 'known at its limit', limited],
    ['strict', 'known, unconfirmed past the strict bound', unavailable],
    ['strict', 'known at its limit, unconfirmed past the strict bound', limited],
    ['resilient', 'unknown credential', unavailable],
    ['resilient', 'known', allowed('Basic', 'post_word')],
    ['resilient', 'known at its limit', limited],
    ['resilient', 'known, unconfirmed past the strict bound', allowed('Basic', 'post_word')],
    ['resilient', 'known at its limit, unconfirmed past the strict bound', limited],
    ['allow', 'unknown credential', allowed('', 'post_word')],
    ['allow', 'known', allowed('Basic', 'post_word')],
    ['allow', 'known at its limit', limited],
    ['allow', 'known, unconfirmed past the strict bound', allowed('Basic', 'post_word')],
    ['allow', 'known at its limit, unconfirmed past the strict bound', limited],
  ];

  it.each(table)('%s, %s', async (failureMode, situation, decision) => {
    const decide = authorizer({ failureMode, strictTrustSeconds: TRUST_MS / 1000 });
    const { answer, confirmedAgoMs } = situations[situation];
    if (answer) {
      platform.authrepAnswer = () => answer;
      await decide.decide(event());
    }
    clock += confirmedAgoMs;
    platform.authrepAnswer = () => UNAVAILABLE;
    platform.authorizeAnswer = () => UNAVAILABLE;
    const made = await decide.decide(event(POST));
    expect(made).toEqual(decision);
    // A refused call keeps no usage: strict gives back what the script recorded before it asked.
    expect(await pendingUsage()).toEqual(made.effect === 'allow' ? { post_word: 1 } : {});
    // An allowed call's usage, or a known budget's refusal (a refresh), opens the report window.
    expect(messages).toHaveLength(made.effect === 'allow' || answer ? 1 : 0);
  });
});

describe('strict, a cached answer older than its bound', () => {
  const strict = () => authorizer({ failureMode: 'strict', strictTrustSeconds: TRUST_MS / 1000 });

  it('is confirmed with one authorize (which records nothing), then decides from the cache again', async () => {
    const decide = strict();
    await decide.decide(event());
    clock += TRUST_MS + 1;
    platform.authorizeAnswer = () => authorized([hourly('hits', 100, 1, END)]);
    expect(await decide.decide(event())).toEqual(allowed());
    expect(await decide.decide(event())).toEqual(allowed());
    expect(platform.calls.map((call) => call.op)).toEqual(['authrep', 'authorize']);
    expect(await pendingUsage()).toEqual({ get_word: 2 });
  });

  it('takes the fresh answer: a budget suspended meanwhile is refused, and keeps no usage of the call', async () => {
    const decide = strict();
    await decide.decide(event());
    clock += TRUST_MS + 1;
    platform.authorizeAnswer = () => denied('application_not_active');
    expect(await decide.decide(event())).toEqual(refused('application_not_active'));
    expect(await pendingUsage()).toEqual({});
  });

  it('is trusted for a whole bound again once the platform confirmed it', async () => {
    const decide = strict();
    await decide.decide(event());
    clock += TRUST_MS + 1;
    await decide.decide(event());
    platform.authorizeAnswer = () => UNAVAILABLE;
    clock += TRUST_MS;
    expect(await decide.decide(event())).toEqual(allowed());
    clock += 1;
    expect(await decide.decide(event())).toEqual(refused('platform_unavailable'));
  });
});

describe('first calls of a budget', () => {
  it('ask the platform once: concurrent first calls wait for that answer, then decide from the cache', async () => {
    let answer: (outcome: AuthOutcome) => void = () => undefined;
    platform.authrepAnswer = () => new Promise((resolve) => (answer = resolve));
    const decide = authorizer();
    const decisions = Promise.all(Array.from({ length: 5 }, () => decide.decide(event())));
    await new Promise((resolve) => setTimeout(resolve, 50));
    answer(authorized([hourly('hits', 3, 1, END)]));
    const limited = refused('limits_exceeded', 'Basic');
    expect((await decisions).sort((a, b) => a.effect.localeCompare(b.effect))).toEqual([
      allowed(),
      allowed(),
      allowed(),
      limited,
      limited,
    ]);
    expect(platform.count('authrep')).toBe(1);
    expect(await pendingUsage()).toEqual({ get_word: 2 });
  });

  it('that wait claim the lock in their next check once its holder gives it back without an answer', async () => {
    await redis.set(credentialKeys(SERVICE, ID).firstCall, 'another caller', 'PX', 60_000);
    const decision = authorizer().decide(event());
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(platform.calls).toEqual([]);
    await redis.del(credentialKeys(SERVICE, ID).firstCall);
    expect(await decision).toEqual(allowed());
    expect(platform.count('authrep')).toBe(1);
    expect(metrics.counts.FirstCallWaitTimedOut).toBeUndefined();
    expect(await redis.exists(credentialKeys(SERVICE, ID).firstCall)).toBe(0);
  });

  it('that wait past the deadline decide as the failure mode says, and say so', async () => {
    await redis.set(credentialKeys(SERVICE, ID).firstCall, 'another caller', 'PX', 60_000);
    const started = Date.now();
    expect(await authorizer({ platformTimeoutMs: 50 }).decide(event())).toEqual(
      refused('platform_unavailable'),
    );
    expect(Date.now() - started).toBeGreaterThanOrEqual(500);
    expect(metrics.counts.FirstCallWaitTimedOut).toBe(1);
    expect(platform.calls).toEqual([]);
  });

  it('take over when the caller that asked got no answer', async () => {
    platform.authrepAnswer = () => UNAVAILABLE;
    const decide = authorizer({ failureMode: 'allow' });
    expect(await decide.decide(event())).toEqual(allowed(''));
    platform.authrepAnswer = () => authorized([hourly('hits', 100, 1, END)]);
    expect(await decide.decide(event())).toEqual(allowed());
    expect(await redis.exists(credentialKeys(SERVICE, ID).firstCall)).toBe(0);
  });
});

describe('keys of an application (app_id mode)', () => {
  const appConfig = { credentialMode: 'app_id' } as const;
  const APP_ID = credentialIdOf(SERVICE, { kind: 'app_id', appId: 'app-1' });
  const withKey = (appKey: string) =>
    event({ headers: { app_id: 'app-1', app_key: appKey }, multiValueHeaders: null });
  const appAllowed = (plan = 'Basic') =>
    decided({ effect: 'allow', plan, metrics: 'get_word', credentialId: APP_ID, applicationId: 'app-1' });

  it('share one budget: a key the budget has not seen is checked with authorize, then counted with the others', async () => {
    platform.authrepAnswer = () => authorized([hourly('hits', 3, 1, END)]);
    platform.authorizeAnswer = () => authorized([hourly('hits', 3, 1, END)]);
    const decide = authorizer(appConfig);
    expect(await decide.decide(withKey('k-1'))).toEqual(appAllowed());
    expect(await decide.decide(withKey('k-2'))).toEqual(appAllowed());
    expect(await decide.decide(withKey('k-1'))).toEqual(appAllowed());
    expect(await decide.decide(withKey('k-2'))).toMatchObject({ effect: 'deny', reason: 'limits_exceeded' });
    expect(platform.calls.map((call) => [call.op, 'credential' in call && call.credential])).toEqual([
      ['authrep', { kind: 'app_id', appId: 'app-1', appKey: 'k-1' }],
      ['authorize', { kind: 'app_id', appId: 'app-1', appKey: 'k-2' }],
    ]);
  });

  it('refuse a wrong key with 401, from the cache after the first time', async () => {
    platform.authrepAnswer = () => authorized([hourly('hits', 100, 1, END)]);
    platform.authorizeAnswer = () => denied('application_key_invalid');
    const decide = authorizer(appConfig);
    await decide.decide(withKey('k-1'));
    expect(await decide.decide(withKey('wrong'))).toEqual({ effect: 'unauthorized' });
    expect(await decide.decide(withKey('wrong'))).toEqual({ effect: 'unauthorized' });
    expect(platform.count('authorize')).toBe(1);
    expect(await decide.decide(withKey('k-1'))).toEqual(appAllowed());
  });

  it("a wrong key after the application's limit refusal is 401, revealing nothing of its usage", async () => {
    platform.authrepAnswer = () => authorized([hourly('hits', 1, 1, END)]);
    platform.authorizeAnswer = () => denied('application_key_invalid');
    const decide = authorizer({ ...appConfig, refusalMemoryMs: 1000 });
    await decide.decide(withKey('k-1'));
    expect(await decide.decide(withKey('k-1'))).toMatchObject({ effect: 'deny', reason: 'limits_exceeded' });
    // The memory holds the limit refusal now; a key it has not verified still goes to be checked.
    expect(await decide.decide(withKey('wrong'))).toEqual({ effect: 'unauthorized' });
    expect(await decide.decide(withKey('k-1'))).toMatchObject({ effect: 'deny', reason: 'limits_exceeded' });
    expect(metrics.counts.RefusedFromMemory).toBe(1);
  });

  it('with the platform down, an unknown key is refused unless the failure mode is allow', async () => {
    platform.authrepAnswer = () => authorized([hourly('hits', 100, 1, END)]);
    platform.authorizeAnswer = () => UNAVAILABLE;
    await authorizer(appConfig).decide(withKey('k-1'));
    expect(await authorizer(appConfig).decide(withKey('k-2'))).toMatchObject({
      effect: 'deny',
      reason: 'platform_unavailable',
    });
    expect(await authorizer({ ...appConfig, failureMode: 'allow' }).decide(withKey('k-2'))).toEqual(
      appAllowed(),
    );
  });
});
