import { lua, type ScriptDefinition } from './lua';
import { ANSWER_FUNCTIONS, LIMIT_PRELUDE } from './prelude';
import { THROTTLE_LUA } from './throttle-script';

/**
 * How long a seen mark (keys.ts, `am:{id}:seen`) lasts after the platform's last answer for the
 * credential: it outlives the budget's snapshot (a day without an answer) and costs a few bytes a
 * credential, so a known credential whose snapshot expired or was evicted is still known, and the
 * first-call gate (decision/first-call-gate.ts) never counts it.
 */
export const SEEN_MARK_TTL_SECONDS = 30 * 24 * 60 * 60;
/**
 * Stores a platform answer. KEYS: neg, app, keys, since, first, seen, pending, inflight.
 * ARGV: state ('' = the answer is about the key only: the budget is left as it is), negative TTL ms,
 * entry TTL ms, sealed credential, plan, now, key id ('' = none), key fact ('ok <sealed credential>' |
 * 'bad <until ms> <code>' | ''), the first-call lock's token ('' = none held), the throttle table ('' =
 * take no cells), the throttle's test clock ('' = TIME), the number n of usage pairs, then n
 * metric/delta pairs, then snapshot field/value pairs.
 * The caller's first-call lock is given back in the same step, and the answered call takes its throttle
 * cells whatever the buckets hold (the platform admitted and counted it already, and the calls that
 * waited for this answer must see it), and a state other than invalid marks the key id seen ('' for the
 * budget's own credential) for SEEN_MARK_TTL_SECONDS, so a first call costs the check and this script,
 * no more, on the budget's slot.
 * An invalid state sets the negative entry (a flood of unknown credentials stays off the platform until
 * it expires); any other state clears it: a denied budget keeps its state in the snapshot, and its
 * refused calls have the reporter refresh it. An invalid answer keeps no snapshot: a budget never seen
 * leaves only its negative entry; a known one keeps its sealed credential for the usage still to report.
 * A new snapshot carries over the fields that outlive answers: the limits' counts where they are newer
 * (newest_limit), the report window and the throttles. The counts the hit path reads (keys.ts) go with
 * the old snapshot: they are written here when no usage waits, else worked out on the next call.
 */
export const STORE_SCRIPT: ScriptDefinition = {
  name: 'accessStore',
  numberOfKeys: 8,
  lua: lua`${LIMIT_PRELUDE}${ANSWER_FUNCTIONS}${THROTTLE_LUA}
-- The caller's lock goes with the negative entry's DEL where the answer clears one: a command fewer.
local lock_held = ARGV[9] ~= '' and redis.call('GET', KEYS[5]) == ARGV[9]
local state = ARGV[1]
if ARGV[7] ~= '' and ARGV[8] ~= '' then
  redis.call('HSET', KEYS[3], ARGV[7], ARGV[8])
  redis.call('PEXPIRE', KEYS[3], ARGV[3])
end
local invalid = string.sub(state, 1, 8) == 'invalid:'
if lock_held and (state == '' or invalid) then redis.call('DEL', KEYS[5]) end
if state == '' then return 'ok' end
if invalid then
  redis.call('SET', KEYS[1], state, 'PX', ARGV[2])
  if redis.call('EXISTS', KEYS[2]) == 0 then return 'ok' end
  redis.call('HSET', KEYS[2], 'state', state, 'synced', ARGV[6])
  keep_or_expire(KEYS[2], KEYS[4], ARGV[3])
  return 'ok'
end
if lock_held then redis.call('DEL', KEYS[1], KEYS[5]) else redis.call('DEL', KEYS[1]) end
redis.call('SADD', KEYS[6], ARGV[7])
redis.call('EXPIRE', KEYS[6], ${SEEN_MARK_TTL_SECONDS})
local first_field = 13 + 2 * tonumber(ARGV[12])
local kept, throttles = {}, {}
local old = redis.call('HGETALL', KEYS[2])
for i = 1, #old, 2 do
  local name = old[i]
  if string.sub(name, 1, 6) == 'limit:' or name == 'window' then
    kept[name] = old[i + 1]
  elseif string.sub(name, 1, 9) == 'throttle:' then
    kept[name] = old[i + 1]
    throttles[name] = old[i + 1]
  end
end
local fields = {'state', state, 'cred', ARGV[4], 'plan', ARGV[5], 'synced', ARGV[6]}
-- With no usage pending or in flight, a limit's count (keys.ts) is its value without the period's start:
-- '<end> <max> <current>' (a period already over the hit path leaves to the general path).
local counting = redis.call('EXISTS', KEYS[7], KEYS[8]) == 0
if counting then fields[#fields + 1], fields[#fields + 2] = 'counted', '' end
for i = first_field, #ARGV, 2 do
  local name = ARGV[i]
  fields[#fields + 1] = name
  if string.sub(name, 1, 6) == 'limit:' then
    local limit = newest_limit(kept[name], ARGV[i + 1])
    fields[#fields + 1] = limit
    if counting then
      fields[#fields + 1] = 'count:' .. string.sub(name, 7)
      fields[#fields + 1] = string.sub(limit, string.find(limit, ' ', 1, true) + 1)
    end
  else
    fields[#fields + 1] = ARGV[i + 1]
  end
  kept[name] = nil
end
for name, value in pairs(kept) do
  if string.sub(name, 1, 6) ~= 'limit:' then
    fields[#fields + 1] = name
    fields[#fields + 1] = value
  end
end
if #old > 0 then redis.call('DEL', KEYS[2]) end
-- unpack() takes a bounded number of values: the fields go in slices.
for i = 1, #fields, 200 do redis.call('HSET', KEYS[2], unpack(fields, i, math.min(i + 199, #fields))) end
if ARGV[10] ~= '' then
  local parents, requested = {}, {}
  for i = first_field, #ARGV, 2 do
    if string.sub(ARGV[i], 1, 7) == 'parent:' then parents[string.sub(ARGV[i], 8)] = ARGV[i + 1] end
  end
  for i = 13, first_field - 1, 2 do add_up(requested, parents, ARGV[i], tonumber(ARGV[i + 1])) end
  take_throttles(KEYS[2], throttles, ARGV[10], ARGV[11], ARGV[5], requested, true)
end
keep_or_expire(KEYS[2], KEYS[4], ARGV[3])
return 'ok'
`,
};
