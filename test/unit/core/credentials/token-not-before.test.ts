/**
 * The not-before of an application's tokens: a token is refused when it was issued before the moment a
 * webhook stored, compared in the token's own resolution (whole seconds), so a token minted in the same
 * second as a suspension that was then lifted is not refused for its whole life.
 */
import type Redis from 'ioredis';
import RedisMock from 'ioredis-mock';
import { beforeEach, describe, expect, it } from 'vitest';
import type { RedisConnection } from '../../../../core/budget/redis-client';
import { redisTokensNotBefore } from '../../../../core/credentials/token-not-before';
import type { TokensNotBefore } from '../../../../core/credentials/token-revocation';
import { CapturingLogger } from '../fakes';

const SUSPENDED_AT_MS = 1_767_225_600_400;
const SAME_SECOND = Math.floor(SUSPENDED_AT_MS / 1000);

let notBefore: TokensNotBefore;

beforeEach(async () => {
  const redis = new RedisMock() as unknown as Redis;
  await redis.flushall();
  notBefore = redisTokensNotBefore(redis as unknown as RedisConnection, 'svc', new CapturingLogger());
  await notBefore.refuseBefore('app', SUSPENDED_AT_MS);
});

describe('tokens issued around a revoking event', () => {
  it('a token minted in the same second as the event (suspend, resume, mint) is accepted', async () => {
    expect(await notBefore.refuses('app', SAME_SECOND)).toBe(false);
    expect(await notBefore.refuses('app', SAME_SECOND + 1)).toBe(false);
  });

  it('a token of an earlier second, or one that does not say when it was issued, is refused', async () => {
    expect(await notBefore.refuses('app', SAME_SECOND - 1)).toBe(true);
    expect(await notBefore.refuses('app', undefined)).toBe(true);
  });

  it('another application is not touched', async () => {
    expect(await notBefore.refuses('other', SAME_SECOND - 1)).toBe(false);
  });
});
