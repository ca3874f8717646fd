/**
 * The cache's behaviour, run by the unit tests on ioredis-mock and by the integration tests on a real
 * redis-server and on a Redis Cluster (the scripts must behave alike on fengari and on Redis's own Lua,
 * and every script must stay within one slot).
 */
import { beforeEach, describe, expect, it } from 'vitest';
import { AccessCache, ENTRY_TTL_MS } from '../../../core/budget/cache';
import type { CheckRequest, FirstCallLock } from '../../../core/budget/cache-types';
import { credentialKeys } from '../../../core/budget/keys';
import type { RedisConnection } from '../../../core/budget/redis-client';
import { SEEN_MARK_TTL_SECONDS } from '../../../core/budget/scripts/store-script';
import { ACTIVE, type CredentialAnswer } from '../../../core/budget/snapshot';
import type { AuthorizationStatus, UsageReport } from '../../../core/platform/types';
import type { TestRedis } from '../../support/redis-topology';

const MINUTE = 60_000;
const HOUR = 3_600_000;
const T0 = Date.UTC(2030, 0, 1, 10, 0, 0);
const END = Date.UTC(2030, 0, 1, 11, 0, 0);
const DAY_START = Date.UTC(2030, 0, 1);
const SERVICE = 's1';
const ID = 'c'.repeat(64);
const KEY = 'k'.repeat(64);
const SEALED = 'v1.sealed-credential';

function hourly(metric: string, maxValue: number, currentValue: number, periodEnd = END): UsageReport {
  return {
    metric,
    period: 'hour',
    periodStart: periodEnd - HOUR,
    periodEnd,
    maxValue,
    currentValue,
    exceeded: false,
  };
}

function perMinute(metric: string, maxValue: number, currentValue: number, periodStart: number): UsageReport {
  return {
    metric,
    period: 'minute',
    periodStart,
    periodEnd: periodStart + MINUTE,
    maxValue,
    currentValue,
    exceeded: false,
  };
}

function status(usageReports: UsageReport[]): AuthorizationStatus {
  return { plan: 'Basic', usageReports, hierarchy: { hits: ['get_word', 'post_word'] } };
}

/** The pending field of a metric in the hour bucket of T0 (the bucket of an hourly-limited plan). */
const inHour = (metric: string, hourStart = T0) => `${hourStart}:${metric}`;

/** Runs the suite on the Redis `target` gives, emptied before each test. */
export function describeAccessCache(target: () => TestRedis): void {
  let connected: RedisConnection | undefined;
  let redis: RedisConnection;
  let cache: AccessCache;
  const keys = credentialKeys(SERVICE, ID);

  function check(overrides: Partial<CheckRequest> = {}, on = cache) {
    return on.check({
      credentialId: ID,
      keyId: '',
      usage: { get_word: 1 },
      now: T0,
      windowMs: 10_000,
      softLimits: false,
      ...overrides,
    });
  }

  async function storeActive(reports: UsageReport[], now = T0) {
    await cache.store({
      credentialId: ID,
      now,
      budget: { state: ACTIVE, sealedCredential: SEALED, status: status(reports) },
    });
  }

  async function pending(key = keys.pending): Promise<Record<string, string>> {
    const fields = await redis.hgetall(key);
    return Object.fromEntries(Object.entries(fields).filter(([field]) => !field.startsWith('t:')));
  }

  beforeEach(async () => {
    connected ??= await target().client();
    redis = connected;
    await target().flushAll();
    cache = new AccessCache(redis, { serviceId: SERVICE, negativeTtlMs: 60_000, leaseMs: 30_000 });
  });

  describe('hot path check', () => {
    it('is a miss for a budget without a snapshot, and decides every endpoint of one that has it', async () => {
      expect(await check()).toEqual({ kind: 'miss', claimed: false, seen: false });
      await storeActive([hourly('hits', 100, 1)]);
      expect(await check({ usage: { post_word: 1 } })).toMatchObject({ kind: 'allow', plan: 'Basic' });
      expect(await check({ usage: { get_word: 1 } })).toMatchObject({ kind: 'allow', plan: 'Basic' });
    });

    it('publishes once per window, again once the window is over, and on every call with window 0', async () => {
      await storeActive([hourly('hits', 100, 1)]);
      expect(await check()).toMatchObject({ publish: true });
      expect(await check({ now: T0 + 5_000 })).toMatchObject({ publish: false });
      expect(await check({ now: T0 + 9_999 })).toMatchObject({ publish: false });
      expect(await check({ now: T0 + 10_000 })).toMatchObject({ publish: true });
      expect(await check({ now: T0 + 10_001 })).toMatchObject({ publish: false });
      expect(await check({ windowMs: 0 })).toMatchObject({ publish: true });
      expect(await check({ windowMs: 0 })).toMatchObject({ publish: true });
    });

    it('keeps the report window through a new answer: a resync opens no second message in the window', async () => {
      await storeActive([hourly('hits', 100, 1)]);
      expect(await check()).toMatchObject({ publish: true });
      await storeActive([hourly('hits', 100, 2)], T0 + 1_000);
      expect(await check({ now: T0 + 2_000 })).toMatchObject({ publish: false });
      expect(await check({ now: T0 + 10_000 })).toMatchObject({ publish: true });
    });

    it('adds the requested usage to its period bucket, with the last call time, and marks the oldest unreported usage', async () => {
      await storeActive([hourly('hits', 100, 1)]);
      await check({ usage: { get_word: 2, hits: 1 } });
      await check({ now: T0 + 1_000, usage: { get_word: 1 } });
      expect(await redis.hgetall(keys.pending)).toEqual({
        [inHour('get_word')]: '3',
        [inHour('hits')]: '1',
        [`t:${T0}`]: String(T0 + 1_000),
      });
      expect(await redis.get(keys.since)).toBe(String(T0));
    });

    it('buckets by the smallest limited period, and by the day when only longer periods are limited', async () => {
      const minuteStart = T0 + 5 * MINUTE;
      await storeActive([hourly('hits', 100, 0), perMinute('hits', 10, 0, minuteStart)]);
      await check({ now: minuteStart + 30_000 });
      expect(await pending()).toEqual({ [`${minuteStart}:get_word`]: '1' });
      await target().flushAll();
      const eternal: UsageReport = {
        metric: 'hits',
        period: 'eternity',
        maxValue: 100,
        currentValue: 0,
        exceeded: false,
      };
      await storeActive([eternal]);
      await check({ now: T0 + 30_000 });
      expect(await pending()).toEqual({ [`${DAY_START}:get_word`]: '1' });
    });

    it('does not publish when the usage is all zero', async () => {
      await storeActive([hourly('hits', 100, 1)]);
      expect(await check({ usage: { get_word: 0 } })).toMatchObject({ kind: 'allow', publish: false });
      expect(await redis.exists(keys.pending)).toBe(0);
    });

    it('holds a hard limit: current + pending + requested <= max, ancestors included', async () => {
      await storeActive([hourly('hits', 5, 2)]);
      expect(await check({ usage: { get_word: 2 } })).toMatchObject({ kind: 'allow' });
      expect(await check({ usage: { get_word: 1 } })).toMatchObject({ kind: 'allow' });
      expect(await check({ usage: { get_word: 1 } })).toMatchObject({ kind: 'limited', plan: 'Basic' });
      expect(await check({ usage: { hits: 1 } })).toMatchObject({ kind: 'limited', plan: 'Basic' });
      expect(await pending()).toEqual({ [inHour('get_word')]: '3' });
    });

    it('tells an allowed call its most constrained limit, and a refused one the limit it hit', async () => {
      const minuteStart = T0 + 5 * MINUTE;
      await storeActive([hourly('hits', 10, 2), perMinute('get_word', 3, 1, minuteStart)], minuteStart);
      const now = minuteStart + 1_000;
      expect(await check({ now })).toEqual({
        kind: 'allow',
        plan: 'Basic',
        publish: true,
        overLimit: false,
        limit: { metric: 'get_word', period: 'minute', max: 3, resetAt: minuteStart + MINUTE, remaining: 1 },
        bucket: minuteStart,
        confirmedAt: minuteStart,
      });
      expect(await check({ now })).toMatchObject({
        kind: 'allow',
        limit: { period: 'minute', remaining: 0 },
      });
      expect(await check({ now })).toEqual({
        kind: 'limited',
        plan: 'Basic',
        publish: false,
        limit: { metric: 'get_word', period: 'minute', max: 3, resetAt: minuteStart + MINUTE },
      });
      expect(await check({ now, usage: { hits: 1 } })).toMatchObject({
        kind: 'allow',
        limit: { metric: 'hits', period: 'hour', max: 10, resetAt: END, remaining: 5 },
      });
      const later = minuteStart + MINUTE + 1_000;
      expect(await check({ now: later })).toMatchObject({
        kind: 'allow',
        limit: { period: 'minute', resetAt: minuteStart + 2 * MINUTE, remaining: 2 },
      });
      await target().flushAll();
      await storeActive([
        { metric: 'hits', period: 'eternity', maxValue: 5, currentValue: 5, exceeded: false },
      ]);
      expect(await check()).toEqual({
        kind: 'limited',
        plan: 'Basic',
        publish: true,
        limit: { metric: 'hits', period: 'eternity', max: 5 },
      });
      await target().flushAll();
      await storeActive([]);
      expect(await check()).toEqual({
        kind: 'allow',
        plan: 'Basic',
        publish: true,
        overLimit: false,
        bucket: DAY_START,
        confirmedAt: T0,
      });
    });

    it('marks the limit a refused call hit, and opens the report window so the budget is refreshed', async () => {
      await storeActive([hourly('hits', 1, 1)]);
      expect(await check()).toMatchObject({ kind: 'limited', publish: true });
      expect(await check({ now: T0 + 1 })).toMatchObject({ kind: 'limited', publish: false });
      expect(await redis.hgetall(keys.refusals)).toEqual({ 'hour:hits': String(T0 + 1) });
      expect(await cache.drain(ID, 'l')).toEqual({
        kind: 'empty',
        sealedCredential: SEALED,
        refusals: [{ metric: 'hits', period: 'hour', at: T0 + 1 }],
        settledSent: false,
      });
      expect(await redis.exists(keys.refusals)).toBe(0);
      await check({ now: T0 + 2, usage: { hits: 1 }, softLimits: true });
      await check({ now: T0 + 3 });
      expect(await cache.drain(ID, 'm')).toMatchObject({
        kind: 'ready',
        refusals: [{ metric: 'hits', period: 'hour', at: T0 + 3 }],
      });
    });

    it('a refusal mark expires, for a budget refused and then never called again is never drained', async () => {
      await storeActive([hourly('hits', 1, 1)]);
      expect(await check()).toMatchObject({ kind: 'limited' });
      expect(await redis.pttl(keys.refusals)).toBeGreaterThan(0);
    });

    it('counts in-flight usage until the platform accepted it, then the folded snapshot', async () => {
      await storeActive([hourly('hits', 3, 1)]);
      await check({ usage: { get_word: 2 } });
      expect(await cache.drain(ID, 'lease-1')).toMatchObject({ kind: 'ready', usage: { get_word: 2 } });
      expect(await check()).toMatchObject({ kind: 'limited' });
      await cache.acknowledge(ID, 'lease-1', 'lease-1', T0 + 1);
      expect(await redis.hget(keys.app, 'limit:hour:hits')).toBe(`${T0} ${END} 3 3`);
      expect(await check()).toMatchObject({ kind: 'limited' });
    });

    it('lets calls through again once the period is over', async () => {
      await storeActive([hourly('hits', 2, 2)]);
      expect(await check()).toMatchObject({ kind: 'limited' });
      expect(await check({ now: END - 1 })).toMatchObject({ kind: 'limited' });
      expect(await check({ now: END })).toMatchObject({ kind: 'allow' });
      expect(await check({ now: END + 1 })).toMatchObject({ kind: 'allow' });
      expect(await check({ now: END + 2 })).toMatchObject({ kind: 'limited' });
    });

    it('charges a new period only with the usage of its own buckets, not the last period pending', async () => {
      const minuteStart = T0;
      await storeActive([perMinute('hits', 5, 1, minuteStart)]);
      for (const at of [58_400, 58_900, 59_500, 59_900]) {
        expect(await check({ now: minuteStart + at })).toMatchObject({ kind: 'allow' });
      }
      expect(await check({ now: minuteStart + 59_950 })).toMatchObject({ kind: 'limited' });
      const next = minuteStart + MINUTE;
      const answers = [];
      for (let i = 0; i < 6; i++) answers.push((await check({ now: next + 500 + i })).kind);
      expect(answers).toEqual(['allow', 'allow', 'allow', 'allow', 'allow', 'limited']);
      expect(await pending()).toEqual({ [`${minuteStart}:get_word`]: '4', [`${next}:get_word`]: '5' });
    });

    it('denies a disabled method (an eternity limit of 0) but not its siblings', async () => {
      const disabled: UsageReport = {
        metric: 'post_word',
        period: 'eternity',
        maxValue: 0,
        currentValue: 0,
        exceeded: false,
      };
      await storeActive([hourly('hits', 100, 0), disabled]);
      expect(await check({ usage: { post_word: 1 } })).toMatchObject({ kind: 'limited' });
      expect(await check({ usage: { get_word: 1 } })).toMatchObject({ kind: 'allow' });
      expect(await check({ now: END + HOUR * 1000, usage: { post_word: 1 } })).toMatchObject({
        kind: 'limited',
      });
    });

    it('learns from an allowed call the needs its hints missed, and sends them with the next call', async () => {
      await storeActive([hourly('hits', 100, 0)]);
      const commands = redis as unknown as Record<string, (...args: unknown[]) => Promise<unknown>>;
      const send = commands.accessCheck as (...args: unknown[]) => Promise<unknown>;
      const sent: unknown[][] = [];
      commands.accessCheck = (...args: unknown[]) => {
        sent.push(args);
        return send.apply(redis, args);
      };
      try {
        await check();
        await check({ now: T0 + 1 });
      } finally {
        commands.accessCheck = send;
      }
      expect(sent[0]).not.toContain('hits limit:hour:hits');
      expect(sent[1]).toEqual(expect.arrayContaining(['hits limit:hour:hits', 'count:hour:hits']));
    });

    it('decides from the snapshot it reads, not from what an earlier call of the instance saw of it', async () => {
      await storeActive([hourly('hits', 100, 0)]);
      expect(await check({ usage: { post_word: 1 } })).toMatchObject({ kind: 'allow', limit: { max: 100 } });
      const disabled: UsageReport = { ...hourly('post_word', 0, 0), period: 'eternity' };
      delete (disabled as { periodStart?: number }).periodStart;
      delete (disabled as { periodEnd?: number }).periodEnd;
      await storeActive([hourly('hits', 100, 1), disabled]);
      expect(await check({ usage: { post_word: 1 } })).toMatchObject({ kind: 'limited' });
      await storeActive([hourly('hits', 3, 1)]);
      expect(await check({ usage: { post_word: 1 } })).toMatchObject({
        kind: 'allow',
        limit: { metric: 'hits', max: 3, remaining: 0 },
      });
      expect(await check({ usage: { post_word: 1 } })).toMatchObject({ kind: 'limited' });
    });

    it('counts pending usage of metrics outside the call against the ancestors they share', async () => {
      await storeActive([hourly('hits', 3, 0)]);
      const other = new AccessCache(redis, { serviceId: SERVICE, negativeTtlMs: 60_000, leaseMs: 30_000 });
      expect(await check({ usage: { post_word: 2 } }, other)).toMatchObject({ kind: 'allow' });
      expect(await check({ usage: { get_word: 1 } })).toMatchObject({
        kind: 'allow',
        limit: { remaining: 0 },
      });
      expect(await check({ usage: { get_word: 1 } })).toMatchObject({ kind: 'limited' });
    });

    it('counts them the same once the instance knows the call: pending usage of another method, in flight too', async () => {
      await storeActive([hourly('hits', 6, 0)]);
      expect(await check()).toMatchObject({ kind: 'allow', limit: { remaining: 5 } });
      const other = new AccessCache(redis, { serviceId: SERVICE, negativeTtlMs: 60_000, leaseMs: 30_000 });
      expect(await check({ usage: { post_word: 2 } }, other)).toMatchObject({ kind: 'allow' });
      expect(await check()).toMatchObject({ kind: 'allow', limit: { remaining: 2 } });
      expect(await cache.drain(ID, 'lease-1')).toMatchObject({
        kind: 'ready',
        usage: { get_word: 2, post_word: 2 },
      });
      expect(await check({ usage: { post_word: 1 } }, other)).toMatchObject({ kind: 'allow' });
      expect(await check()).toMatchObject({ kind: 'allow', limit: { remaining: 0 } });
      expect(await check()).toMatchObject({ kind: 'limited' });
    });

    it('in soft-limit mode allows and counts over the limit, and says so', async () => {
      await storeActive([hourly('hits', 1, 1)]);
      expect(await check({ softLimits: true })).toMatchObject({ kind: 'allow', overLimit: true });
      expect(await check({ softLimits: true })).toMatchObject({ kind: 'allow', overLimit: true });
      expect(await redis.hget(keys.pending, inHour('get_word'))).toBe('2');
    });

    it('reads a snapshot stored before periods had a start, counting all its buckets', async () => {
      await redis.hset(keys.app, {
        state: 'active',
        cred: SEALED,
        plan: 'Basic',
        'limit:hour:hits': `${END} 2 1`,
        'parent:get_word': 'hits',
      });
      expect(await check()).toMatchObject({ kind: 'allow' });
      expect(await check()).toMatchObject({ kind: 'limited' });
    });

    it('tells an allowed call when the platform last confirmed the snapshot: each stored answer renews it', async () => {
      await storeActive([hourly('hits', 10, 0)], T0);
      expect(await check({ now: T0 + 5_000 })).toMatchObject({ kind: 'allow', confirmedAt: T0 });
      await storeActive([hourly('hits', 10, 1)], T0 + 40_000);
      expect(await check({ now: T0 + 45_000 })).toMatchObject({ kind: 'allow', confirmedAt: T0 + 40_000 });
      await redis.hdel(keys.app, 'synced');
      expect(await check({ now: T0 + 50_000 })).toMatchObject({ kind: 'allow', confirmedAt: 0 });
    });
  });

  describe("the counts a hit reads (each limit's count with the usage waiting)", () => {
    it("keeps each limit's count with the calls it allows, and the last call they hold for", async () => {
      await storeActive([hourly('hits', 100, 7)]);
      await check({ usage: { get_word: 2 } });
      await check({ now: T0 + 1_000 });
      expect(await redis.hmget(keys.app, 'count:hour:hits', 'counted')).toEqual([
        `${END} 100 10`,
        String(T0 + 1_000),
      ]);
    });

    it('see usage a writer without counts added (the version before them, in a rolling deploy)', async () => {
      await storeActive([hourly('hits', 5, 0)]);
      await check({ usage: { get_word: 2 } });
      await check({ now: T0 + 1_000 });
      // A call recorded as the version before records it: the bucket's count and its last call.
      await redis.hset(keys.pending, inHour('post_word'), '1', `t:${T0}`, String(T0 + 2_000));
      expect(await check({ now: T0 + 3_000 })).toMatchObject({ kind: 'allow', limit: { remaining: 0 } });
      expect(await check({ now: T0 + 4_000 })).toMatchObject({ kind: 'limited' });
    });

    it("are all worked out again once they no longer hold, another method's too", async () => {
      await storeActive([hourly('hits', 10, 0), hourly('get_word', 3, 0)]);
      await check();
      await check({ now: T0 + 1_000 });
      await redis.hset(keys.pending, inHour('get_word'), '3', `t:${T0}`, String(T0 + 1_500));
      expect(await check({ now: T0 + 2_000, usage: { post_word: 1 } })).toMatchObject({ kind: 'allow' });
      expect(await check({ now: T0 + 3_000 })).toMatchObject({ kind: 'limited' });
    });

    it('hold through a drain, with the usage in flight counted', async () => {
      await storeActive([hourly('hits', 3, 0)]);
      await check({ usage: { get_word: 2 } });
      await cache.drain(ID, 'lease-1');
      expect(await check({ now: T0 + 1_000 })).toMatchObject({ kind: 'allow', limit: { remaining: 0 } });
      expect(await check({ now: T0 + 2_000 })).toMatchObject({ kind: 'limited' });
    });

    it('see usage of the version before that a drain took in flight', async () => {
      await storeActive([hourly('hits', 3, 0)]);
      await check();
      await cache.drain(ID, 'lease-1');
      await cache.acknowledge(ID, 'lease-1', 'lease-1', T0 + 1);
      // The reporter's resync, nothing waiting: the counts are the answer's, holding for no last call.
      await storeActive([hourly('hits', 3, 1)], T0 + 2);
      expect(await redis.hget(keys.app, 'counted')).toBe('');
      await redis.hset(keys.pending, inHour('get_word'), '1', `t:${T0}`, String(T0 + 500));
      await cache.drain(ID, 'lease-2');
      expect(await check({ now: T0 + 1_000 })).toMatchObject({ kind: 'allow', limit: { remaining: 0 } });
      expect(await check({ now: T0 + 2_000 })).toMatchObject({ kind: 'limited' });
    });

    it('see usage of the version before in an earlier bucket that a drain took in flight', async () => {
      const plan = [hourly('hits', 5, 0), perMinute('post_word', 100, 0, T0)];
      await storeActive(plan);
      await check();
      await cache.drain(ID, 'lease-1');
      await cache.acknowledge(ID, 'lease-1', 'lease-1', T0 + 1);
      await storeActive([hourly('hits', 5, 1), perMinute('post_word', 100, 0, T0)], T0 + 2);
      expect(await redis.hget(keys.app, 'counted')).toBe('');
      // Minute buckets: the version before records a call in one, the next call comes in the one after.
      const earlier = T0 + MINUTE;
      await redis.hset(keys.pending, `${earlier}:get_word`, '2', `t:${earlier}`, String(earlier + 500));
      await cache.drain(ID, 'lease-2');
      const now = T0 + 2 * MINUTE + 1_000;
      expect(await check({ now })).toMatchObject({ kind: 'allow', limit: { remaining: 1 } });
      expect(await check({ now: now + 1 })).toMatchObject({ kind: 'allow', limit: { remaining: 0 } });
      expect(await check({ now: now + 2 })).toMatchObject({ kind: 'limited' });
    });

    it("go with a new answer while usage waits, and are worked out again from the answer's counts", async () => {
      await storeActive([hourly('hits', 5, 0)]);
      await check({ usage: { get_word: 2 } });
      // The platform counted a call more (another gateway of the same service).
      await storeActive([hourly('hits', 5, 1)], T0 + 1_000);
      expect(await redis.hget(keys.app, 'counted')).toBeNull();
      expect(await check({ now: T0 + 2_000, usage: { get_word: 2 } })).toMatchObject({
        kind: 'allow',
        limit: { remaining: 0 },
      });
      expect(await check({ now: T0 + 3_000 })).toMatchObject({ kind: 'limited' });
    });

    it('are worked out again after usage admitted unchecked into another bucket', async () => {
      await storeActive([hourly('hits', 3, 0)]);
      await check();
      await cache.admit(ID, SEALED, { hits: 2 }, T0 + MINUTE + 1_000, 10_000);
      expect(await check({ now: T0 + 2 * MINUTE })).toMatchObject({ kind: 'limited' });
    });
  });

  describe('keys of an application', () => {
    it('asks for a key it never saw, then decides it from the budget shared with the other keys', async () => {
      await storeActive([hourly('hits', 3, 0)]);
      expect(await check({ keyId: KEY })).toEqual({ kind: 'key_unknown', seen: false });
      await cache.store({
        credentialId: ID,
        now: T0,
        key: { id: KEY, fact: { valid: true, sealedCredential: SEALED } },
      });
      expect(await check({ keyId: KEY })).toMatchObject({ kind: 'allow' });
      expect(await check({ keyId: '' })).toMatchObject({ kind: 'allow' });
      expect(await check({ keyId: KEY })).toMatchObject({ kind: 'allow' });
      expect(await check({ keyId: KEY })).toMatchObject({ kind: 'limited' });
      expect(await cache.validKeyCredentials(ID)).toEqual([SEALED]);
    });

    it('refuses a key the platform refused until the negative TTL has passed, whatever the budget', async () => {
      await cache.store({
        credentialId: ID,
        now: T0,
        key: { id: KEY, fact: { valid: false, code: 'application_key_invalid' } },
      });
      const refused = {
        kind: 'cached',
        state: { kind: 'invalid', code: 'application_key_invalid' },
        publish: false,
      };
      expect(await check({ keyId: KEY })).toEqual(refused);
      await storeActive([hourly('hits', 100, 0)]);
      expect(await check({ keyId: KEY, now: T0 + 59_999 })).toEqual(refused);
      expect(await check({ keyId: KEY, now: T0 + 60_000 })).toEqual({ kind: 'key_unknown', seen: false });
      expect(await redis.pttl(keys.keys)).toBeGreaterThan(ENTRY_TTL_MS - 60_000);
      expect(await cache.validKeyCredentials(ID)).toEqual([]);
    });
  });

  describe('hot-path deadline', () => {
    /** A check whose caller's clock is a minute ahead of Redis's: it reaches Redis after its deadline. */
    const lateCheck = (firstCallLock?: FirstCallLock) =>
      new AccessCache(redis, {
        serviceId: SERVICE,
        negativeTtlMs: 60_000,
        leaseMs: 30_000,
        wallClock: () => Date.now() - 60_000,
        hotPathDeadlineMs: 300,
      }).check({
        credentialId: ID,
        keyId: '',
        usage: { get_word: 1 },
        now: T0,
        windowMs: 0,
        softLimits: false,
        ...(firstCallLock && { firstCallLock }),
      });

    it('a script that reaches Redis after its caller gave up changes nothing and says so', async () => {
      await storeActive([hourly('hits', 100, 1)]);
      await expect(lateCheck()).rejects.toThrow(/deadline/);
      expect(await redis.exists(keys.pending, keys.since)).toBe(0);
      expect(await check()).toMatchObject({ kind: 'allow' });
    });

    it('a late first call claims no lock: its caller asked the platform already', async () => {
      await expect(lateCheck({ token: 'late', ttlMs: 5_000 })).rejects.toThrow(/deadline/);
      expect(await redis.exists(keys.firstCall)).toBe(0);
    });
  });

  describe('first calls', () => {
    const lock = (token: string) => ({ firstCallLock: { token, ttlMs: 5_000 } });

    it('let the check that finds no snapshot claim the budget for one caller until it gives it back or the claim runs out', async () => {
      expect(await check(lock('a'))).toEqual({ kind: 'miss', claimed: true, seen: false });
      expect(await check(lock('b'))).toEqual({ kind: 'miss', claimed: false, seen: false });
      expect(await check()).toEqual({ kind: 'miss', claimed: false, seen: false });
      await cache.releaseFirstCall(ID, 'b');
      expect(await check(lock('b'))).toEqual({ kind: 'miss', claimed: false, seen: false });
      await cache.releaseFirstCall(ID, 'a');
      expect(await check(lock('b'))).toEqual({ kind: 'miss', claimed: true, seen: false });
      expect(await redis.pttl(keys.firstCall)).toBeGreaterThan(4_000);
    });

    it("claim nothing once the budget has a snapshot, and a store gives back its caller's lock, only its own", async () => {
      await check(lock('a'));
      await storeActive([hourly('hits', 100, 0)]);
      expect(await redis.get(keys.firstCall)).toBe('a');
      expect(await check(lock('b'))).toMatchObject({ kind: 'allow' });
      expect(await redis.get(keys.firstCall)).toBe('a');
      await cache.store({
        credentialId: ID,
        now: T0,
        budget: { state: ACTIVE, sealedCredential: SEALED, status: status([hourly('hits', 100, 1)]) },
        firstCallToken: 'a',
      });
      expect(await redis.exists(keys.firstCall)).toBe(0);
    });

    it("a store of an invalid answer, or of an answer about the key only, gives back its caller's lock too", async () => {
      await check(lock('a'));
      await cache.store({
        credentialId: ID,
        now: T0,
        budget: { state: { kind: 'invalid', code: 'user_key_invalid' }, sealedCredential: SEALED },
        firstCallToken: 'a',
      });
      expect(await redis.exists(keys.firstCall)).toBe(0);
      expect(await redis.get(keys.negative)).toBe('invalid:user_key_invalid');

      await redis.del(keys.negative);
      await check(lock('b'));
      await cache.store({
        credentialId: ID,
        now: T0,
        key: { id: KEY, fact: { valid: false, code: 'application_key_invalid' } },
        firstCallToken: 'b',
      });
      expect(await redis.exists(keys.firstCall)).toBe(0);
    });

    it("a store with another caller's token, valid or invalid, leaves the lock to its holder", async () => {
      await check(lock('a'));
      await cache.store({
        credentialId: ID,
        now: T0,
        budget: { state: { kind: 'invalid', code: 'user_key_invalid' }, sealedCredential: SEALED },
        firstCallToken: 'b',
      });
      expect(await redis.get(keys.firstCall)).toBe('a');
      await cache.store({
        credentialId: ID,
        now: T0,
        budget: { state: ACTIVE, sealedCredential: SEALED, status: status([hourly('hits', 100, 1)]) },
        firstCallToken: 'b',
      });
      expect(await redis.get(keys.firstCall)).toBe('a');
      expect(await redis.exists(keys.negative)).toBe(0);
    });
  });

  describe('stored answers', () => {
    it("keep the snapshot with each period, hierarchy, plan and sealed credential, with a TTL, and with no usage waiting each limit's count", async () => {
      await storeActive([hourly('hits', 100, 7)]);
      expect(await redis.hgetall(keys.app)).toEqual({
        state: 'active',
        cred: SEALED,
        plan: 'Basic',
        synced: String(T0),
        'limit:hour:hits': `${T0} ${END} 100 7`,
        'count:hour:hits': `${END} 100 7`,
        counted: '',
        'parent:get_word': 'hits',
        'parent:post_word': 'hits',
        bucket: 'hour',
        'need:hits': 'limit:hour:hits',
        'need:get_word': 'hits limit:hour:hits',
        'need:post_word': 'hits limit:hour:hits',
      });
      const ttl = await redis.pttl(keys.app);
      expect(ttl).toBeGreaterThan(ENTRY_TTL_MS - 60_000);
      expect(ttl).toBeLessThanOrEqual(ENTRY_TTL_MS);
    });

    it('never lower a count within a period: the higher of two answers for the same period wins', async () => {
      await storeActive([hourly('hits', 100, 7)]);
      await storeActive([hourly('hits', 120, 5)]);
      expect(await redis.hget(keys.app, 'limit:hour:hits')).toBe(`${T0} ${END} 120 7`);
      await storeActive([hourly('hits', 120, 9)]);
      expect(await redis.hget(keys.app, 'limit:hour:hits')).toBe(`${T0} ${END} 120 9`);
    });

    it('take a later period whole, and ignore an answer about an earlier one', async () => {
      await storeActive([hourly('hits', 100, 7)]);
      await storeActive([hourly('hits', 100, 2, END + HOUR)]);
      expect(await redis.hget(keys.app, 'limit:hour:hits')).toBe(`${END} ${END + HOUR} 100 2`);
      await storeActive([hourly('hits', 100, 50, END)]);
      expect(await redis.hget(keys.app, 'limit:hour:hits')).toBe(`${END} ${END + HOUR} 100 2`);
    });

    it('drop the limits the answer no longer has', async () => {
      await storeActive([hourly('hits', 100, 7), hourly('get_word', 10, 1)]);
      await storeActive([hourly('hits', 100, 7)]);
      expect(await redis.hexists(keys.app, 'limit:hour:get_word')).toBe(0);
    });

    it('keep the snapshot (and its sealed credential) without TTL while usage waits for the reporter', async () => {
      await storeActive([hourly('hits', 100, 7)]);
      await check();
      expect(await redis.pttl(keys.app)).toBe(-1);
      await storeActive([hourly('hits', 100, 8)]);
      expect(await redis.pttl(keys.app)).toBe(-1);
    });

    it('a denial is kept in the snapshot, without a negative entry: its refused calls ask for a refresh', async () => {
      await storeActive([hourly('hits', 100, 7)]);
      await cache.store({
        credentialId: ID,
        now: T0,
        budget: {
          state: { kind: 'denied', reason: 'application_not_active' },
          sealedCredential: SEALED,
          status: status([hourly('hits', 100, 7)]),
        },
      });
      const state = { kind: 'denied', reason: 'application_not_active' };
      expect(await redis.exists(keys.negative)).toBe(0);
      expect(await check()).toEqual({ kind: 'cached', state, publish: true });
      expect(await check({ now: T0 + 5_000 })).toEqual({ kind: 'cached', state, publish: false });
      expect(await check({ now: T0 + 10_000 })).toEqual({ kind: 'cached', state, publish: true });
    });

    it('an invalid budget never seen leaves only its negative entry', async () => {
      await cache.store({
        credentialId: ID,
        now: T0,
        budget: { state: { kind: 'invalid', code: 'user_key_invalid' }, sealedCredential: SEALED },
      });
      expect(await target().keys()).toEqual([keys.negative]);
      expect(await check()).toMatchObject({
        kind: 'cached',
        state: { kind: 'invalid', code: 'user_key_invalid' },
      });
    });

    it('an invalid budget is refused from its negative entry without a refresh, a flood kept off the platform', async () => {
      await cache.store({
        credentialId: ID,
        now: T0,
        budget: { state: { kind: 'invalid', code: 'user_key_invalid' }, sealedCredential: SEALED },
      });
      expect(await check()).toEqual({
        kind: 'cached',
        state: { kind: 'invalid', code: 'user_key_invalid' },
        publish: false,
      });
      expect(await redis.hexists(keys.app, 'window')).toBe(0);
    });

    it('a revoked user key keeps its sealed credential for the usage still to report', async () => {
      await storeActive([hourly('hits', 100, 7)]);
      await check();
      await cache.store({
        credentialId: ID,
        now: T0 + 1,
        budget: { state: { kind: 'invalid', code: 'user_key_invalid' }, sealedCredential: 'v1.other' },
      });
      expect(await redis.hget(keys.app, 'state')).toBe('invalid:user_key_invalid');
      expect(await redis.hget(keys.app, 'cred')).toBe(SEALED);
      await redis.del(keys.negative);
      expect(await check()).toMatchObject({ kind: 'cached', state: { kind: 'invalid' } });
    });

    it('an active answer clears the negative entry', async () => {
      await cache.store({
        credentialId: ID,
        now: T0,
        budget: { state: { kind: 'invalid', code: 'user_key_invalid' }, sealedCredential: SEALED },
      });
      await storeActive([hourly('hits', 100, 0)]);
      expect(await check()).toMatchObject({ kind: 'allow' });
    });
  });

  describe('platform answers (storeAnswer)', () => {
    const answered = (answer: CredentialAnswer, keyId = KEY) =>
      cache.storeAnswer({ credentialId: ID, keyId, sealedCredential: SEALED, answer, now: T0 });

    it('an authorization keeps the snapshot and the presented key as valid', async () => {
      await answered({ kind: 'authorized', ...status([hourly('hits', 100, 7)]) });
      expect(await redis.hgetall(keys.app)).toMatchObject({
        state: 'active',
        cred: SEALED,
        plan: 'Basic',
        'limit:hour:hits': `${T0} ${END} 100 7`,
      });
      expect(await redis.hgetall(keys.keys)).toEqual({ [KEY]: `ok ${SEALED}` });
    });

    it('a limits_exceeded denial keeps the budget active: its snapshot decides each call', async () => {
      await answered({
        kind: 'denied',
        reason: 'limits_exceeded',
        reasonText: 'usage limits are exceeded',
        ...status([hourly('hits', 5, 5)]),
      });
      expect(await check({ keyId: KEY })).toMatchObject({ kind: 'limited', plan: 'Basic' });
      expect(await check({ keyId: KEY, now: END })).toMatchObject({ kind: 'allow' });
    });

    it('a suspension is cached as a denial of the budget', async () => {
      await answered({
        kind: 'denied',
        reason: 'application_not_active',
        reasonText: 'application is not active',
        ...status([hourly('hits', 100, 7)]),
      });
      expect(await check({ keyId: KEY })).toMatchObject({
        kind: 'cached',
        state: { kind: 'denied', reason: 'application_not_active' },
      });
    });

    it('an unknown credential leaves only its negative entry; a wrong app key only its key fact', async () => {
      await answered({ kind: 'invalid_credential', code: 'user_key_invalid', message: 'invalid' }, '');
      expect(await target().keys()).toEqual([keys.negative]);
      await target().flushAll();
      await answered({ kind: 'authorized', ...status([hourly('hits', 100, 7)]) }, 'a'.repeat(64));
      await answered({
        kind: 'denied',
        reason: 'application_key_invalid',
        reasonText: 'application key is invalid',
        ...status([]),
      });
      expect(await redis.hget(keys.app, 'state')).toBe('active');
      expect(await redis.hget(keys.keys, KEY)).toBe(`bad ${T0 + 60_000} application_key_invalid`);
      expect(await check({ keyId: KEY })).toMatchObject({
        kind: 'cached',
        state: { kind: 'invalid', code: 'application_key_invalid' },
      });
      expect(await check({ keyId: 'a'.repeat(64) })).toMatchObject({ kind: 'allow' });
    });
  });

  describe('seen marks', () => {
    const OTHER_KEY = 'b'.repeat(64);
    const answered = (answer: CredentialAnswer, keyId: string) =>
      cache.storeAnswer({ credentialId: ID, keyId, sealedCredential: SEALED, answer, now: T0 });
    const lock = { firstCallLock: { token: 't', ttlMs: 5_000 } };

    it('mark for 30 days from the last answer the key ids the platform says exist: active, limited or suspended', async () => {
      await answered({ kind: 'authorized', ...status([hourly('hits', 100, 7)]) }, KEY);
      await answered(
        { kind: 'denied', reason: 'limits_exceeded', reasonText: 'over', ...status([hourly('hits', 5, 5)]) },
        OTHER_KEY,
      );
      await redis.expire(keys.seen, 10);
      await answered(
        { kind: 'denied', reason: 'application_not_active', reasonText: 'suspended', ...status([]) },
        '',
      );
      expect((await redis.smembers(keys.seen)).sort()).toEqual(['', OTHER_KEY, KEY]);
      expect(await redis.ttl(keys.seen)).toBeGreaterThan(SEEN_MARK_TTL_SECONDS - 5);
      expect(await redis.ttl(keys.seen)).toBeLessThanOrEqual(SEEN_MARK_TTL_SECONDS);
    });

    it('never mark an unknown credential or a refused key', async () => {
      await answered({ kind: 'invalid_credential', code: 'user_key_invalid', message: 'invalid' }, '');
      await answered(
        { kind: 'denied', reason: 'application_key_invalid', reasonText: 'bad key', ...status([]) },
        KEY,
      );
      expect(await redis.exists(keys.seen)).toBe(0);
    });

    it("say on a miss or an unchecked key whether the key id is marked, after the snapshot's end", async () => {
      await answered({ kind: 'authorized', ...status([hourly('hits', 100, 7)]) }, KEY);
      await redis.del(keys.keys);
      expect(await check({ keyId: KEY })).toEqual({ kind: 'key_unknown', seen: true });
      expect(await check({ keyId: OTHER_KEY })).toEqual({ kind: 'key_unknown', seen: false });
      await redis.del(keys.app);
      expect(await check({ keyId: KEY, ...lock })).toEqual({ kind: 'miss', claimed: true, seen: true });
      expect(await check({ keyId: OTHER_KEY })).toEqual({ kind: 'miss', claimed: false, seen: false });
      expect(await check({ keyId: '' })).toEqual({ kind: 'miss', claimed: false, seen: false });
    });
  });

  describe('admit (failure mode allow)', () => {
    it('records usage by the minute and the sealed credential without a snapshot', async () => {
      expect(await cache.admit(ID, SEALED, { hits: 1 }, T0 + 5_000, 10_000)).toBe(true);
      expect(await cache.admit(ID, SEALED, { hits: 1 }, T0 + 6_000, 10_000)).toBe(false);
      expect(await redis.hgetall(keys.pending)).toEqual({
        [`${T0}:hits`]: '2',
        [`t:${T0}`]: String(T0 + 6_000),
      });
      expect(await redis.hgetall(keys.app)).toEqual({ cred: SEALED, window: String(T0 + 15_000) });
      expect(await check()).toEqual({ kind: 'miss', claimed: false, seen: false });
      expect(await cache.drain(ID, 't')).toEqual({
        kind: 'ready',
        sealedCredential: SEALED,
        buckets: [{ start: T0, lastCallAt: T0 + 6_000, usage: { hits: 2 } }],
        usage: { hits: 2 },
        batch: 't',
        history: 'none',
        refusals: [],
        settledSent: false,
      });
    });
  });

  describe('giving usage back (a call its backend did not serve)', () => {
    async function allowed(usage: Record<string, number>, now = T0) {
      const result = await check({ usage, now });
      if (result.kind !== 'allow') throw new Error(`not allowed: ${result.kind}`);
      return { bucket: result.bucket, usage };
    }

    it('takes back exactly what the call recorded, leaving the other calls counted', async () => {
      await storeActive([hourly('hits', 5, 0)]);
      await allowed({ get_word: 2 });
      const second = await allowed({ get_word: 1, post_word: 1 }, T0 + 1_000);
      expect(second.bucket).toBe(T0);
      expect(await cache.giveBack(ID, second)).toEqual({ get_word: 1, post_word: 1 });
      expect(await redis.hgetall(keys.pending)).toEqual({
        [inHour('get_word')]: '2',
        [`t:${T0}`]: String(T0 + 1_000),
      });
      // The limit counts the calls served only: 5 - 2 leave 3 of get_word's parent.
      expect(await check({ usage: { get_word: 1 } })).toMatchObject({
        kind: 'allow',
        limit: { remaining: 2 },
      });
      expect(await check({ usage: { get_word: 2 } })).toMatchObject({
        kind: 'allow',
        limit: { remaining: 0 },
      });
      expect(await check({ usage: { get_word: 1 } })).toMatchObject({ kind: 'limited' });
    });

    it('leaves no trace of a budget whose only call is given back: no bucket, no sweep mark, the snapshot expiring', async () => {
      await storeActive([hourly('hits', 5, 0)]);
      expect(await redis.pttl(keys.app)).toBeGreaterThan(0);
      const recorded = await allowed({ get_word: 1 });
      expect(await redis.pttl(keys.app)).toBe(-1);
      expect(await cache.giveBack(ID, recorded)).toEqual({ get_word: 1 });
      expect(await redis.exists(keys.pending, keys.since)).toBe(0);
      expect(await redis.pttl(keys.app)).toBeGreaterThan(0);
      expect(await cache.drain(ID, 'lease')).toEqual({
        kind: 'empty',
        sealedCredential: SEALED,
        refusals: [],
        settledSent: false,
      });
    });

    it('never goes below zero: usage a reporter took is on its way and stays counted', async () => {
      await storeActive([hourly('hits', 5, 0)]);
      const recorded = await allowed({ get_word: 2 });
      expect(await cache.drain(ID, 'lease')).toMatchObject({ kind: 'ready', usage: { get_word: 2 } });
      await allowed({ get_word: 1 }, T0 + 1_000);
      expect(await cache.giveBack(ID, recorded)).toEqual({ get_word: 1 });
      expect(await redis.exists(keys.pending)).toBe(0);
      // In-flight usage waits for the platform: the sweep mark stays.
      expect(await redis.get(keys.since)).toBe(String(T0));
      expect(await cache.giveBack(ID, recorded)).toEqual({});
      expect(await redis.hgetall(keys.inFlight)).toMatchObject({ [inHour('get_word')]: '2' });
    });

    it('takes back usage admitted unchecked from its minute bucket', async () => {
      await cache.admit(ID, SEALED, { hits: 1 }, T0 + 5_000, 0);
      expect(await cache.giveBack(ID, { bucket: T0, usage: { hits: 1 } })).toEqual({ hits: 1 });
      expect(await redis.exists(keys.pending, keys.since)).toBe(0);
    });
  });

  describe('drain, acknowledge and release', () => {
    it('moves pending to in flight under a lease, and resends in-flight usage unchanged after a failure', async () => {
      expect(await cache.drain(ID, 'lease-0')).toEqual({ kind: 'empty', refusals: [], settledSent: false });
      await storeActive([hourly('hits', 100, 0)]);
      await check({ usage: { get_word: 2 } });
      const first = {
        kind: 'ready',
        sealedCredential: SEALED,
        buckets: [{ start: T0, lastCallAt: T0, usage: { get_word: 2 } }],
        usage: { get_word: 2 },
        batch: 'lease-1',
        refusals: [],
        settledSent: false,
      };
      expect(await cache.drain(ID, 'lease-1')).toEqual({ ...first, history: 'none' });
      expect(await cache.drain(ID, 'lease-2')).toEqual({ kind: 'busy' });
      await check({ usage: { get_word: 5 } });
      await cache.release(ID, 'not-mine');
      expect(await cache.drain(ID, 'lease-2')).toEqual({ kind: 'busy' });
      await cache.release(ID, 'lease-1');
      expect(await cache.drain(ID, 'lease-2')).toEqual({ ...first, history: 'unsent' });
      expect(await pending()).toEqual({ [inHour('get_word')]: '5' });
      expect(await cache.acknowledge(ID, 'lease-2', 'lease-1', T0 + 1)).toBe(true);
      expect(await redis.exists(keys.inFlight, keys.lease)).toBe(0);
      expect(await redis.get(keys.since)).toBe(String(T0));
      expect(await cache.drain(ID, 'lease-3')).toMatchObject({
        kind: 'ready',
        usage: { get_word: 5 },
        history: 'none',
      });
      await cache.acknowledge(ID, 'lease-3', 'lease-3', T0 + 2);
      expect(await redis.exists(keys.since, keys.pending, keys.inFlight, keys.lease, keys.batch)).toBe(0);
      expect(await redis.pttl(keys.app)).toBeGreaterThan(0);
      expect(await cache.drain(ID, 'lease-4')).toEqual({
        kind: 'empty',
        sealedCredential: SEALED,
        refusals: [],
        settledSent: false,
      });
    });

    it('a late acknowledgement after the lease passed to another reporter leaves its in-flight usage', async () => {
      await storeActive([hourly('hits', 100, 0)]);
      await check({ usage: { get_word: 2 } });
      await cache.drain(ID, 'lease-slow');
      await redis.del(keys.lease);
      expect(await cache.drain(ID, 'lease-2')).toMatchObject({ kind: 'ready', history: 'unsent' });
      await cache.acknowledge(ID, 'lease-2', 'lease-slow', T0 + 1);
      await check({ usage: { get_word: 5 } });
      expect(await cache.drain(ID, 'lease-3')).toMatchObject({ kind: 'ready', usage: { get_word: 5 } });
      expect(await cache.acknowledge(ID, 'lease-slow', 'lease-slow', T0 + 2)).toBe(false);
      expect(await pending(keys.inFlight)).toEqual({ [inHour('get_word')]: '5' });
      expect(await redis.get(keys.lease)).toBe('lease-3');
      expect(await redis.hget(keys.app, 'limit:hour:hits')).toBe(`${T0} ${END} 100 2`);
      await cache.acknowledge(ID, 'lease-3', 'lease-3', T0 + 3);
      expect(await redis.exists(keys.since, keys.pending, keys.inFlight, keys.lease)).toBe(0);
      expect(await redis.hget(keys.app, 'limit:hour:hits')).toBe(`${T0} ${END} 100 7`);
    });

    it('folds accepted usage only into the period its buckets lie in', async () => {
      await storeActive([hourly('hits', 100, 7)]);
      await check({ now: T0 + 1_000 });
      await cache.drain(ID, 'l');
      await cache.acknowledge(ID, 'l', 'l', END);
      expect(await redis.hget(keys.app, 'limit:hour:hits')).toBe(`${T0} ${END} 100 7`);
      await storeActive([hourly('hits', 100, 0, END + HOUR)], END);
      await check({ now: END - 1 });
      await cache.drain(ID, 'm');
      await cache.acknowledge(ID, 'm', 'm', END + 1);
      expect(await redis.hget(keys.app, 'limit:hour:hits')).toBe(`${END} ${END + HOUR} 100 0`);
    });

    it('reports a budget whose sealed value is gone as unreadable, keeping its usage', async () => {
      await storeActive([hourly('hits', 100, 0)]);
      await check();
      await redis.hdel(keys.app, 'cred');
      expect(await cache.drain(ID, 'l')).toEqual({ kind: 'unreadable', settledSent: false });
      expect(await pending(keys.inFlight)).toEqual({ [inHour('get_word')]: '1' });
    });
  });

  describe('rejected usage', () => {
    it('is kept per budget and metric, and found by a scan of every primary', async () => {
      await cache.keepRejected(ID, { ghost: 3 });
      await cache.keepRejected(ID, { ghost: 2 });
      await cache.keepRejected('d'.repeat(64), { phantom: 1 });
      // Slot 13894: on another primary than the two above (slots 2156 and 247) on a three-primary cluster.
      await cache.keepRejected('f'.repeat(64), { phantom: 2 });
      const found = await cache.rejectedUsage();
      expect(found.sort((a, b) => a.credentialId.localeCompare(b.credentialId))).toEqual([
        { credentialId: ID, usage: { ghost: 5 } },
        { credentialId: 'd'.repeat(64), usage: { phantom: 1 } },
        { credentialId: 'f'.repeat(64), usage: { phantom: 2 } },
      ]);
    });
  });

  describe('unreported usage scan', () => {
    it('finds budgets whose oldest unreported usage is old enough, up to a limit', async () => {
      const ids = ['1', '2', '3'].map((c) => c.repeat(64));
      for (const [i, id] of ids.entries()) await cache.admit(id, SEALED, { hits: 1 }, T0 + i * 1000, 0);
      await redis.set('am:{unrelated}:since', '0');
      await redis.set(credentialKeys('another service', ids[0] ?? '').since, '0');
      expect((await cache.unreportedSince(T0 + 1000, 10)).sort()).toEqual([ids[0], ids[1]]);
      expect(await cache.unreportedSince(T0 - 1, 10)).toEqual([]);
      expect(await cache.unreportedSince(T0 + 5000, 2)).toHaveLength(2);
    });

    it('finds the usage of many budgets, wherever their keys live, within the limit', async () => {
      const ids = Array.from({ length: 40 }, (_, i) => i.toString(16).padStart(64, 'a'));
      for (const id of ids) await cache.admit(id, SEALED, { hits: 1 }, T0, 0);
      expect((await cache.unreportedSince(T0, 100)).sort()).toEqual([...ids].sort());
      const some = await cache.unreportedSince(T0, 10);
      expect(new Set(some).size).toBe(10);
      for (const id of some) expect(ids).toContain(id);
    });
  });
}
