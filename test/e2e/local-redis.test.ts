import { afterEach, describe, expect, it } from 'vitest';
import { findOnPath, type LocalRedis, startLocalRedis } from '../../local/redis';

const started: LocalRedis[] = [];

afterEach(async () => {
  await Promise.all(started.splice(0).map((redis) => redis.stop()));
});

describe('local Redis choice', () => {
  it('starts a real redis-server from PATH on a free loopback port, and stops it', async () => {
    expect(findOnPath('redis-server')).toBeDefined();
    const warnings: string[] = [];
    const redis = await startLocalRedis('auto', (line) => warnings.push(line));
    started.push(redis);
    expect(redis.kind).toBe('redis-server');
    expect(redis.host).toBe('127.0.0.1');
    expect(warnings).toEqual([]);
    const { default: Redis } = await import('ioredis');
    const client = new Redis({
      host: redis.host,
      port: redis.port,
      lazyConnect: true,
      maxRetriesPerRequest: 0,
    });
    expect(await client.ping()).toBe('PONG');
    client.disconnect();
    await redis.stop();
    const after = new Redis({
      host: redis.host,
      port: redis.port,
      lazyConnect: true,
      retryStrategy: () => null,
    });
    after.on('error', () => undefined);
    await expect(after.connect()).rejects.toThrow();
    after.disconnect();
  });

  it('falls back to the in-memory stand-in with a warning when redis-server is not installed', async () => {
    const warnings: string[] = [];
    const redis = await startLocalRedis('auto', (line) => warnings.push(line), '/nonexistent-directory');
    started.push(redis);
    expect(redis.kind).toBe('in-memory');
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toContain('apt-get install redis-server');
    const writer = redis.createInMemoryClient?.();
    const reader = redis.createInMemoryClient?.();
    await writer?.set('shared', 'yes');
    expect(await reader?.get('shared')).toBe('yes');
  });

  it('keeps separate in-memory stacks apart', async () => {
    const first = await startLocalRedis('in-memory', () => undefined);
    const second = await startLocalRedis('in-memory', () => undefined);
    started.push(first, second);
    await first.createInMemoryClient?.().set('only-in-first', '1');
    expect(await second.createInMemoryClient?.().get('only-in-first')).toBeNull();
  });
});
