/**
 * The budget cache's parts as a configuration sets them: the cache itself, the reporter's lease, the wait
 * of concurrent first calls and the sealer of cached credentials, shared by the authorizer, the reporter
 * and the plugin.
 */
import { AccessCache } from '../budget/cache';
import type { RedisConnection } from '../budget/redis-client';
import { type CredentialSealer, createCredentialSealer } from '../credentials/seal';
import { type AccessConfig, ConfigError } from '../settings/config';

/** Time a first call has, after the platform's answer, to store it. */
const FIRST_CALL_STORE_MS = 500;

/** Lease of a reporter on a credential: longer than any flush (reports, resync) can take. */
export function reportLeaseMs(config: AccessConfig): number {
  return Math.max(60_000, 3 * config.reportTimeoutMs + 2 * config.platformTimeoutMs);
}

/**
 * How long a budget's first call may take to ask the platform and store its answer: concurrent first
 * calls wait this long for it before they decide as if the platform were down.
 */
export function firstCallWaitMs(config: AccessConfig): number {
  return config.platformTimeoutMs + FIRST_CALL_STORE_MS;
}

/** The cache for a configuration, shared by the authorizer and the reporter. */
export function accessCacheOf(
  redis: RedisConnection,
  config: AccessConfig,
  readyWaitMs?: number,
): AccessCache {
  return new AccessCache(redis, {
    serviceId: config.serviceId,
    negativeTtlMs: config.negativeCacheTtlSeconds * 1000,
    leaseMs: reportLeaseMs(config),
    throttles: config.throttles,
    ...(readyWaitMs !== undefined && { readyWaitMs }),
  });
}

/** The sealer both Lambdas derive from the provider key or service token. */
export function sealerOf(config: AccessConfig): CredentialSealer {
  if (!config.platformCredential) {
    throw new ConfigError(
      'platformCredential',
      'is required with redis: it keys the sealing of cached credentials',
    );
  }
  return createCredentialSealer(config.platformCredential, config.serviceId);
}
