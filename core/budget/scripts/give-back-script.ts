/**
 * The script that gives back usage a decision recorded, for the SOAP proxy (docs/soap.md). A module of its
 * own, which AccessCache loads on first use: the authorizer never runs it, so its bundle leaves it out.
 */
import { lua, type ScriptDefinition } from './lua';

/**
 * Takes back usage a decision recorded (a call whose backend then failed), as far as it is still
 * pending: usage a reporter drained is on its way to the platform and stays counted. Never below zero.
 * KEYS: app, pending, inflight, since. ARGV: entry TTL ms, bucket start, then metric/delta pairs (the
 * fields record_usage incremented: the call's own metrics; ancestors are added up when read).
 * A bucket left without usage loses its last-call time; a budget left without unreported usage loses
 * its sweep mark and its snapshot expires again, as after an acknowledged report. The snapshot's counts
 * (keys.ts) no longer hold.
 * Returns the usage taken back as metric/delta pairs.
 */
export const GIVE_BACK_SCRIPT: ScriptDefinition = {
  name: 'accessGiveBack',
  numberOfKeys: 4,
  lua: lua`
local bucket = ARGV[2]
local taken = {}
for i = 3, #ARGV, 2 do
  local field = bucket .. ':' .. ARGV[i]
  local held = tonumber(redis.call('HGET', KEYS[2], field) or '0')
  local amount = math.min(held, tonumber(ARGV[i + 1]))
  if amount > 0 then
    if amount == held then
      redis.call('HDEL', KEYS[2], field)
    else
      redis.call('HINCRBY', KEYS[2], field, -amount)
    end
    taken[#taken + 1] = ARGV[i]
    taken[#taken + 1] = string.format('%.0f', amount)
  end
end
if #taken == 0 then return {} end
-- The counts the hit path reads hold this usage: they are worked out again on the next call.
redis.call('HDEL', KEYS[1], 'counted')
local bucket_left, usage_left = false, false
for _, field in ipairs(redis.call('HKEYS', KEYS[2])) do
  if string.sub(field, 1, 2) ~= 't:' then
    usage_left = true
    if string.sub(field, 1, #bucket + 1) == bucket .. ':' then bucket_left = true end
  end
end
if not bucket_left then redis.call('HDEL', KEYS[2], 't:' .. bucket) end
if not usage_left then
  redis.call('DEL', KEYS[2])
  if redis.call('EXISTS', KEYS[3]) == 0 then
    redis.call('DEL', KEYS[4])
    if redis.call('EXISTS', KEYS[1]) == 1 then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end
  end
end
return {unpack(taken)}
`,
};
