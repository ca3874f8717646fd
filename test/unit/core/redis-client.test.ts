import { describe, expect, it } from 'vitest';
import type { LogAttributes, LogPort } from '../../../lambdas/core/observability';
import {
  createRedisClient,
  ensureConnected,
  REDIS_COMMAND_TIMEOUT_MS,
  REDIS_CONNECT_TIMEOUT_MS,
  redisOptions,
} from '../../../lambdas/core/redis-client';
import { freePort as closedPort } from '../../../local/redis';

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

  it('keep retrying to reconnect, with a bounded delay', () => {
    const retry = redisOptions({ host: 'h', port: 1, tls: false }).retryStrategy;
    expect(retry?.(1)).toBe(100);
    expect(retry?.(1000)).toBe(2000);
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
});
