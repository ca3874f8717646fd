/**
 * The scripts the Lambda bundles load on first use (AccessCache's LazyScripts): the reporter's batch
 * scripts with the reading of the drain's reply, and the SOAP proxy's give-back, each bundled in a file of
 * its own beside index.js (scripts/bundle-lambdas.ts). Run here from those files on a real redis-server,
 * on usage the cache recorded, as the bundled handlers run them.
 */
import { createRequire } from 'node:module';
import path from 'node:path';
import Redis from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AccessCache, ENTRY_TTL_MS } from '../../core/budget/cache';
import { credentialKeys } from '../../core/budget/keys';
import { type LocalRedis, startRedisServer } from '../../local/redis';

const SERVICE = 's1';
const ID = 'c'.repeat(64);
const T0 = Date.UTC(2030, 0, 1, 10, 0, 0);

type ReportBatchScripts = typeof import('../../core/budget/scripts/report-batch-scripts');
type GiveBackScript = typeof import('../../core/budget/scripts/give-back-script');

function bundled<Module>(bundle: string, file: string): Module {
  return createRequire(__filename)(path.resolve('dist/bundles', bundle, 'lazy', file)) as Module;
}

describe('the scripts the bundles load on first use', () => {
  let server: LocalRedis;
  let redis: Redis;

  beforeAll(async () => {
    server = await startRedisServer('/usr/bin/redis-server');
    redis = new Redis(server.port, server.host);
  });

  afterAll(async () => {
    redis?.disconnect();
    await server?.stop();
  });

  it("drain the usage the cache recorded, as the reporter's bundle reads it", async () => {
    const cache = new AccessCache(redis, { serviceId: SERVICE, negativeTtlMs: 60_000, leaseMs: 30_000 });
    await cache.admit(ID, 'v1.sealed', { hits: 2 }, T0, 0);
    const { DRAIN_SCRIPT, BATCH_MARK_TTL_MS, drainResultOf } = bundled<ReportBatchScripts>(
      'reporter',
      'core+budget+scripts+report-batch-scripts.js',
    );
    const keys = credentialKeys(SERVICE, ID);
    const reply = (await redis.eval(
      DRAIN_SCRIPT.lua,
      DRAIN_SCRIPT.numberOfKeys,
      ...[keys.app, keys.pending, keys.inFlight, keys.since, keys.lease, keys.refusals, keys.batch],
      ...['lease-1', 30_000, T0, ENTRY_TTL_MS, BATCH_MARK_TTL_MS, ''],
    )) as unknown[];
    expect(drainResultOf(reply.map(String))).toMatchObject({
      kind: 'ready',
      sealedCredential: 'v1.sealed',
      usage: { hits: 2 },
      history: 'none',
    });
  });

  it("give back the usage of a call, as the SOAP proxy's bundle does", async () => {
    await redis.flushall();
    const cache = new AccessCache(redis, { serviceId: SERVICE, negativeTtlMs: 60_000, leaseMs: 30_000 });
    await cache.admit(ID, 'v1.sealed', { hits: 3 }, T0, 0);
    const { GIVE_BACK_SCRIPT } = bundled<GiveBackScript>('soap', 'core+budget+scripts+give-back-script.js');
    const keys = credentialKeys(SERVICE, ID);
    const taken = await redis.eval(
      GIVE_BACK_SCRIPT.lua,
      GIVE_BACK_SCRIPT.numberOfKeys,
      ...[keys.app, keys.pending, keys.inFlight, keys.since],
      ...[ENTRY_TTL_MS, T0, 'hits', 1],
    );
    expect(taken).toEqual(['hits', '1']);
    expect(await redis.hget(keys.pending, `${T0}:hits`)).toBe('2');
  });
});
