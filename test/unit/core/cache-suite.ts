/**
 * The cache's behaviour, run by the unit tests on ioredis-mock and by the integration tests on a real
 * redis-server and on a Redis Cluster (the scripts must behave alike on fengari and on Redis's own Lua,
 * and every script must stay within one slot).
 */
import { beforeEach, describe, expect, it } from 'vitest';
import { AccessCache, type CheckRequest, ENTRY_TTL_MS } from '../../../lambdas/core/cache';
import { credentialKeys } from '../../../lambdas/core/keys';
import type { AuthorizationStatus, UsageReport } from '../../../lambdas/core/platform/types';
import type { RedisConnection } from '../../../lambdas/core/redis-client';
import { ACTIVE } from '../../../lambdas/core/snapshot';
import type { TestRedis } from '../../support/redis-topology';

const HOUR = 3_600_000;
const T0 = Date.UTC(2030, 0, 1, 10, 0, 0);
const END = Date.UTC(2030, 0, 1, 11, 0, 0);
const ID = 'c'.repeat(64);
const SEALED = 'v1.sealed-credential';
const ENDPOINT = 'GET /v1/words/{word}.json';

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

function status(usageReports: UsageReport[]): AuthorizationStatus {
  return { plan: 'Basic', usageReports, hierarchy: { hits: ['get_word', 'post_word'] } };
}

/** Runs the suite on the Redis `target` gives, emptied before each test. */
export function describeAccessCache(target: () => TestRedis): void {
  let connected: RedisConnection | undefined;
  let redis: RedisConnection;
  let cache: AccessCache;

  function check(overrides: Partial<CheckRequest> = {}) {
    return cache.check({
      credentialId: ID,
      endpoint: ENDPOINT,
      usage: { get_word: 1 },
      now: T0,
      windowMs: 10_000,
      softLimits: false,
      ...overrides,
    });
  }

  async function storeActive(reports: UsageReport[]) {
    await cache.store({
      credentialId: ID,
      state: ACTIVE,
      sealedCredential: SEALED,
      status: status(reports),
      now: T0,
      endpoint: { name: ENDPOINT, usage: { get_word: 1 } },
    });
  }

  beforeEach(async () => {
    connected ??= await target().client();
    redis = connected;
    await target().flushAll();
    cache = new AccessCache(redis, { negativeTtlMs: 60_000, leaseMs: 30_000 });
  });

  describe('hot path check', () => {
    it('is a miss for an unknown credential, and for a known credential on a new endpoint', async () => {
      expect(await check()).toEqual({ kind: 'miss' });
      await storeActive([hourly('hits', 100, 1)]);
      expect(await check({ endpoint: 'POST /v1/words/{word}.json' })).toEqual({ kind: 'miss' });
      expect(await check()).toMatchObject({ kind: 'allow', plan: 'Basic' });
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

    it('adds the requested usage to pending and marks the oldest unreported usage', async () => {
      await storeActive([hourly('hits', 100, 1)]);
      await check({ usage: { get_word: 2, hits: 1 } });
      await check({ now: T0 + 1_000, usage: { get_word: 1 } });
      const keys = credentialKeys(ID);
      expect(await redis.hgetall(keys.pending)).toEqual({ get_word: '3', hits: '1' });
      expect(await redis.get(keys.since)).toBe(String(T0));
    });

    it('does not publish when the usage is all zero', async () => {
      await storeActive([hourly('hits', 100, 1)]);
      expect(await check({ usage: { get_word: 0 } })).toMatchObject({ kind: 'allow', publish: false });
      expect(await redis.exists(credentialKeys(ID).pending)).toBe(0);
    });

    it('holds a hard limit: current + pending + requested <= max, ancestors included', async () => {
      await storeActive([hourly('hits', 5, 2)]);
      expect(await check({ usage: { get_word: 2 } })).toMatchObject({ kind: 'allow' });
      expect(await check({ usage: { get_word: 1 } })).toMatchObject({ kind: 'allow' });
      expect(await check({ usage: { get_word: 1 } })).toEqual({ kind: 'limited', plan: 'Basic' });
      expect(await check({ usage: { hits: 1 } })).toEqual({ kind: 'limited', plan: 'Basic' });
      expect(await redis.hgetall(credentialKeys(ID).pending)).toEqual({ get_word: '3' });
    });

    it('denies a new endpoint of a credential at its limit from the snapshot, instead of a miss', async () => {
      const other = 'GET /v1/definitions/{word}.json';
      await storeActive([hourly('hits', 3, 1)]);
      expect(await check()).toMatchObject({ kind: 'allow' });
      expect(await check({ endpoint: other })).toEqual({ kind: 'miss' });
      expect(await check()).toMatchObject({ kind: 'allow' });
      expect(await check({ endpoint: other })).toEqual({ kind: 'limited', plan: 'Basic' });
      expect(await check({ endpoint: other, softLimits: true })).toEqual({ kind: 'miss' });
      expect(await redis.hgetall(credentialKeys(ID).pending)).toEqual({ get_word: '2' });
    });

    it('counts in-flight usage until the platform accepted it, then the folded snapshot', async () => {
      await storeActive([hourly('hits', 3, 1)]);
      await check({ usage: { get_word: 2 } });
      expect(await cache.drain(ID, 'lease-1')).toMatchObject({ kind: 'ready', usage: { get_word: 2 } });
      expect(await check()).toMatchObject({ kind: 'limited' });
      await cache.acknowledge(ID, 'lease-1', T0 + 1);
      expect(await redis.hget(credentialKeys(ID).app, 'limit:hour:hits')).toBe(`${END} 3 3`);
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

    it('in soft-limit mode allows and counts over the limit, and says so', async () => {
      await storeActive([hourly('hits', 1, 1)]);
      expect(await check({ softLimits: true })).toMatchObject({ kind: 'allow', overLimit: true });
      expect(await check({ softLimits: true })).toMatchObject({ kind: 'allow', overLimit: true });
      expect(await redis.hget(credentialKeys(ID).pending, 'get_word')).toBe('2');
    });

    it('answers from the snapshot whatever the endpoint when asked to (resilient answer)', async () => {
      await storeActive([hourly('hits', 100, 0)]);
      expect(await check({ endpoint: undefined, usage: { post_word: 1 } })).toMatchObject({ kind: 'allow' });
      await target().flushAll();
      expect(await check({ endpoint: undefined })).toEqual({ kind: 'miss' });
    });
  });

  describe('hot-path deadline', () => {
    it('a script that reaches Redis after its caller gave up changes nothing and says so', async () => {
      await storeActive([hourly('hits', 100, 1)]);
      const late = new AccessCache(redis, {
        negativeTtlMs: 60_000,
        leaseMs: 30_000,
        wallClock: () => Date.now() - 60_000,
        hotPathDeadlineMs: 300,
      });
      await expect(
        late.check({
          credentialId: ID,
          endpoint: ENDPOINT,
          usage: { get_word: 1 },
          now: T0,
          windowMs: 0,
          softLimits: false,
        }),
      ).rejects.toThrow(/deadline/);
      expect(await redis.exists(credentialKeys(ID).pending, credentialKeys(ID).since)).toBe(0);
      expect(await check()).toMatchObject({ kind: 'allow' });
    });
  });

  describe('stored answers', () => {
    it('keep the snapshot, hierarchy, plan and sealed credential, with a TTL', async () => {
      await storeActive([hourly('hits', 100, 7)]);
      const keys = credentialKeys(ID);
      expect(await redis.hgetall(keys.app)).toEqual({
        state: 'active',
        cred: SEALED,
        plan: 'Basic',
        synced: String(T0),
        'limit:hour:hits': `${END} 100 7`,
        'parent:get_word': 'hits',
        'parent:post_word': 'hits',
      });
      expect(await redis.hgetall(keys.endpoints)).toEqual({ [ENDPOINT]: '{"get_word":1}' });
      const ttl = await redis.pttl(keys.app);
      expect(ttl).toBeGreaterThan(ENTRY_TTL_MS - 60_000);
      expect(ttl).toBeLessThanOrEqual(ENTRY_TTL_MS);
    });

    it('never lower a count within a period: the higher of two answers for the same period wins', async () => {
      await storeActive([hourly('hits', 100, 7)]);
      await storeActive([hourly('hits', 120, 5)]);
      expect(await redis.hget(credentialKeys(ID).app, 'limit:hour:hits')).toBe(`${END} 120 7`);
      await storeActive([hourly('hits', 120, 9)]);
      expect(await redis.hget(credentialKeys(ID).app, 'limit:hour:hits')).toBe(`${END} 120 9`);
    });

    it('take a later period whole, and ignore an answer about an earlier one', async () => {
      await storeActive([hourly('hits', 100, 7)]);
      await storeActive([hourly('hits', 100, 2, END + HOUR)]);
      expect(await redis.hget(credentialKeys(ID).app, 'limit:hour:hits')).toBe(`${END + HOUR} 100 2`);
      await storeActive([hourly('hits', 100, 50, END)]);
      expect(await redis.hget(credentialKeys(ID).app, 'limit:hour:hits')).toBe(`${END + HOUR} 100 2`);
    });

    it('drop the limits the answer no longer has', async () => {
      await storeActive([hourly('hits', 100, 7), hourly('get_word', 10, 1)]);
      await storeActive([hourly('hits', 100, 7)]);
      expect(await redis.hexists(credentialKeys(ID).app, 'limit:hour:get_word')).toBe(0);
    });

    it('keep the snapshot (and its sealed credential) without TTL while usage waits for the reporter', async () => {
      await storeActive([hourly('hits', 100, 7)]);
      await check();
      const keys = credentialKeys(ID);
      expect(await redis.pttl(keys.app)).toBe(-1);
      await storeActive([hourly('hits', 100, 8)]);
      expect(await redis.pttl(keys.app)).toBe(-1);
    });

    it('a denial sets the negative entry with its TTL, drops the endpoints and keeps the snapshot', async () => {
      await storeActive([hourly('hits', 100, 7)]);
      await cache.store({
        credentialId: ID,
        state: { kind: 'denied', reason: 'application_not_active' },
        sealedCredential: SEALED,
        status: status([hourly('hits', 100, 7)]),
        now: T0,
      });
      const keys = credentialKeys(ID);
      expect(await check()).toEqual({
        kind: 'cached',
        state: { kind: 'denied', reason: 'application_not_active' },
      });
      const ttl = await redis.pttl(keys.negative);
      expect(ttl).toBeGreaterThan(50_000);
      expect(ttl).toBeLessThanOrEqual(60_000);
      expect(await redis.exists(keys.endpoints)).toBe(0);
      await redis.del(keys.negative);
      expect(await check()).toEqual({ kind: 'miss' });
      expect(await check({ endpoint: undefined })).toEqual({
        kind: 'cached',
        state: { kind: 'denied', reason: 'application_not_active' },
      });
    });

    it('an invalid credential never seen leaves only its negative entry', async () => {
      await cache.store({
        credentialId: ID,
        state: { kind: 'invalid', code: 'user_key_invalid' },
        sealedCredential: SEALED,
        now: T0,
        endpoint: { name: ENDPOINT, usage: { get_word: 1 } },
      });
      expect(await target().keys()).toEqual([credentialKeys(ID).negative]);
      expect(await check()).toEqual({ kind: 'cached', state: { kind: 'invalid', code: 'user_key_invalid' } });
    });

    it('a revoked key keeps its sealed credential for the usage still to report', async () => {
      await storeActive([hourly('hits', 100, 7)]);
      await check();
      await cache.store({
        credentialId: ID,
        state: { kind: 'invalid', code: 'user_key_invalid' },
        sealedCredential: 'v1.other',
        now: T0 + 1,
      });
      const keys = credentialKeys(ID);
      expect(await redis.hget(keys.app, 'state')).toBe('invalid:user_key_invalid');
      expect(await redis.hget(keys.app, 'cred')).toBe(SEALED);
      expect(await check({ endpoint: undefined })).toMatchObject({
        kind: 'cached',
        state: { kind: 'invalid' },
      });
    });

    it('an active answer clears the negative entry', async () => {
      await cache.store({
        credentialId: ID,
        state: { kind: 'invalid', code: 'user_key_invalid' },
        sealedCredential: SEALED,
        now: T0,
      });
      await storeActive([hourly('hits', 100, 0)]);
      expect(await check()).toMatchObject({ kind: 'allow' });
    });
  });

  describe('admit (failure mode allow)', () => {
    it('records usage and the sealed credential without a snapshot', async () => {
      expect(await cache.admit(ID, SEALED, { hits: 1 }, T0, 10_000)).toBe(true);
      expect(await cache.admit(ID, SEALED, { hits: 1 }, T0 + 1, 10_000)).toBe(false);
      const keys = credentialKeys(ID);
      expect(await redis.hgetall(keys.pending)).toEqual({ hits: '2' });
      expect(await redis.hgetall(keys.app)).toEqual({ cred: SEALED });
      expect(await check({ endpoint: undefined })).toEqual({ kind: 'miss' });
      expect(await cache.drain(ID, 't')).toEqual({
        kind: 'ready',
        sealedCredential: SEALED,
        usage: { hits: 2 },
        resent: false,
      });
    });
  });

  describe('drain, acknowledge and release', () => {
    it('moves pending to in flight under a lease, and resends in-flight usage unchanged after a failure', async () => {
      const keys = credentialKeys(ID);
      expect(await cache.drain(ID, 'lease-0')).toEqual({ kind: 'empty' });
      await storeActive([hourly('hits', 100, 0)]);
      await check({ usage: { get_word: 2 } });
      expect(await cache.drain(ID, 'lease-1')).toEqual({
        kind: 'ready',
        sealedCredential: SEALED,
        usage: { get_word: 2 },
        resent: false,
      });
      expect(await cache.drain(ID, 'lease-2')).toEqual({ kind: 'busy' });
      await check({ usage: { get_word: 5 } });
      await cache.release(ID, 'not-mine');
      expect(await cache.drain(ID, 'lease-2')).toEqual({ kind: 'busy' });
      await cache.release(ID, 'lease-1');
      expect(await cache.drain(ID, 'lease-2')).toEqual({
        kind: 'ready',
        sealedCredential: SEALED,
        usage: { get_word: 2 },
        resent: true,
      });
      expect(await redis.hgetall(keys.pending)).toEqual({ get_word: '5' });
      await cache.acknowledge(ID, 'lease-2', T0 + 1);
      expect(await redis.exists(keys.inFlight, keys.lease)).toBe(0);
      expect(await redis.get(keys.since)).toBe(String(T0));
      expect(await cache.drain(ID, 'lease-3')).toEqual({
        kind: 'ready',
        sealedCredential: SEALED,
        usage: { get_word: 5 },
        resent: false,
      });
      await cache.acknowledge(ID, 'lease-3', T0 + 2);
      expect(await redis.exists(keys.since, keys.pending, keys.inFlight, keys.lease)).toBe(0);
      expect(await redis.pttl(keys.app)).toBeGreaterThan(0);
      expect(await cache.drain(ID, 'lease-4')).toEqual({ kind: 'empty' });
    });

    it('a late acknowledgement after the lease passed to another reporter leaves its in-flight usage', async () => {
      const keys = credentialKeys(ID);
      await storeActive([hourly('hits', 100, 0)]);
      await check({ usage: { get_word: 2 } });
      await cache.drain(ID, 'lease-slow');
      await redis.del(keys.lease);
      expect(await cache.drain(ID, 'lease-2')).toMatchObject({ kind: 'ready', resent: true });
      await cache.acknowledge(ID, 'lease-2', T0 + 1);
      await check({ usage: { get_word: 5 } });
      expect(await cache.drain(ID, 'lease-3')).toMatchObject({ kind: 'ready', usage: { get_word: 5 } });
      await cache.acknowledge(ID, 'lease-slow', T0 + 2);
      expect(await redis.hgetall(keys.inFlight)).toEqual({ get_word: '5' });
      expect(await redis.get(keys.lease)).toBe('lease-3');
      expect(await redis.hget(keys.app, 'limit:hour:hits')).toBe(`${END} 100 2`);
      await cache.acknowledge(ID, 'lease-3', T0 + 3);
      expect(await redis.exists(keys.since, keys.pending, keys.inFlight, keys.lease)).toBe(0);
      expect(await redis.hget(keys.app, 'limit:hour:hits')).toBe(`${END} 100 7`);
    });

    it('does not fold accepted usage into a period that is over', async () => {
      await storeActive([hourly('hits', 100, 7)]);
      await check();
      await cache.drain(ID, 'l');
      await cache.acknowledge(ID, 'l', END);
      expect(await redis.hget(credentialKeys(ID).app, 'limit:hour:hits')).toBe(`${END} 100 7`);
    });

    it('reports a credential whose sealed value is gone as unreadable, keeping its usage', async () => {
      await storeActive([hourly('hits', 100, 0)]);
      await check();
      await redis.hdel(credentialKeys(ID).app, 'cred');
      expect(await cache.drain(ID, 'l')).toEqual({ kind: 'unreadable' });
      expect(await redis.hgetall(credentialKeys(ID).inFlight)).toEqual({ get_word: '1' });
    });
  });

  describe('unreported usage scan', () => {
    it('finds credentials whose oldest unreported usage is old enough, up to a limit', async () => {
      const ids = ['1', '2', '3'].map((c) => c.repeat(64));
      for (const [i, id] of ids.entries()) await cache.admit(id, SEALED, { hits: 1 }, T0 + i * 1000, 0);
      await redis.set('am:{unrelated}:since', '0');
      expect((await cache.unreportedSince(T0 + 1000, 10)).sort()).toEqual([ids[0], ids[1]]);
      expect(await cache.unreportedSince(T0 - 1, 10)).toEqual([]);
      expect(await cache.unreportedSince(T0 + 5000, 2)).toHaveLength(2);
    });

    it('finds the usage of many credentials, wherever their keys live, within the limit', async () => {
      const ids = Array.from({ length: 40 }, (_, i) => i.toString(16).padStart(64, 'a'));
      for (const id of ids) await cache.admit(id, SEALED, { hits: 1 }, T0, 0);
      expect((await cache.unreportedSince(T0, 100)).sort()).toEqual([...ids].sort());
      const some = await cache.unreportedSince(T0, 10);
      expect(new Set(some).size).toBe(10);
      for (const id of some) expect(ids).toContain(id);
    });
  });
}
