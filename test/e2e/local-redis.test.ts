import { existsSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { createRedisClient, ensureConnected, isCluster } from '../../core/budget/redis-client';
import { findOnPath, type LocalRedis, type LocalRedisCluster, startLocalRedis } from '../../local/redis';

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

  it('starts a cluster of three primaries on free loopback ports, usable in cluster mode, and stops it', async () => {
    const redis = (await startLocalRedis('cluster', () => undefined)) as LocalRedisCluster;
    started.push(redis);
    expect(redis.kind).toBe('redis-cluster');
    expect(redis.nodes).toHaveLength(3);
    expect(new Set(redis.nodes.map((node) => node.port)).size).toBe(3);
    expect(redis.settings).toMatchObject({ mode: 'cluster', host: '127.0.0.1', port: redis.nodes[0]?.port });
    const client = createRedisClient(redis.settings);
    try {
      if (!isCluster(client)) throw new Error('cluster settings made a standalone client');
      await ensureConnected(client);
      expect(client.nodes('master')).toHaveLength(3);
      const keys = Array.from({ length: 30 }, (_, i) => `am:{local-${i}}:since`);
      for (const key of keys) await client.set(key, '1');
      const perPrimary = await Promise.all(client.nodes('master').map((node) => node.dbsize()));
      expect(perPrimary.reduce((sum, n) => sum + n, 0)).toBe(keys.length);
      expect(perPrimary.every((n) => n > 0)).toBe(true);
      // No persistence: nothing but the nodes' cluster files, in a folder the stop removes.
      expect(await client.nodes('master')[0]?.config('GET', 'save')).toEqual(['save', '']);
    } finally {
      client.disconnect();
    }
    const folder = String(
      redis.nodes[0]?.child.spawnargs[redis.nodes[0].child.spawnargs.indexOf('--dir') + 1],
    );
    expect(existsSync(folder)).toBe(true);
    await redis.stop();
    expect(existsSync(folder)).toBe(false);
    for (const node of redis.nodes)
      expect(node.child.exitCode !== null || node.child.signalCode !== null).toBe(true);
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
