import { describe, expect, it } from 'vitest';
import {
  CLUSTER_RETRY_DELAY_MS,
  clusterOptions,
  commandTimeoutOf,
  createRedisClient,
  ensureConnected,
  isCluster,
  REDIS_COMMAND_TIMEOUT_MS,
  REDIS_CONNECT_TIMEOUT_MS,
  redisOptions,
} from '../../../../core/budget/redis-client';
import type { LogAttributes, LogPort } from '../../../../core/observability/observability';
import { freePort as closedPort } from '../../../../local/redis';

function capturingLogger() {
  const lines: { level: string; message: string; attributes: LogAttributes[] }[] = [];
  const log =
    (level: string) =>
    (message: string, ...attributes: LogAttributes[]) =>
      lines.push({ level, message, attributes });
  const logger: LogPort = { debug: log('debug'), info: log('info'), warn: log('warn'), error: log('error') };
  return { logger, lines };
}

describe('redis client settings', () => {
  it('are fit for Lambda: lazy, bounded timeouts, no offline queue, one retry', () => {
    const options = redisOptions({ host: 'cache.local', port: 6380, tls: false });
    expect(options).toMatchObject({
      host: 'cache.local',
      port: 6380,
      lazyConnect: true,
      enableOfflineQueue: false,
      maxRetriesPerRequest: 1,
      autoResendUnfulfilledCommands: false,
    });
    expect(options.connectTimeout).toBeLessThanOrEqual(1000);
    expect(options.commandTimeout).toBeLessThanOrEqual(300);
    expect(options.connectTimeout).toBe(REDIS_CONNECT_TIMEOUT_MS);
    expect(options.commandTimeout).toBe(REDIS_COMMAND_TIMEOUT_MS);
    expect(options.tls).toBeUndefined();
    expect(options.password).toBeUndefined();
  });

  it('never connect longer than the bound, and take the command timeout the caller gives', () => {
    const options = redisOptions(
      { host: 'h', port: 1, tls: false },
      { connectTimeoutMs: 60_000, commandTimeoutMs: 2_000 },
    );
    expect(options.connectTimeout).toBe(1000);
    expect(options.commandTimeout).toBe(2_000);
    expect(redisOptions({ host: 'h', port: 1, tls: false }, { commandTimeoutMs: 50 }).commandTimeout).toBe(
      50,
    );
  });

  it('use TLS and AUTH when configured, the secret token over the configured password', () => {
    expect(redisOptions({ host: 'h', port: 1, tls: true, password: 'from-env' })).toMatchObject({
      tls: { servername: 'h' },
      password: 'from-env',
    });
    expect(
      redisOptions({ host: 'h', port: 1, tls: true, password: 'from-env' }, { password: 'from-secret' })
        .password,
    ).toBe('from-secret');
  });

  it('authenticate as the ACL user when a user name is configured, and as the default user otherwise', () => {
    const options = redisOptions(
      { host: 'h', port: 1, tls: true, username: 'access-management' },
      { password: 'from-secret' },
    );
    expect(options).toMatchObject({ username: 'access-management', password: 'from-secret' });
    expect(redisOptions({ host: 'h', port: 1, tls: true, password: 'p' }).username).toBeUndefined();
  });

  it('keep retrying to reconnect, with a bounded delay', () => {
    const retry = redisOptions({ host: 'h', port: 1, tls: false }).retryStrategy;
    expect(retry?.(1)).toBe(100);
    expect(retry?.(1000)).toBe(2000);
  });
});

describe('redis cluster client settings', () => {
  const endpoint = { mode: 'cluster', host: 'clustercfg.cache.example', port: 6379, tls: true } as const;

  it('give every node connection the standalone deadlines, AUTH and TLS, and never resend', () => {
    const options = clusterOptions({ ...endpoint, password: 'from-env' }, { password: 'from-secret' });
    expect(options).toMatchObject({
      lazyConnect: true,
      enableOfflineQueue: false,
      // A command whose connection closed may have run: never sent again (ioredis would after 100 ms).
      retryDelayOnFailover: 0,
      // MOVED, ASK, TRYAGAIN and CLUSTERDOWN are refusals of a command that did not run: sent again.
      retryDelayOnMoved: 0,
      retryDelayOnTryAgain: CLUSTER_RETRY_DELAY_MS,
      retryDelayOnClusterDown: CLUSTER_RETRY_DELAY_MS,
      scaleReads: 'master',
      slotsRefreshTimeout: REDIS_CONNECT_TIMEOUT_MS,
      enableReadyCheck: false,
      redisOptions: {
        connectTimeout: REDIS_CONNECT_TIMEOUT_MS,
        commandTimeout: REDIS_COMMAND_TIMEOUT_MS,
        autoResendUnfulfilledCommands: false,
        password: 'from-secret',
        tls: { servername: 'clustercfg.cache.example' },
      },
    });
    for (const owned of ['host', 'port', 'retryStrategy', 'enableOfflineQueue']) {
      expect(options.redisOptions).not.toHaveProperty(owned);
    }
    expect(options.clusterRetryStrategy?.(1000)).toBe(2000);
  });

  it('keep host names as given with TLS (ElastiCache certificates name hosts, not addresses)', () => {
    const lookup = clusterOptions(endpoint).dnsLookup;
    const resolved: string[] = [];
    lookup?.('clustercfg.cache.example', (_error, address) => resolved.push(address));
    expect(resolved).toEqual(['clustercfg.cache.example']);
    expect(clusterOptions({ ...endpoint, tls: false }).dnsLookup).toBeUndefined();
  });

  it('make a Cluster client on the endpoint and the seeds, lazy, with the command timeout', () => {
    const client = createRedisClient({ ...endpoint, seeds: [{ host: 'node-2.example', port: 6380 }] });
    try {
      expect(isCluster(client)).toBe(true);
      expect(client.status).toBe('wait');
      expect(commandTimeoutOf(client)).toBe(REDIS_COMMAND_TIMEOUT_MS);
      expect((client as unknown as { startupNodes: unknown[] }).startupNodes).toEqual([
        { host: 'clustercfg.cache.example', port: 6379 },
        { host: 'node-2.example', port: 6380 },
      ]);
    } finally {
      client.disconnect();
    }
    const standalone = createRedisClient({ host: 'h', port: 1, tls: false });
    expect(isCluster(standalone)).toBe(false);
    expect(commandTimeoutOf(standalone)).toBe(REDIS_COMMAND_TIMEOUT_MS);
    standalone.disconnect();
  });
});

describe('redis client against an unreachable server', () => {
  it('fails the connect fast, logs the error without the password, and never queues commands', async () => {
    const { logger, lines } = capturingLogger();
    const client = createRedisClient(
      { host: '127.0.0.1', port: await closedPort(), tls: false, password: 'redis-secret-token' },
      { logger },
    );
    try {
      await expect(ensureConnected(client)).rejects.toThrow();
      await expect(client.get('k')).rejects.toThrow();
      expect(lines.length).toBeGreaterThan(0);
      expect(lines[0]).toMatchObject({ level: 'warn', message: 'redis connection error' });
      expect(JSON.stringify(lines)).not.toContain('redis-secret-token');
    } finally {
      client.disconnect();
    }
  });

  it('waits a bounded time for a client that is reconnecting, then gives up', async () => {
    const client = createRedisClient({ host: '127.0.0.1', port: await closedPort(), tls: false });
    try {
      await expect(ensureConnected(client)).rejects.toThrow();
      expect(['reconnecting', 'connecting', 'connect']).toContain(client.status);
      await expect(ensureConnected(client, 50)).rejects.toThrow('redis not ready within 50 ms');
    } finally {
      client.disconnect();
    }
  });

  it('keeps one ready listener however many calls wait for a reconnecting client', async () => {
    const client = createRedisClient({ host: '127.0.0.1', port: await closedPort(), tls: false });
    try {
      await expect(ensureConnected(client)).rejects.toThrow();
      const before = client.listenerCount('ready');
      const waits = Array.from({ length: 20 }, () => ensureConnected(client, 50));
      expect(client.listenerCount('ready')).toBe(before + 1);
      for (const wait of waits) await expect(wait).rejects.toThrow('redis not ready within 50 ms');
    } finally {
      client.disconnect();
    }
  });
});

describe('redis cluster client against unreachable seeds', () => {
  it('fails the connect within its bound, logs without the password, and never queues commands', async () => {
    const { logger, lines } = capturingLogger();
    const seeds = [{ host: '127.0.0.1', port: await closedPort() }];
    const client = createRedisClient(
      {
        mode: 'cluster',
        host: '127.0.0.1',
        port: await closedPort(),
        seeds,
        tls: false,
        password: 'redis-secret-token',
      },
      { logger },
    );
    try {
      const startedAt = performance.now();
      await expect(ensureConnected(client)).rejects.toThrow();
      expect(performance.now() - startedAt).toBeLessThan(3 * REDIS_CONNECT_TIMEOUT_MS);
      const sent = performance.now();
      await expect(client.get('k')).rejects.toThrow();
      expect(performance.now() - sent).toBeLessThan(REDIS_COMMAND_TIMEOUT_MS);
      expect(lines.length).toBeGreaterThan(0);
      expect(JSON.stringify(lines)).not.toContain('redis-secret-token');
    } finally {
      client.disconnect();
    }
  });
});
