/**
 * Marks of credentials the platform has said exist (docs/architecture.md, "Redis layout"): a set per
 * budget, `am:<service>:{id}:seen`, of the key ids answered for ('' for a budget's own credential), kept for
 * SEEN_MARK_TTL_SECONDS from the last answer. It outlives the budget's snapshot (a day without an
 * answer) and costs a few bytes a credential, so a known credential whose snapshot expired or was
 * evicted is still known: the first-call gate (decision/first-call-gate.ts) never counts it.
 *
 * Only the first-call path reads or writes it: a cache hit never does.
 */
import { serviceKeys } from './keys';
import { ensureConnected, REDIS_COMMAND_TIMEOUT_MS, type RedisConnection } from './redis-client';

/** How long a mark lasts after the platform's last answer for the credential. */
export const SEEN_MARK_TTL_SECONDS = 30 * 24 * 60 * 60;

/** SADD and EXPIRE in one round trip; one key. */
const MARK_SCRIPT = `redis.call('SADD', KEYS[1], ARGV[1])
redis.call('EXPIRE', KEYS[1], ARGV[2])
return 0`;

export interface SeenMarks {
  /** Whether the platform has said this key of the budget exists; false when Redis cannot say. */
  has(credentialId: string, keyId: string): Promise<boolean>;
  /** The platform said this key of the budget exists (an active, suspended or limited credential). */
  mark(credentialId: string, keyId: string): Promise<void>;
}

export function redisSeenMarks(redis: RedisConnection, serviceId: string): SeenMarks {
  const keys = serviceKeys(serviceId);
  return {
    async has(credentialId, keyId) {
      try {
        await ensureConnected(redis, REDIS_COMMAND_TIMEOUT_MS);
        return (await redis.sismember(keys.budget(credentialId).seen, keyId)) === 1;
      } catch {
        // Unknown then: the gate decides, as for a credential never seen.
        return false;
      }
    },
    async mark(credentialId, keyId) {
      await ensureConnected(redis, REDIS_COMMAND_TIMEOUT_MS);
      await redis.eval(MARK_SCRIPT, 1, keys.budget(credentialId).seen, keyId, SEEN_MARK_TTL_SECONDS);
    },
  };
}
