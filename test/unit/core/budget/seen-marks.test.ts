/** Marks of credentials the platform said exist: per budget and key, outliving the snapshot. */
import type Redis from 'ioredis';
import RedisMock from 'ioredis-mock';
import { beforeEach, describe, expect, it } from 'vitest';
import { credentialKeys } from '../../../../core/budget/keys';
import type { RedisConnection } from '../../../../core/budget/redis-client';
import { redisSeenMarks, SEEN_MARK_TTL_SECONDS } from '../../../../core/budget/seen-marks';

const SERVICE = 's1';
const BUDGET = 'a'.repeat(64);
let redis: Redis;

beforeEach(async () => {
  redis = new RedisMock() as unknown as Redis;
  await redis.flushall();
});

describe('seen marks', () => {
  it('mark a key of a budget for 30 days, apart from its other keys, other budgets and other services', async () => {
    const marks = redisSeenMarks(redis as unknown as RedisConnection, SERVICE);
    await marks.mark(BUDGET, 'key-1');
    expect(await marks.has(BUDGET, 'key-1')).toBe(true);
    expect(await marks.has(BUDGET, 'key-2')).toBe(false);
    expect(await marks.has('b'.repeat(64), 'key-1')).toBe(false);
    expect(await redisSeenMarks(redis as unknown as RedisConnection, 'other').has(BUDGET, 'key-1')).toBe(
      false,
    );
    const ttl = await redis.ttl(credentialKeys(SERVICE, BUDGET).seen);
    expect(ttl).toBeGreaterThan(SEEN_MARK_TTL_SECONDS - 5);
    expect(ttl).toBeLessThanOrEqual(SEEN_MARK_TTL_SECONDS);
  });

  it('outlive the snapshot: deleting the budget hash leaves them', async () => {
    const marks = redisSeenMarks(redis as unknown as RedisConnection, SERVICE);
    await marks.mark(BUDGET, '');
    await redis.del(credentialKeys(SERVICE, BUDGET).app);
    expect(await marks.has(BUDGET, '')).toBe(true);
  });

  it('say unknown when Redis fails, so the gate decides as for a credential never seen', async () => {
    redis.sismember = (() => Promise.reject(new Error('connection lost'))) as never;
    expect(await redisSeenMarks(redis as unknown as RedisConnection, SERVICE).has(BUDGET, '')).toBe(false);
  });
});
