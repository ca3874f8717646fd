/**
 * The throttles' behaviour in the hot-path script (docs/throttling.md), run by the unit tests on
 * ioredis-mock and by the integration tests on a real redis-server and a Redis Cluster. A fake clock
 * (AccessCache's test-only `throttleClock`) moves the buckets; one test leaves it out, as production does.
 */
import { beforeEach, describe, expect, it } from 'vitest';
import { AccessCache } from '../../../core/budget/cache';
import type { CheckRequest } from '../../../core/budget/cache-types';
import { credentialKeys } from '../../../core/budget/keys';
import type { RedisConnection } from '../../../core/budget/redis-client';
import { ACTIVE } from '../../../core/budget/snapshot';
import type { Throttles } from '../../../core/budget/throttles';
import type { Usage, UsageReport } from '../../../core/platform/types';
import type { TestRedis } from '../../support/redis-topology';

const T0 = Date.UTC(2030, 0, 1, 10, 0, 0);
const SERVICE = 's1';
const ID = 'e'.repeat(64);
const HOURLY: UsageReport = {
  metric: 'hits',
  period: 'hour',
  periodStart: T0,
  periodEnd: T0 + 3_600_000,
  maxValue: 1_000_000,
  currentValue: 0,
  exceeded: false,
};
const PRO: Throttles = { Pro: { rate: 10, burst: 20 } };

export function describeThrottles(target: () => TestRedis): void {
  let redis: RedisConnection | undefined;
  let clock = T0;
  const keys = credentialKeys(SERVICE, ID);

  /** A cache with `throttles`, on the fake clock, or on Redis's TIME as in production. */
  function cacheWith(throttles: Throttles, time: 'fake clock' | 'redis TIME' = 'fake clock') {
    if (!redis) throw new Error('no Redis client');
    return new AccessCache(redis, {
      serviceId: SERVICE,
      negativeTtlMs: 60_000,
      leaseMs: 30_000,
      throttles,
      ...(time === 'fake clock' && { throttleClock: () => clock }),
    });
  }

  /** Stores the platform's answer for the plan; `admittedUsage`: the answered call's, as a first call's. */
  async function storePlan(
    cache: AccessCache,
    plan: string,
    reports: UsageReport[] = [HOURLY],
    admittedUsage?: Usage,
  ) {
    await cache.store({
      credentialId: ID,
      now: T0,
      budget: {
        state: ACTIVE,
        sealedCredential: 'v1.sealed',
        status: { plan, usageReports: reports, hierarchy: { hits: ['get_word', 'search'] } },
      },
      ...(admittedUsage !== undefined && { admittedUsage }),
    });
  }

  function check(cache: AccessCache, overrides: Partial<CheckRequest> = {}) {
    return cache.check({
      credentialId: ID,
      keyId: '',
      usage: { get_word: 1 },
      now: T0,
      windowMs: 10_000,
      softLimits: false,
      ...overrides,
    });
  }

  /** How many of `count` calls, made one after the other at the current clock, are allowed. */
  async function allowedOf(cache: AccessCache, count: number, overrides: Partial<CheckRequest> = {}) {
    let allowed = 0;
    for (let i = 0; i < count; i++) if ((await check(cache, overrides)).kind === 'allow') allowed++;
    return allowed;
  }

  /** The budget's throttle state: the `throttle:*` fields of its snapshot hash. */
  async function throttleState(): Promise<Record<string, string>> {
    const fields = (await redis?.hgetall(keys.app)) ?? {};
    return Object.fromEntries(Object.entries(fields).filter(([name]) => name.startsWith('throttle:')));
  }

  beforeEach(async () => {
    redis ??= await target().client();
    await target().flushAll();
    clock = T0;
  });

  describe('throttles (GCRA)', () => {
    it('admits the burst at once, then one call per emission interval, and refills the whole burst at rest', async () => {
      const cache = cacheWith(PRO);
      await storePlan(cache, 'Pro');
      expect(await allowedOf(cache, 20)).toBe(20);
      expect(await check(cache)).toEqual({
        kind: 'throttled',
        plan: 'Pro',
        publish: false,
        throttle: { rate: 10, burst: 20, retryInMs: 100 },
      });
      clock += 99;
      expect((await check(cache)).kind).toBe('throttled');
      clock += 1;
      expect(await allowedOf(cache, 3)).toBe(1);
      clock += 1_000;
      expect(await allowedOf(cache, 12)).toBe(10);
      clock += 2_000;
      expect(await allowedOf(cache, 25)).toBe(20);
    });

    it('takes the cell of a call that records no usage', async () => {
      const cache = cacheWith(PRO);
      await storePlan(cache, 'Pro');
      expect(await allowedOf(cache, 25, { usage: { get_word: 0 } })).toBe(20);
      expect(await redis?.exists(keys.pending)).toBe(0);
    });

    it('tells an allowed call the tightest throttle, what it leaves and when the bucket is rested', async () => {
      const cache = cacheWith({ Pro: { rate: 10, burst: 20, metrics: { search: { rate: 1, burst: 3 } } } });
      await storePlan(cache, 'Pro');
      expect(await check(cache)).toMatchObject({
        kind: 'allow',
        throttle: { rate: 10, burst: 20, remaining: 19, fullInMs: 100 },
      });
      expect(await check(cache, { usage: { search: 1 } })).toMatchObject({
        kind: 'allow',
        throttle: { metric: 'search', rate: 1, burst: 3, remaining: 2, fullInMs: 1_000 },
      });
    });

    it("tells a hit whose plan's throttle fields are all there the tightest of them, whichever comes first", async () => {
      const cache = cacheWith({ Pro: { rate: 10, burst: 20, metrics: { search: { rate: 1, burst: 3 } } } });
      await storePlan(cache, 'Pro');
      const search = { usage: { search: 1 } };
      expect(await check(cache, search)).toMatchObject({ throttle: { metric: 'search', remaining: 2 } });
      expect(await check(cache, search)).toMatchObject({
        kind: 'allow',
        throttle: { metric: 'search', rate: 1, burst: 3, remaining: 1, fullInMs: 2_000 },
      });
      clock += 3_000;
      expect(await check(cache, search)).toMatchObject({
        kind: 'allow',
        throttle: { metric: 'search', remaining: 2, fullInMs: 1_000 },
      });
      expect(await allowedOf(cache, 3, search)).toBe(2);
      expect(await check(cache)).toMatchObject({
        kind: 'allow',
        throttle: { rate: 10, burst: 20, remaining: 16, fullInMs: 400 },
      });
      expect(await check(cache, search)).toMatchObject({
        kind: 'throttled',
        throttle: { metric: 'search', retryInMs: 1_000 },
      });
    });

    it('counts a metric throttle in the metric usage, descendants included, and leaves other metrics alone', async () => {
      const cache = cacheWith({ Pro: { metrics: { hits: { rate: 1, burst: 4 } } } });
      await storePlan(cache, 'Pro');
      expect((await check(cache, { usage: { get_word: 3 } })).kind).toBe('allow');
      expect(await check(cache, { usage: { search: 2 } })).toMatchObject({
        kind: 'throttled',
        throttle: { metric: 'hits', retryInMs: 1_000 },
      });
      expect((await check(cache, { usage: { search: 1 } })).kind).toBe('allow');
      expect((await check(cache, { usage: { other: 5 } })).kind).toBe('allow');
    });

    it('refuses without consuming anything: no usage, no throttle cell, no report window', async () => {
      const cache = cacheWith({ Pro: { rate: 1, burst: 1 } });
      await storePlan(cache, 'Pro');
      expect((await check(cache, { windowMs: 0 })).kind).toBe('allow');
      const pending = await redis?.hgetall(keys.pending);
      const throttle = await throttleState();
      expect(await check(cache, { windowMs: 0 })).toMatchObject({ kind: 'throttled', publish: false });
      expect(await redis?.hgetall(keys.pending)).toEqual(pending);
      expect(await throttleState()).toEqual(throttle);
      clock += 1_000;
      expect((await check(cache)).kind).toBe('allow');
    });

    it('takes no throttle cell for a call a limit refuses', async () => {
      const cache = cacheWith({ Pro: { rate: 1, burst: 1 } });
      await storePlan(cache, 'Pro', [{ ...HOURLY, maxValue: 0 }]);
      expect((await check(cache)).kind).toBe('limited');
      expect(await throttleState()).toEqual({});
    });

    it('applies a lowered rate to a used-up bucket: no new burst, the next call after the new interval', async () => {
      await storePlan(cacheWith(PRO), 'Pro');
      expect(await allowedOf(cacheWith(PRO), 20)).toBe(20);
      const slower = cacheWith({ Pro: { rate: 5, burst: 20 } });
      expect(await check(slower)).toMatchObject({ kind: 'throttled', throttle: { retryInMs: 200 } });
      clock += 100;
      expect((await check(slower)).kind).toBe('throttled');
      clock += 100;
      expect(await allowedOf(slower, 3)).toBe(1);
      clock += 4_000;
      expect(await allowedOf(slower, 25)).toBe(20);
      expect(Object.keys(await throttleState())).toEqual(['throttle:call@5']);
    });

    it('moves a used-up bucket to its new rate even when the call is refused, and keeps no old field', async () => {
      await storePlan(cacheWith(PRO), 'Pro');
      expect(await allowedOf(cacheWith(PRO), 20)).toBe(20);
      expect((await check(cacheWith({ Pro: { rate: 5, burst: 20 } }))).kind).toBe('throttled');
      expect(await throttleState()).toEqual({ 'throttle:call@5': `${(T0 + 4_000) * 1_000}` });
    });

    it('keeps a metric named with an @ apart from the throttle of every call, through a rate change', async () => {
      const withSearchAt = (rate: number) =>
        cacheWith({ Pro: { rate: 10, burst: 20, metrics: { 'search@v2': { rate, burst: 2 } } } });
      const search = { usage: { 'search@v2': 1 } };
      await storePlan(withSearchAt(1), 'Pro');
      expect(await allowedOf(withSearchAt(1), 3, search)).toBe(2);
      expect(await check(withSearchAt(0.5), search)).toMatchObject({
        kind: 'throttled',
        throttle: { metric: 'search@v2', rate: 0.5, burst: 2, retryInMs: 2_000 },
      });
      expect(await throttleState()).toEqual({
        'throttle:call@10': `${(T0 + 200) * 1_000}`,
        'throttle:metric:search@v2@0.5': `${(T0 + 4_000) * 1_000}`,
      });
    });

    it('tells each plan its own burst when plans share a rate', async () => {
      const cache = cacheWith({ Basic: { rate: 10, burst: 5 }, Pro: { rate: 10, burst: 20 } });
      await storePlan(cache, 'Basic');
      expect(await check(cache)).toMatchObject({ throttle: { rate: 10, burst: 5, remaining: 4 } });
      await storePlan(cache, 'Pro');
      expect(await check(cache)).toMatchObject({ throttle: { rate: 10, burst: 20, remaining: 18 } });
    });

    it('caps a used-up bucket at a lowered burst', async () => {
      await storePlan(cacheWith(PRO), 'Pro');
      expect(await allowedOf(cacheWith(PRO), 20)).toBe(20);
      const smaller = cacheWith({ Pro: { rate: 10, burst: 5 } });
      expect(await check(smaller)).toMatchObject({ kind: 'throttled', throttle: { retryInMs: 100 } });
    });

    it('carries the calls made into a new plan, under its own throttle, and drops the throttle of a plan without one', async () => {
      const throttles: Throttles = { Basic: { rate: 1, burst: 2 }, Pro: { rate: 10, burst: 20 } };
      const cache = cacheWith(throttles);
      await storePlan(cache, 'Basic');
      expect(await allowedOf(cache, 3)).toBe(2);
      await storePlan(cache, 'Pro');
      expect(await allowedOf(cache, 20)).toBe(18);
      await storePlan(cache, 'Enterprise');
      expect(await allowedOf(cache, 30)).toBe(30);
    });

    it('leaves plans without a throttle and deployments without throttles untouched', async () => {
      const cache = cacheWith({});
      await storePlan(cache, 'Pro');
      expect(await allowedOf(cache, 30)).toBe(30);
      expect(await check(cache)).not.toHaveProperty('throttle');
      expect(await throttleState()).toEqual({});
    });

    it("takes a first call's cells whatever the bucket holds (the platform counted it already)", async () => {
      const cache = cacheWith({ Pro: { rate: 1, burst: 2 } });
      await storePlan(cache, 'Pro', [HOURLY], { get_word: 1 });
      expect(await allowedOf(cache, 2)).toBe(1);
      await storePlan(cache, 'Pro', [HOURLY], { get_word: 1 });
      expect(await allowedOf(cache, 1)).toBe(0);
      expect(await throttleState()).toEqual({ 'throttle:call@1': `${(T0 + 3_000) * 1_000}` });
    });

    it('keeps the buckets through a new answer of the platform: a resync gives no fresh burst', async () => {
      const cache = cacheWith(PRO);
      await storePlan(cache, 'Pro');
      expect(await allowedOf(cache, 20)).toBe(20);
      await storePlan(cache, 'Pro');
      expect((await check(cache)).kind).toBe('throttled');
    });

    it("reads Redis's TIME when no test clock is given", async () => {
      const cache = cacheWith({ Pro: { rate: 0.01, burst: 2 } }, 'redis TIME');
      await storePlan(cache, 'Pro');
      expect(await allowedOf(cache, 3)).toBe(2);
      const refused = await check(cache);
      expect(refused).toMatchObject({ kind: 'throttled' });
      const retryInMs = refused.kind === 'throttled' ? refused.throttle.retryInMs : 0;
      expect(retryInMs).toBeGreaterThan(90_000);
      expect(retryInMs).toBeLessThanOrEqual(100_000);
    });
  });
}
