import type Redis from 'ioredis';
import RedisMock from 'ioredis-mock';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { serviceKeys } from '../../../../core/budget/keys';
import type { RedisConnection } from '../../../../core/budget/redis-client';
import {
  addressCounterKey,
  addressShareOf,
  FirstCallGate,
  firstCallCounterKey,
} from '../../../../core/decision/first-call-gate';
import { startRedisTopology, type TestRedis } from '../../../support/redis-topology';

const SERVICE = 's1';
const KEYS = serviceKeys(SERVICE);
const T0 = 1_700_000_000_000;

/** A client whose eval calls are counted: each is one round trip of the gate. */
function countedClient(): { redis: Redis; evals: () => number } {
  const redis = new RedisMock() as unknown as Redis;
  let evals = 0;
  const evaluate = redis.eval.bind(redis) as (...args: unknown[]) => Promise<unknown>;
  redis.eval = ((...args: unknown[]) => {
    evals++;
    return evaluate(...args);
  }) as typeof redis.eval;
  return { redis, evals: () => evals };
}

async function admittedOf(gate: FirstCallGate, calls: number, now = T0, address?: string): Promise<number> {
  const answers = await Promise.all(Array.from({ length: calls }, () => gate.admits(now, address)));
  return answers.filter(Boolean).length;
}

describe('FirstCallGate', () => {
  beforeEach(async () => {
    await new RedisMock().flushall();
  });

  it('admits exactly the bound per second across instances, then refuses until the next second', async () => {
    const one = new FirstCallGate(countedClient().redis, SERVICE, 100);
    const other = new FirstCallGate(countedClient().redis, SERVICE, 100);
    const [fromOne, fromOther] = await Promise.all([admittedOf(one, 150), admittedOf(other, 150)]);
    expect(fromOne + fromOther).toBe(100);
    expect(await one.admits(T0 + 999)).toBe(false);
    expect(await admittedOf(one, 30, T0 + 1_000)).toBe(30);
  });

  it("counts each service apart on a shared Redis: one service's flood leaves another's bound whole", async () => {
    const flooded = new FirstCallGate(countedClient().redis, SERVICE, 20);
    const other = new FirstCallGate(countedClient().redis, 's2', 20);
    expect(await admittedOf(flooded, 50)).toBe(20);
    expect(await admittedOf(other, 20)).toBe(20);
    expect(await other.admits(T0)).toBe(false);
  });

  it('leases calls by doubling: one round trip for a lone first call, a few for a burst', async () => {
    const { redis, evals } = countedClient();
    const gate = new FirstCallGate(redis, SERVICE, 1_600);
    expect(await gate.admits(T0)).toBe(true);
    expect(evals()).toBe(1);
    expect(await admittedOf(gate, 99)).toBe(99);
    // Leases of 2, 4, 8, 16, 32, 64 after the first: 127 calls leased for 100 used.
    expect(evals()).toBe(7);
    expect(await redis.get(firstCallCounterKey(KEYS, T0))).toBe('127');
  });

  it('counts calls stamped in a second the instance has left in the newer one, without leasing again', async () => {
    const { redis, evals } = countedClient();
    const gate = new FirstCallGate(redis, SERVICE, 1_600);
    const stamps = Array.from({ length: 100 }, (_, i) => (i % 2 === 0 ? T0 + 999 : T0 + 1_000));
    const answers = await Promise.all(stamps.map((now) => gate.admits(now)));
    expect(answers.every(Boolean)).toBe(true);
    expect(evals()).toBeLessThanOrEqual(10);
    expect(Number(await redis.get(firstCallCounterKey(KEYS, T0)))).toBeLessThanOrEqual(1);
  });

  it('never leases more than a sixteenth of the bound at once', async () => {
    const { redis } = countedClient();
    const gate = new FirstCallGate(redis, SERVICE, 32);
    expect(await admittedOf(gate, 5)).toBe(5);
    expect(await redis.get(firstCallCounterKey(KEYS, T0))).toBe('5');
  });

  it("gives one source address a small share of the second's bound, exact across instances", async () => {
    const one = new FirstCallGate(countedClient().redis, SERVICE, 20);
    const other = new FirstCallGate(countedClient().redis, SERVICE, 20);
    const flood = '198.51.100.7';
    const [fromOne, fromOther] = await Promise.all([
      admittedOf(one, 150, T0, flood),
      admittedOf(other, 150, T0, flood),
    ]);
    expect(fromOne + fromOther).toBe(addressShareOf(20));
    // The rest of the second is left to other addresses, and the whole bound still holds.
    const others = await Promise.all(
      Array.from({ length: 40 }, (_, i) => (i % 2 === 0 ? one : other).admits(T0, `203.0.113.${i}`)),
    );
    expect(others.filter(Boolean).length).toBe(20 - addressShareOf(20));
    // The next second the address has its share again.
    expect(await admittedOf(one, 10, T0 + 1_000, flood)).toBe(addressShareOf(20));
  });

  it("leases an address's share as the second's: a burst from one address pays a few round trips, never past the share", async () => {
    const { redis, evals } = countedClient();
    const gate = new FirstCallGate(redis, SERVICE, 3_200);
    const address = '198.51.100.7';
    expect(await admittedOf(gate, 100, T0, address)).toBe(100);
    // The address's leases 1, 2, 4, 8, 16, then 20 (a sixteenth of its share of 320) four times; the
    // second's 1, 2, ... 64, its first with the address's first: 15 round trips for 100 calls, not 107.
    expect(evals()).toBe(15);
    expect(await redis.get(addressCounterKey(KEYS, T0, address))).toBe('111');
    const other = new FirstCallGate(countedClient().redis, SERVICE, 3_200);
    const [fromOne, fromOther] = await Promise.all([
      admittedOf(gate, 400, T0, address),
      admittedOf(other, 400, T0, address),
    ]);
    expect(100 + fromOne + fromOther).toBe(addressShareOf(3_200));
  });

  it("takes a lone first call's address lease and second's lease in one round trip", async () => {
    const { redis, evals } = countedClient();
    const gate = new FirstCallGate(redis, SERVICE, 100);
    expect(await gate.admits(T0, '198.51.100.7')).toBe(true);
    expect(evals()).toBe(1);
    expect(await redis.get(firstCallCounterKey(KEYS, T0))).toBe('1');
    expect(await redis.get(addressCounterKey(KEYS, T0, '198.51.100.7'))).toBe('1');
  });

  it("takes nothing of the second's bound for an address whose share another instance spent", async () => {
    const address = '198.51.100.7';
    expect(await admittedOf(new FirstCallGate(countedClient().redis, SERVICE, 20), 5, T0, address)).toBe(
      addressShareOf(20),
    );
    const { redis, evals } = countedClient();
    const other = new FirstCallGate(redis, SERVICE, 20);
    expect(await other.admits(T0, address)).toBe(false);
    expect(await other.admits(T0, address)).toBe(false);
    expect(evals()).toBe(1);
    expect(await redis.get(firstCallCounterKey(KEYS, T0))).toBe(String(addressShareOf(20)));
  });

  it('a call without a source address meets the whole bound only', async () => {
    expect(await admittedOf(new FirstCallGate(countedClient().redis, SERVICE, 20), 30)).toBe(20);
  });

  it('lets first calls through while Redis fails: the bound protects the platform, not against good calls', async () => {
    const { redis } = countedClient();
    redis.eval = (() => Promise.reject(new Error('connection lost'))) as unknown as typeof redis.eval;
    expect(await admittedOf(new FirstCallGate(redis, SERVICE, 1), 3)).toBe(3);
  });
});

describe('FirstCallGate on a Redis Cluster', () => {
  let redis: TestRedis;
  let client: RedisConnection;

  beforeAll(async () => {
    redis = await startRedisTopology('cluster');
    client = await redis.client();
  }, 60_000);

  afterAll(async () => {
    await redis?.stop();
  });

  // A Redis failure lets the call through, so a script refused across slots would pass unseen: the
  // counters tell whether it ran.
  it("takes an address's lease and the second's in one script, their keys in one slot", async () => {
    const gate = new FirstCallGate(client, SERVICE, 100);
    expect(await gate.admits(T0, '198.51.100.7')).toBe(true);
    expect(await client.get(firstCallCounterKey(KEYS, T0))).toBe('1');
    expect(await client.get(addressCounterKey(KEYS, T0, '198.51.100.7'))).toBe('1');
  });
});
