/**
 * Access tokens outliving their secret: when the platform's webhook says an application's key was
 * deleted, or the application was suspended or deleted, the receiver stores the moment, and the
 * authorizer refuses that application's tokens issued (`iat`) before it, verified before or not. One
 * Redis GET on the token path only (docs/oauth.md, "Tokens after their secret is deleted").
 */

import { serviceKeys } from '../budget/keys';
import { ensureConnected, REDIS_COMMAND_TIMEOUT_MS, type RedisConnection } from '../budget/redis-client';
import { errorMessage, type LogPort } from '../observability/observability';
import { MAX_TOKEN_TTL_SECONDS } from '../settings/settings';
import { credentialIdOf, credentialIdPrefix } from '.';
import { TOKEN_CLOCK_TOLERANCE_SECONDS } from './oauth';
import type { TokensNotBefore } from './token-revocation';

/** Application events after which the tokens issued before them are refused. */
export const TOKEN_REVOKING_ACTIONS: ReadonlySet<string> = new Set(['key_deleted', 'suspended', 'deleted']);

/**
 * How long a not-before is kept: the longest a built-in issuer's token lives (the tokenTtlSeconds bound)
 * with the authorizer's clock tolerance; by then every token issued before it has expired.
 */
export const TOKENS_NOT_BEFORE_TTL_SECONDS = MAX_TOKEN_TTL_SECONDS + TOKEN_CLOCK_TOLERANCE_SECONDS;

/**
 * The not-before of each application in Redis, under its budget's hash tag. A failed read refuses
 * nothing (logged): with Redis down the authorizer asks the platform as without a cache, and refusing
 * every token then would lock out every client; a failed write throws, so the webhook is sent again.
 */
export function redisTokensNotBefore(
  redis: RedisConnection,
  serviceId: string,
  logger: LogPort,
): TokensNotBefore {
  const keys = serviceKeys(serviceId);
  const keyOf = (appId: string) => {
    const credentialId = credentialIdOf(serviceId, { kind: 'app_id', appId });
    return { credentialId, key: keys.budget(credentialId).tokensNotBefore };
  };
  return {
    async refuses(appId, issuedAt) {
      const { credentialId, key } = keyOf(appId);
      let notBefore: string | null;
      try {
        await ensureConnected(redis, REDIS_COMMAND_TIMEOUT_MS);
        notBefore = await redis.get(key);
      } catch (error) {
        logger.warn('token not-before unread: the token is judged without it', {
          credential: credentialIdPrefix(credentialId),
          error: errorMessage(error),
        });
        return false;
      }
      if (notBefore === null) return false;
      // A token that does not say when it was issued cannot show it came after. `iat` is in whole
      // seconds: compared in its own resolution, a token minted in the event's second (suspend, resume,
      // mint at once) is accepted, rather than refused for its whole life; one minted in that second
      // before the event is accepted too, at most a second's worth.
      return issuedAt === undefined || issuedAt < Math.floor(Number(notBefore) / 1000);
    },
    async refuseBefore(appId, at) {
      await ensureConnected(redis);
      await redis.set(keyOf(appId).key, String(at), 'EX', TOKENS_NOT_BEFORE_TTL_SECONDS);
    },
  };
}
