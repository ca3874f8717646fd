import { lua, type ScriptDefinition } from './lua';
import { PRELUDE } from './prelude';

/**
 * Lets a call through unchecked and keeps its usage for the reporter (failure mode allow, platform
 * down, nothing cached). KEYS: app, pending, since. ARGV: now, window ms, sealed credential, entry TTL
 * ms, bucket start (the minute: nothing tells which periods the plan limits), then metric/delta pairs.
 * Returns '1' when the caller must publish.
 */
export const ADMIT_SCRIPT: ScriptDefinition = {
  name: 'accessAdmit',
  numberOfKeys: 3,
  lua: lua`${PRELUDE}
redis.call('HSETNX', KEYS[1], 'cred', ARGV[3])
-- A snapshot stored meanwhile: its counts (keys.ts) do not hold this usage.
redis.call('HDEL', KEYS[1], 'counted')
local publish = record_usage(KEYS[1], KEYS[2], KEYS[3], redis.call('HGET', KEYS[1], 'window'), ARGV[1],
  tonumber(ARGV[2]), ARGV[5], 6, false)
keep_or_expire(KEYS[1], KEYS[3], ARGV[4])
return publish
`,
};
