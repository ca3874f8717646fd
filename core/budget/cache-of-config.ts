/**
 * The budget cache as a configuration sets it: the cache of the configuration's service, and the lease a
 * reporter takes on a budget's usage, shared by the authorizer, the reporter, the webhooks and the plugin.
 */
import type { AccessConfig } from '../settings/config';
import { AccessCache } from './cache';
import type { RedisConnection } from './redis-client';

/** Lease of a reporter on a credential: longer than any flush (reports, resync) can take. */
export function reportLeaseMs(config: AccessConfig): number {
  return Math.max(60_000, 3 * config.reportTimeoutMs + 2 * config.platformTimeoutMs);
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
