/**
 * Budgets an earlier version left under the layout without the service (`am:{<credentialId>}:<kind>`,
 * keys.ts LEGACY_KEYS): after an upgrade in place, usage pending or in flight there would never be
 * reported. The sweep adopts them: each budget of this instance's service (its sealed credential opens
 * with this instance's sealer, so another service's budget is left to its own instance) moves to the
 * service's names in one script on the budget's slot (both names carry the same hash tag), merged with
 * what the new version wrote meanwhile.
 */
import { LEGACY_KEYS, type ServiceKeys } from './keys';
import { onEveryPrimary, type RedisConnection } from './redis-client';

/** The kinds the script moves, in its KEYS order: the earlier names first, then the service's. */
const ADOPTED = [
  'app',
  'keys',
  'pending',
  'inFlight',
  'batch',
  'lease',
  'rejected',
  'refusals',
  'alerts',
  'tokensNotBefore',
  'seen',
  'since',
] as const;

/**
 * Moves a budget's keys to the service's names. A key whose new name is free is renamed (its TTL kept).
 * Otherwise: usage counts add up (`t:` times, refusal times and a not-before keep the later value),
 * unsent alerts and seen marks join, the newer snapshot and key facts stay, its counts (keys.ts) to be
 * worked out again with the usage moved in. Usage in flight moves with
 * its batch mark only while the new names hold none; else it waits, with its `since`, for a later sweep.
 * Returns 1 when all moved, 0 when usage in flight waits.
 */
const ADOPT_SCRIPT = `local n = #KEYS / 2
local function old(i) return KEYS[i] end
local function new(i) return KEYS[n + i] end
local function move(i)
  if redis.call('EXISTS', old(i)) == 0 then return true end
  if redis.call('EXISTS', new(i)) == 1 then return false end
  redis.call('RENAME', old(i), new(i))
  return true
end
local function merge(i, later_only)
  local flat = redis.call('HGETALL', old(i))
  for j = 1, #flat, 2 do
    local field, value = flat[j], flat[j + 1]
    if later_only or string.sub(field, 1, 2) == 't:' then
      local current = tonumber(redis.call('HGET', new(i), field) or '0') or 0
      if (tonumber(value) or 0) > current then redis.call('HSET', new(i), field, value) end
    else
      redis.call('HINCRBY', new(i), field, value)
    end
  end
  redis.call('DEL', old(i))
end
if not move(1) then redis.call('DEL', old(1)) end
if not move(2) then redis.call('DEL', old(2)) end
if not move(3) then merge(3, false) end
local waits = false
if redis.call('EXISTS', old(4)) == 1 then
  if redis.call('EXISTS', new(4)) == 0 then
    redis.call('RENAME', old(4), new(4))
    if redis.call('EXISTS', old(5)) == 1 then redis.call('RENAME', old(5), new(5)) end
    if not move(6) then redis.call('DEL', old(6)) end
  else
    waits = true
  end
else
  redis.call('DEL', old(5), old(6))
end
if not move(7) then merge(7, false) end
if not move(8) then merge(8, true) end
if not move(9) then
  local flat = redis.call('HGETALL', old(9))
  for j = 1, #flat, 2 do redis.call('HSETNX', new(9), flat[j], flat[j + 1]) end
  redis.call('DEL', old(9))
end
if not move(10) then
  local earlier = tonumber(redis.call('GET', old(10))) or 0
  if earlier > (tonumber(redis.call('GET', new(10))) or 0) then redis.call('SET', new(10), earlier, 'KEEPTTL') end
  redis.call('DEL', old(10))
end
if not move(11) then
  for _, member in ipairs(redis.call('SMEMBERS', old(11))) do redis.call('SADD', new(11), member) end
  redis.call('DEL', old(11))
end
redis.call('HDEL', new(1), 'counted')
if waits then return 0 end
local since = tonumber(redis.call('GET', old(12)))
if since then
  local current = tonumber(redis.call('GET', new(12)))
  if not current or since < current then redis.call('SET', new(12), since) end
  redis.call('DEL', old(12))
end
return 1`;

/** Whether a budget's sealed credential is this instance's service's (it opens with its sealer). */
export type OwnsBudget = (credentialId: string, sealedCredential: string) => boolean;

export interface AdoptedBudgets {
  /** Budgets of the earlier layout found with unreported usage, of any service. */
  readonly found: number;
  /** Moved whole to the service's names. */
  readonly adopted: number;
  /** Usage in flight under both names: left for a later sweep. */
  readonly waiting: number;
}

/** Adopts at most `limit` of the service's budgets left under the earlier layout with unreported usage. */
export async function adoptLegacyBudgets(
  redis: RedisConnection,
  keys: ServiceKeys,
  owns: OwnsBudget,
  limit: number,
): Promise<AdoptedBudgets> {
  const perPrimary = await onEveryPrimary(redis, async (primary) => {
    const ids = new Set<string>();
    let cursor = '0';
    do {
      const [next, found] = await primary.scan(cursor, 'MATCH', LEGACY_KEYS.pattern('since'), 'COUNT', 1000);
      cursor = next;
      for (const key of found) {
        const id = LEGACY_KEYS.credentialIdOfSinceKey(key);
        if (id !== undefined) ids.add(id);
      }
    } while (cursor !== '0' && ids.size < limit);
    return [...ids];
  });
  const found = perPrimary.flat().slice(0, limit);
  let adopted = 0;
  let waiting = 0;
  for (const id of found) {
    const earlier = LEGACY_KEYS.budget(id);
    const current = keys.budget(id);
    // A budget moved in part by an earlier sweep has its credential under the new names already.
    const sealed = (await redis.hget(earlier.app, 'cred')) ?? (await redis.hget(current.app, 'cred'));
    if (sealed === null || !owns(id, sealed)) continue;
    const names = [...ADOPTED.map((kind) => earlier[kind]), ...ADOPTED.map((kind) => current[kind])];
    const moved = await redis.eval(ADOPT_SCRIPT, names.length, ...names);
    if (Number(moved) === 1) adopted++;
    else waiting++;
  }
  return { found: found.length, adopted, waiting };
}
