/**
 * The one ioredis client of a container (Lambda, local stack, bench), with settings fit for Lambda:
 * a command fails fast instead of waiting in an offline queue, so the authorizer can fall back to the
 * platform within its own timeout (invariant 8).
 */
import Redis, { type RedisOptions } from 'ioredis';
import type { RedisSettings } from './config';
import { type LogPort, silentLogger } from './observability';

/** Bounds of a TCP (+TLS, +AUTH) connect, and of one command; the authorizer's budget depends on them. */
export const REDIS_CONNECT_TIMEOUT_MS = 1000;
export const REDIS_COMMAND_TIMEOUT_MS = 300;
const MAX_RECONNECT_DELAY_MS = 2000;

export interface RedisClientOptions {
  /** AUTH token read from Secrets Manager; settings.password is used when absent. */
  readonly password?: string;
  readonly logger?: LogPort;
  readonly connectTimeoutMs?: number;
  /**
   * Default REDIS_COMMAND_TIMEOUT_MS, the Lambda bound. Only the local stack sets another: it runs every
   * function on one event loop, where a burst of concurrent calls can hold a reply longer than a Lambda
   * container ever would.
   */
  readonly commandTimeoutMs?: number;
}

export function redisOptions(settings: RedisSettings, options: RedisClientOptions = {}): RedisOptions {
  const password = options.password ?? settings.password;
  return {
    host: settings.host,
    port: settings.port,
    ...(password !== undefined && { password }),
    ...(settings.tls && { tls: { servername: settings.host } }),
    lazyConnect: true,
    connectTimeout: Math.min(options.connectTimeoutMs ?? REDIS_CONNECT_TIMEOUT_MS, REDIS_CONNECT_TIMEOUT_MS),
    commandTimeout: options.commandTimeoutMs ?? REDIS_COMMAND_TIMEOUT_MS,
    enableOfflineQueue: false,
    maxRetriesPerRequest: 1,
    // A command cut off by a dropped connection is not sent again once it is back: its caller has
    // already answered without it (the authorizer through the platform), so a resend counts twice.
    autoResendUnfulfilledCommands: false,
    // A frozen Lambda finds its socket closed on thaw: reconnect soon, never give up.
    retryStrategy: (attempt) => Math.min(attempt * 100, MAX_RECONNECT_DELAY_MS),
  };
}

/** Creates the client (not yet connected) and attaches the error listener; errors are logged without secrets. */
export function createRedisClient(settings: RedisSettings, options: RedisClientOptions = {}): Redis {
  const logger = options.logger ?? silentLogger;
  const client = new Redis(redisOptions(settings, options));
  client.on('error', (error: Error & { code?: string }) => {
    logger.warn('redis connection error', { error: error.message, code: error.code });
  });
  return client;
}

const connecting = new WeakMap<Redis, Promise<void>>();

/**
 * Connects a lazy client on its first use (concurrent callers share that one connect), and waits at
 * most `waitMs` for a client that is reconnecting: without an offline queue a command sent meanwhile
 * would fail at once. The authorizer waits briefly (a Redis outage must not add a connect timeout to
 * every call); the reporter, which nobody waits for, waits the connect timeout.
 */
export async function ensureConnected(client: Redis, waitMs = REDIS_CONNECT_TIMEOUT_MS): Promise<void> {
  const pending = connecting.get(client);
  if (pending) return pending;
  switch (client.status) {
    case 'wait': {
      const connect = client.connect().finally(() => connecting.delete(client));
      connecting.set(client, connect);
      return connect;
    }
    case 'connect':
    case 'connecting':
    case 'reconnecting':
      return waitForReady(client, waitMs);
    default:
      return;
  }
}

function waitForReady(client: Redis, timeoutMs: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      client.off('ready', onReady);
      reject(new Error(`redis not ready within ${timeoutMs} ms`));
    }, timeoutMs);
    const onReady = () => {
      clearTimeout(timer);
      resolve();
    };
    client.once('ready', onReady);
  });
}
