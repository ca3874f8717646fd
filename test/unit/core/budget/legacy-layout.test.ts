import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { credentialKeys, LEGACY_KEYS, serviceKeys } from '../../../../core/budget/keys';
import { adoptLegacyBudgets } from '../../../../core/budget/legacy-layout';
import type { RedisConnection } from '../../../../core/budget/redis-client';
import { startRedisTopology, type TestRedis } from '../../../support/redis-topology';

const SERVICE = '2555417735060';
const ID = 'a'.repeat(64);
const OTHER = 'b'.repeat(64);
const earlier = LEGACY_KEYS.budget(ID);
const current = credentialKeys(SERVICE, ID);
/** The test's ownership: the sealed credential names its service. */
const owns = (_id: string, sealed: string) => sealed === `sealed-for-${SERVICE}`;

let redis: TestRedis;
let client: RedisConnection;

beforeAll(async () => {
  redis = await startRedisTopology('redis-server');
  client = await redis.client();
});

afterAll(async () => {
  await redis?.stop();
});

beforeEach(async () => {
  await redis.flushAll();
  await client.hset(earlier.app, 'cred', `sealed-for-${SERVICE}`, 'plan', 'Basic');
  await client.set(earlier.since, '1000');
});

const adopt = () => adoptLegacyBudgets(client, serviceKeys(SERVICE), owns, 100);

describe('adopting budgets of the layout without the service', () => {
  it('renames what the new names lack, keeping TTLs, and leaves nothing under the earlier names', async () => {
    await client.hset(earlier.pending, '0:hits', '3', 't:0', '50');
    await client.hset(earlier.inFlight, '0:hits', '2');
    await client.set(earlier.batch, 'b-1 posting', 'PX', 60_000);
    await client.set(earlier.tokensNotBefore, '700', 'EX', 3600);
    expect(await adopt()).toEqual({ found: 1, adopted: 1, waiting: 0 });
    expect(await client.hgetall(current.pending)).toEqual({ '0:hits': '3', 't:0': '50' });
    expect(await client.hgetall(current.inFlight)).toEqual({ '0:hits': '2' });
    expect(await client.get(current.batch)).toBe('b-1 posting');
    expect(await client.pttl(current.batch)).toBeGreaterThan(0);
    expect(await client.ttl(current.tokensNotBefore)).toBeGreaterThan(0);
    expect(await client.hget(current.app, 'cred')).toBe(`sealed-for-${SERVICE}`);
    expect(await client.get(current.since)).toBe('1000');
    const left = await Promise.all(Object.values(earlier).map((key) => client.exists(key)));
    expect(left.every((exists) => exists === 0)).toBe(true);
  });

  it('adds usage up with what the new version counted meanwhile, keeps the later of each time, and drops its counts', async () => {
    await client.hset(earlier.pending, '0:hits', '3', 't:0', '50');
    await client.hset(current.pending, '0:hits', '1', 't:0', '40', '60:hits', '1');
    await client.hset(earlier.rejected, 'phantom', '2');
    await client.hset(current.rejected, 'phantom', '1');
    await client.hset(earlier.refusals, 'hour:hits', '90');
    await client.hset(current.refusals, 'hour:hits', '80');
    await client.set(earlier.tokensNotBefore, '700');
    await client.set(current.tokensNotBefore, '600');
    await client.sadd(earlier.seen, '');
    await client.sadd(current.seen, 'key-1');
    await client.hset(
      current.app,
      'cred',
      'the newer answer',
      'count:hour:hits',
      '3600000 100 2',
      'counted',
      '40',
    );
    await client.set(current.since, '2000');
    expect(await adopt()).toMatchObject({ adopted: 1 });
    // The counts the hit path reads no longer hold: the usage moved in is not in them.
    expect(await client.hget(current.app, 'counted')).toBeNull();
    expect(await client.hgetall(current.pending)).toEqual({ '0:hits': '4', 't:0': '50', '60:hits': '1' });
    expect(await client.hgetall(current.rejected)).toEqual({ phantom: '3' });
    expect(await client.hgetall(current.refusals)).toEqual({ 'hour:hits': '90' });
    expect(await client.get(current.tokensNotBefore)).toBe('700');
    expect((await client.smembers(current.seen)).sort()).toEqual(['', 'key-1']);
    expect(await client.hget(current.app, 'cred')).toBe('the newer answer');
    expect(await client.get(current.since)).toBe('1000');
  });

  it('leaves usage in flight under both names, with its since, for a later sweep', async () => {
    await client.hset(earlier.inFlight, '0:hits', '2');
    await client.hset(current.inFlight, '0:hits', '5');
    expect(await adopt()).toEqual({ found: 1, adopted: 0, waiting: 1 });
    expect(await client.hgetall(earlier.inFlight)).toEqual({ '0:hits': '2' });
    expect(await client.get(earlier.since)).toBe('1000');
    // Its credential moved already: the next sweep still knows the budget is the service's.
    await client.del(current.inFlight);
    expect(await adopt()).toEqual({ found: 1, adopted: 1, waiting: 0 });
    expect(await client.hgetall(current.inFlight)).toEqual({ '0:hits': '2' });
  });

  it("leaves another service's budget, and one without a credential, where they are", async () => {
    const other = LEGACY_KEYS.budget(OTHER);
    await client.hset(other.app, 'cred', 'sealed-for-another-service');
    await client.hset(other.pending, '0:hits', '1');
    await client.set(other.since, '1000');
    await client.del(earlier.app);
    await client.hset(earlier.pending, '0:hits', '1');
    expect(await adopt()).toEqual({ found: 2, adopted: 0, waiting: 0 });
    expect(await client.hgetall(other.pending)).toEqual({ '0:hits': '1' });
    expect(await client.hgetall(earlier.pending)).toEqual({ '0:hits': '1' });
  });
});
