/**
 * Rolled app keys waiting out their grace (app id and OAuth modes): the new key is added at once, the old
 * one deleted when the grace ends (24 h by default), or at once when the developer asks. Redis keeps
 * only which application and the old key's SHA-256, in a sorted set by due time; the key itself stays at
 * the platform, which is asked for it when it is due. Due deletions are done as the portal serves
 * requests, a few at a time.
 */
import type { RedisConnection } from '../budget/redis-client';
import type { PortalDeps } from './context';
import { sha256Hex } from './secrets';

const DUE_PER_PASS = 10;

export interface PendingRoll {
  readonly accountId: string;
  readonly applicationId: string;
  readonly oldKeyDigest: string;
  readonly dueAt: number;
}

export class KeyRolls {
  private readonly key: string;

  constructor(
    private readonly redis: RedisConnection,
    prefix: string,
  ) {
    this.key = `${prefix}rolls`;
  }

  async schedule(accountId: string, applicationId: string, oldKey: string, dueAt: number): Promise<void> {
    await this.redis.zadd(this.key, dueAt, JSON.stringify([accountId, applicationId, sha256Hex(oldKey)]));
  }

  /** The application's keys waiting for deletion. */
  async of(accountId: string, applicationId: string): Promise<PendingRoll[]> {
    const all = await this.redis.zrange(this.key, 0, -1, 'WITHSCORES');
    return pairs(all).filter((roll) => roll.accountId === accountId && roll.applicationId === applicationId);
  }

  async due(now: number): Promise<PendingRoll[]> {
    return pairs(
      await this.redis.zrangebyscore(this.key, '-inf', now, 'WITHSCORES', 'LIMIT', 0, DUE_PER_PASS),
    );
  }

  async done(roll: PendingRoll): Promise<void> {
    await this.redis.zrem(this.key, JSON.stringify([roll.accountId, roll.applicationId, roll.oldKeyDigest]));
  }
}

function pairs(flat: readonly string[]): PendingRoll[] {
  const rolls: PendingRoll[] = [];
  for (let i = 0; i + 1 < flat.length; i += 2) {
    const [accountId, applicationId, oldKeyDigest] = JSON.parse(flat[i] as string) as [
      string,
      string,
      string,
    ];
    rolls.push({ accountId, applicationId, oldKeyDigest, dueAt: Number(flat[i + 1]) });
  }
  return rolls;
}

/** Deletes the old keys of these rolls at the platform and tells the cache; a failure stays for later. */
export async function finishRolls(
  deps: PortalDeps,
  rolls: KeyRolls,
  due: readonly PendingRoll[],
): Promise<void> {
  for (const roll of due) {
    const keys = await deps.admin.keys(roll.accountId, roll.applicationId);
    if (!keys.ok) {
      if (keys.kind === 'not_found') await rolls.done(roll);
      else deps.logger.warn('portal: an old key could not be read for deletion', { kind: keys.kind });
      continue;
    }
    const old = keys.value.find((key) => sha256Hex(key) === roll.oldKeyDigest);
    if (old !== undefined) {
      const deleted = await deps.admin.deleteKey(roll.accountId, roll.applicationId, old);
      if (!deleted.ok && deleted.kind !== 'not_found') {
        deps.logger.warn('portal: an old key could not be deleted', {
          kind: deleted.kind,
          why: deleted.message,
        });
        continue;
      }
    }
    await rolls.done(roll);
    const left = await deps.admin.keys(roll.accountId, roll.applicationId);
    const application = await deps.admin.applications(roll.accountId);
    const appId = application.ok
      ? application.value.find((app) => app.id === roll.applicationId)?.applicationId
      : undefined;
    if (left.ok && appId !== undefined) await deps.cache.keysKept(appId, left.value);
  }
}
