/**
 * The token endpoint's attempt counters: fixed windows in Redis (a real redis-server) and in memory, the
 * fallback to memory while Redis fails, hashed names only, and the bounds' order in the settings.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { createRedisClient } from '../../../core/budget/redis-client';
import { ConfigError, parseConfig } from '../../../core/settings/config';
import {
  type GuessCounter,
  GuessLimit,
  guessCounterOf,
  memoryGuessCounter,
  redisGuessCounter,
} from '../../../lambdas/token/guess-limit';
import { freePort } from '../../../local/redis';
import { describeOnTopologies } from '../../support/redis-topology';
import { CapturingLogger } from '../core/fakes';

const BOUNDS = { tokenGuessWindowSeconds: 60, tokenGuessesPerAddress: 2, tokenGuessesPerClient: 3 };

async function takes(counter: GuessCounter, name: string, times: number, bound = 2, windowMs = 60_000) {
  const taken: boolean[] = [];
  for (let i = 0; i < times; i++) taken.push((await counter.take(name, bound, windowMs)).taken);
  return taken;
}

describe('the memory counter', () => {
  it('counts in a window the first attempt opens, gives back, and starts again when the window ends', async () => {
    let now = 1_000_000;
    const counter = memoryGuessCounter(() => now);
    expect(await takes(counter, 'a', 3)).toEqual([true, true, false]);
    expect(await counter.take('a', 2, 60_000)).toEqual({ taken: false, count: 2, resetInMs: 60_000 });
    await counter.giveBack('a');
    expect(await takes(counter, 'a', 2)).toEqual([true, false]);
    now += 60_000;
    expect(await takes(counter, 'a', 3)).toEqual([true, true, false]);
  });

  it('keeps at most its capacity of counters, the oldest dropped first', async () => {
    const counter = memoryGuessCounter(() => 0, 2);
    await takes(counter, 'a', 2);
    await takes(counter, 'b', 2);
    await takes(counter, 'c', 2);
    expect(await takes(counter, 'a', 1)).toEqual([true]);
  });
});

describeOnTopologies(['redis-server'], (redis) => {
  afterEach(async () => {
    await redis().flushAll();
  });

  it('counts in a window that expires with its key, and a give-back never outlives the window', async () => {
    const counter = redisGuessCounter(await redis().client());
    expect(await takes(counter, 'a', 3, 2, 300)).toEqual([true, true, false]);
    const [key] = await redis().keys();
    expect(key).toBe('tokguess:a');
    const refused = await counter.take('a', 2, 300);
    expect(refused.count).toBe(2);
    expect(refused.resetInMs).toBeGreaterThan(0);
    expect(refused.resetInMs).toBeLessThanOrEqual(300);
    await new Promise((resolve) => setTimeout(resolve, 350));
    await counter.giveBack('a');
    expect(await redis().keys()).toEqual([]);
    expect(await takes(counter, 'a', 3, 2, 300)).toEqual([true, true, false]);
  });

  it('names its counters by hashes: neither the client id nor the address is stored', async () => {
    const limit = new GuessLimit(
      'svc',
      BOUNDS,
      redisGuessCounter(await redis().client()),
      new CapturingLogger(),
    );
    expect((await limit.admit('client-secretive', '192.0.2.44')).ok).toBe(true);
    const keys = await redis().keys();
    expect(keys).toHaveLength(2);
    for (const key of keys) expect(key).toMatch(/^tokguess:(client|address):[0-9a-f]{64}$/);
    expect(keys.join()).not.toMatch(/client-secretive|192\.0\.2\.44/);
  });
});

describe('Redis unreachable', () => {
  it('counts in this instance with the same bounds, and warns', async () => {
    const logger = new CapturingLogger();
    const unreachable = createRedisClient(
      { mode: 'standalone', host: '127.0.0.1', port: await freePort(), tls: false },
      { connectTimeoutMs: 200 },
    );
    try {
      const limit = new GuessLimit('svc', BOUNDS, guessCounterOf(unreachable, logger), logger);
      const admitted = [];
      for (let i = 0; i < 4; i++) admitted.push((await limit.admit('client-1', '192.0.2.1')).ok);
      expect(admitted).toEqual([true, true, false, false]);
      expect((await limit.admit('client-1', '192.0.2.2')).ok).toBe(true);
      expect(logger.lines.filter((line) => line.level === 'warn').map((line) => line.message)).toContain(
        'token guess counters unavailable: counting in this instance alone',
      );
    } finally {
      unreachable.disconnect();
    }
  });
});

describe('the bounds', () => {
  it('per address must be lower than per client, so one address cannot lock a client out', () => {
    expect(() =>
      parseConfig({ serviceId: 's', tokenGuessesPerAddress: 50, tokenGuessesPerClient: 50 }),
    ).toThrow(ConfigError);
    expect(parseConfig({ serviceId: 's' })).toMatchObject({
      tokenGuessWindowSeconds: 300,
      tokenGuessesPerAddress: 10,
      tokenGuessesPerClient: 100,
    });
  });
});
