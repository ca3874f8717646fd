import Redis from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AccessCache } from '../../../../core/budget/cache';
import { commandFateOf } from '../../../../core/budget/command-fate';
import { createRedisClient, ensureConnected } from '../../../../core/budget/redis-client';
import { freePort } from '../../../../local/redis';
import { startRedisTopology, type TestRedis } from '../../../support/redis-topology';

/** A script that counts its runs: whether a failed call ran it is then read back. */
const COUNT_RUN = "return redis.call('INCR', KEYS[1])";
/** Keeps Redis busy for ARGV[1] ms (one script at a time: every other command waits). */
const BUSY = `local t = redis.call('TIME')
local until_us = t[1] * 1000000 + t[2] + ARGV[1] * 1000
repeat t = redis.call('TIME') until t[1] * 1000000 + t[2] >= until_us
return 0`;

let redis: TestRedis;

beforeAll(async () => {
  redis = await startRedisTopology('redis-server');
});

afterAll(async () => {
  await redis.stop();
});

async function failureOf(work: Promise<unknown>): Promise<unknown> {
  return work.then(
    () => expect.fail('the command succeeded'),
    (error: unknown) => error,
  );
}

describe('commandFateOf, on the errors a real client and server give', () => {
  it('a command sent before the client connected never reached Redis: not_run', async () => {
    const client = createRedisClient(redis.settings);
    try {
      const error = await failureOf(client.eval(COUNT_RUN, 1, 'fate:offline'));
      expect(commandFateOf(error)).toBe('not_run');
      const admin = await redis.client();
      expect(await admin.get('fate:offline')).toBeNull();
    } finally {
      client.disconnect();
    }
  });

  it('a script of a cache whose client cannot connect is never sent: not_run', async () => {
    const port = await freePort();
    const client = createRedisClient({ ...redis.settings, host: '127.0.0.1', port });
    const cache = new AccessCache(client, {
      serviceId: 's',
      negativeTtlMs: 1000,
      leaseMs: 1000,
      readyWaitMs: 200,
    });
    try {
      const error = await failureOf(cache.releaseFirstCall('app', 'token'));
      expect(commandFateOf(error)).toBe('not_run');
    } finally {
      client.disconnect();
    }
  });

  it('a command that timed out on a busy Redis ran all the same: may_have_run', async () => {
    const client = createRedisClient(redis.settings, { commandTimeoutMs: 100 });
    const blocker = new Redis({ host: redis.settings.host, port: redis.settings.port, lazyConnect: true });
    try {
      await ensureConnected(client);
      await blocker.connect();
      const busy = blocker.eval(BUSY, 0, 400);
      const error = await failureOf(client.eval(COUNT_RUN, 1, 'fate:timeout'));
      expect(commandFateOf(error)).toBe('may_have_run');
      await busy;
      const admin = await redis.client();
      // The script ran once Redis woke up: an authrep for this call would count it a second time.
      expect(await admin.get('fate:timeout')).toBe('1');
    } finally {
      client.disconnect();
      blocker.disconnect();
    }
  });

  it('Redis refusing a script before running it (a failover under way): not_run; an unknown error: may_have_run', () => {
    expect(commandFateOf(new Error('CLUSTERDOWN The cluster is down'))).toBe('not_run');
    expect(commandFateOf(new Error('TRYAGAIN Multiple keys request during rehashing of slot'))).toBe(
      'not_run',
    );
    expect(commandFateOf(new Error('Connection is closed.'))).toBe('may_have_run');
    expect(commandFateOf('not an error')).toBe('may_have_run');
  });
});
