/**
 * The plugin's Redis connection, from what the application gives: a URL, host/port settings, or an
 * ioredis client. Whatever is given, the plugin talks through its own connection with the core's
 * deadlines (core/budget/redis-client.ts): no offline queue and a command timeout, so a hung or
 * unreachable Redis costs a call one command deadline and never parks it in a queue. A client given
 * is never closed by the plugin; its own duplicate is.
 */
import type { Cluster, Redis, RedisOptions } from 'ioredis';
import {
  commandTimeoutOf,
  createRedisClient,
  guardedCluster,
  isCluster,
  type RedisConnection,
  redisOptions,
} from '../core/budget/redis-client';
import type { LogPort } from '../core/observability/observability';
import {
  type AccessConfigInput,
  ConfigError,
  DEFAULT_REDIS_PORT,
  integer,
  REDIS_MODES,
  type RedisMode,
  type RedisSettings,
} from '../core/settings/config';
import { withCommandDeadlines } from './command-deadlines';

/** Host/port settings, as the settings table's `redis` takes them, or a URL with an optional mode. */
export type RedisSettingsInput =
  | NonNullable<AccessConfigInput['redis']>
  | { readonly url: string; readonly mode?: RedisMode };

export type RedisInput = string | RedisConnection | RedisSettingsInput;

/** What the plugin connects with: settings it turns into a client, or a client whose endpoint it copies. */
export type RedisSource =
  | { readonly kind: 'settings'; readonly settings: RedisSettings }
  | { readonly kind: 'client'; readonly client: RedisConnection };

const URL_SCHEMES: Readonly<Record<string, boolean>> = { 'redis:': false, 'rediss:': true };

/**
 * `redis://[[user]:password@]host[:port]` or `rediss://...` (TLS); a user name is an ACL user (MemoryDB).
 * Throws ConfigError naming `redis`.
 */
export function redisSettingsOfUrl(text: string, mode: RedisMode = 'standalone'): RedisSettings {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new ConfigError('redis', 'must be a redis:// or rediss:// URL');
  }
  const tls = URL_SCHEMES[url.protocol];
  if (tls === undefined)
    throw new ConfigError('redis', `must be a redis:// or rediss:// URL (got ${url.protocol})`);
  if (url.hostname === '') throw new ConfigError('redis', 'URL names no host');
  const password = decodeURIComponent(url.password);
  const username = decodeURIComponent(url.username);
  return {
    mode,
    host: url.hostname.replace(/^\[(.*)\]$/, '$1'),
    port: url.port === '' ? DEFAULT_REDIS_PORT : integer('redis', Number(url.port), 1, 65535),
    tls,
    ...(username !== '' && { username }),
    ...(password !== '' && { password }),
  };
}

function isClient(input: RedisInput): input is RedisConnection {
  return (
    typeof input === 'object' &&
    input !== null &&
    typeof (input as { duplicate?: unknown }).duplicate === 'function'
  );
}

/** Checks the application's Redis setting; throws ConfigError naming `redis` or its field. */
export function redisSourceOf(input: RedisInput): RedisSource {
  if (typeof input === 'string') return { kind: 'settings', settings: redisSettingsOfUrl(input) };
  if (isClient(input)) return { kind: 'client', client: input };
  if (typeof input !== 'object' || input === null) {
    throw new ConfigError('redis', 'must be a URL, an ioredis client, or { host, port, tls, mode }');
  }
  if ('url' in input) {
    const mode = input.mode ?? 'standalone';
    if (!REDIS_MODES.includes(mode))
      throw new ConfigError('redis.mode', `must be one of ${REDIS_MODES.join(', ')}`);
    return { kind: 'settings', settings: redisSettingsOfUrl(input.url, mode) };
  }
  // parseConfig's own checks of the table's redis settings.
  const parsed = parseRedisSettings(input);
  return { kind: 'settings', settings: parsed };
}

function parseRedisSettings(input: NonNullable<AccessConfigInput['redis']>): RedisSettings {
  if (typeof input.host !== 'string' || input.host === '')
    throw new ConfigError('redis.host', 'must be a host name');
  const mode = input.mode ?? 'standalone';
  if (!REDIS_MODES.includes(mode))
    throw new ConfigError('redis.mode', `must be one of ${REDIS_MODES.join(', ')}`);
  return {
    ...input,
    mode,
    port: integer('redis.port', input.port ?? DEFAULT_REDIS_PORT, 1, 65535),
    tls: input.tls ?? false,
  };
}

/**
 * The options a duplicate of the application's client gets: nothing queued, and the core's deadlines
 * unless the client has a command timeout of its own (the application's choice of deadline is kept).
 */
function deadlineOptions(own: number | undefined): Partial<RedisOptions> {
  const { lazyConnect, connectTimeout, commandTimeout, enableOfflineQueue, maxRetriesPerRequest } =
    redisOptions({ host: '', port: 0, tls: false });
  return {
    lazyConnect,
    connectTimeout,
    commandTimeout: own ?? commandTimeout,
    enableOfflineQueue,
    maxRetriesPerRequest,
    autoResendUnfulfilledCommands: false,
  };
}

/**
 * The plugin's own connection (not yet connected); the caller closes it. Its command deadline is kept by
 * one timer for the connection (command-deadlines.ts), not one per command.
 */
export function connectionOf(source: RedisSource, logger: LogPort): RedisConnection {
  const connection = unwatchedConnectionOf(source, logger);
  const timeoutMs = commandTimeoutOf(connection);
  return timeoutMs === undefined ? connection : withCommandDeadlines(connection, timeoutMs);
}

function unwatchedConnectionOf(source: RedisSource, logger: LogPort): RedisConnection {
  if (source.kind === 'settings') return createRedisClient(source.settings, { logger });
  const options = deadlineOptions(commandTimeoutOf(source.client));
  const client = isCluster(source.client)
    ? guardedCluster(
        (source.client as Cluster).duplicate(undefined, {
          lazyConnect: true,
          enableOfflineQueue: false,
          retryDelayOnFailover: 0,
          retryDelayOnMoved: 0,
          redisOptions: { ...source.client.options.redisOptions, ...options },
        }),
      )
    : (source.client as Redis).duplicate(options);
  client.on('error', (error: Error & { code?: string }) => {
    logger.warn('redis connection error', { error: error.message, code: error.code });
  });
  return client;
}
