import { lua, type ScriptDefinition } from './lua';
import { CALL_SNAPSHOT, HOT_PRELUDE, READ_SNAPSHOT } from './prelude';
import { GCRA_STEP_LUA, THROTTLE_LUA } from './throttle-script';

/**
 * How long the mark of a refused call waits for the reporter's drain, which takes it: a day, as a
 * snapshot lives. A budget refused and then never called again is never drained, and its mark must not
 * stay for ever (docs/reliability.md, load held).
 */
export const REFUSAL_MARK_TTL_MS = 24 * 60 * 60 * 1000;
/**
 * Whether the snapshot's counts hold (keys.ts): the last call they hold for is the bucket's last call in
 * the pending usage or, with nothing pending, in the usage in flight; '' with no usage waiting at all. A
 * hash that holds usage but not the bucket's last call (usage of an earlier bucket) holds the counts for
 * nothing. Takes the locals `last_call` (the pending bucket's `t:` as read), `counted` and `bucket`; sets
 * `counts_hold`, and `nothing_waits` when neither hash holds usage.
 */
const COUNTS_HOLD_LUA = lua`counts_hold = last_call == counted
if type(last_call) ~= 'string' then
  counts_hold = redis.call('EXISTS', KEYS[4]) == 0
  if counts_hold then
    local in_flight = redis.call('HGET', KEYS[5], 't:' .. bucket)
    if type(in_flight) == 'string' then
      counts_hold = in_flight == counted
    else
      nothing_waits = redis.call('EXISTS', KEYS[5]) == 0
      counts_hold = nothing_waits and counted == ''
    end
  end
end`;
/**
 * The hot path. KEYS: neg, app, keys, pending, inflight, since, refused, first, seen.
 * ARGV: now, key id ('' = no key to check: user keys, or a call the failure mode lets through without
 * one), window ms, soft ('1'), deadline (epoch ms by the wall clock, 0 = none), the six period starts,
 * the throttle table (ThrottleTable.text in throttles.ts), the throttle's test clock ('' = TIME, see
 * throttle-script.ts), the first-call lock's token ('' = claim none) and lifetime ms; from 16 the need
 * hints (need-hints.ts): the counts n (the call's metrics), l (hinted limit fields) and t
 * (throttle fields of the hinted plan), the hinted plan; from 20 the fields to read by name (n
 * `need:<metric>`, the l limits' count fields, t throttle fields); the n needs as the caller last saw them
 * ('' none);
 * the metric of each limit field; metric, emission interval µs and burst of each throttle field
 * (ThrottleTable.paramsOf); child and parent of each hinted parent link; then the n metric/delta pairs,
 * in the order of the `need:` fields (the last 2n arguments: the links are what lies between).
 * Every argument costs the script a little (docs/performance.md), so none is sent that the call's
 * arguments already say: a limit's period is in its field's name.
 * An active snapshot stored with its `bucket` and `need:` fields is read by name, one HMGET of the head
 * fields (state, plan, synced, window, bucket, counted) and those ARGV names, so a hit costs the same
 * whatever the plan's size; any other is read whole, as before. The hit path at the top decides, as
 * straight code that makes no closure (a `local function` is a closure made each time execution reaches
 * it), a call whose hints hold, whose key (if any) was found valid, whose plan's throttle fields are all
 * there and whose limits' counts (keys.ts) hold, when no limit's period is over and no hard limit refuses
 * it: it reads no usage hash whole, only the bucket's last call and the call's metrics in it (one HMGET of
 * the pending usage; with none pending, an EXISTS and the bucket's last call in flight, COUNTS_HOLD_LUA),
 * and writes the counts with the usage. Everything else falls through, before any write, to the general
 * path, whose functions are defined only then (read_call_snapshot and the rest). The general path works
 * the limits out from their current values and the usage hashes, as the counts must read, and writes the
 * counts of the call's limits; when the counts did not hold, it reads the snapshot whole and writes every
 * limit's, so a count a writer without counts made stale is worked out again on the next call (but in the
 * cases docs/architecture.md's known limits name). A count that reads higher than the hashes (usage given
 * back by a version before the counts) errs toward refusing, and a hit that a count would refuse at a hard
 * limit goes to the general path, which decides from the hashes (in soft-limit mode the hit allows it and
 * says it is over).
 * The deadline decides nothing about limits or windows (those follow `now`): once the authorizer gave
 * up waiting it answered through the platform, so a script that reaches Redis later (a paused or
 * partitioned server) must not count the call a second time. Its TIME reading is the throttles' clock.
 * A budget with a snapshot decides every endpoint here: the snapshot holds all the plan's limits and
 * the metric tree, and the mapping rules are local, so only a budget without one asks the platform.
 * That miss is answered right after the hit path, before the general path's functions are made (a first
 * call's check makes no closure but the throttle's two and presented_key). A miss claims the budget's first-call lock (SET NX) when the caller sends a token, in the same step that
 * found no snapshot, so exactly one of concurrent first calls asks the platform and no call asks after
 * an answer is stored. A miss or an unchecked key also says whether the key id is in the budget's seen
 * marks (STORE_SCRIPT writes them), so the first-call gate needs no round trip of its own to know it.
 * A refused call of a budget the platform answered about opens the report window like usage does, so
 * the reporter refreshes the budget at least once per window while refused calls keep coming (a raised
 * limit, a new plan, a resumed application reach it) without a platform call per refused call; a call
 * refused at a limit also marks the limit (`<period>:<metric>` in the refused hash) for usage alerts.
 * Returns {'expired'} | {'miss', claimed ('1' when this call holds the lock now), seen ('1' marked)} (no
 * snapshot) | {'key_unknown', seen} (the budget's application has a snapshot, this key was never checked) |
 * {'cached', state, publish} |
 * {'deny', 'limits_exceeded', plan, publish, limit field, max, period end} |
 * {'deny', 'rate_limited', plan, '0', the throttle's field (throttleField), ms until the call would pass} |
 * {'allow', plan, publish, over, limit field, max, period end, remaining, bucket start, synced}: the limit a
 * refusal hit, and the most constrained limit of an allowed call (`limit:<period>:<metric>`, or its count
 * field from the hit path, '' when none applies), its period end -1
 * for eternity and -2 when the period the snapshot knows is over (the caller knows the next one's end);
 * the bucket start tells where the call's usage went, for GIVE_BACK_SCRIPT; synced is when the platform
 * last confirmed the snapshot ('0' unknown), for the failure mode (failure-modes.ts); then, when a
 * throttle applies, the tightest one's field (throttleField), remaining and ms until rested; and when a
 * need hint was wrong, those three ('' when no throttle applies) and then metric, need, ... for the caller
 * to learn. The hit path's allow, when the plan is the one hinted (ARGV[19]), is one text instead of a
 * table, a cheaper reply for Redis to write and the client to read: 'allow', '' (the hinted plan),
 * publish, over, max, period end, remaining, bucket start, synced, the throttle's three ('' each when
 * none) and the limit field last (a platform metric's name, the one item not of the script's own
 * making), joined by tabs (checkReplyOf in check-reply.ts).
 * A throttle (THROTTLE_LUA) is taken only once the limits admit the call, and a throttled call records
 * no usage and opens no report window: the platform never hears of it.
 */
export const CHECK_SCRIPT: ScriptDefinition = {
  name: 'accessCheck',
  numberOfKeys: 9,
  lua: lua`-- ARGV and KEYS as locals: the hit reads ARGV some 60 times, and a local is a register where a global
-- is a table look-up each time.
local ARGV, KEYS = ARGV, KEYS
${THROTTLE_LUA}
local deadline = tonumber(ARGV[5])
if deadline > 0 and redis_time_us('') / 1000 > deadline then return {'expired'} end
local now = tonumber(ARGV[1])
local window_ms = tonumber(ARGV[3])
-- The caller's hints (see ARGV in the notes): where each part starts.
local metric_count, limit_count, throttle_count = tonumber(ARGV[16]), tonumber(ARGV[17]), tonumber(ARGV[18])
local hints_at = 20 + metric_count + limit_count + throttle_count
local limits_at = hints_at + metric_count
local throttles_at = limits_at + limit_count
local parents_at = throttles_at + 3 * throttle_count
local first_pair = #ARGV - 2 * metric_count + 1
local values = redis.call('HMGET', KEYS[2], 'state', 'plan', 'synced', 'window', 'bucket', 'counted',
  unpack(ARGV, 20, hints_at - 1))
-- The hit path (see the notes): straight code that makes no closure. Whatever it does not decide breaks out
-- of it, before any write, to the general path below, which starts again from the fields read.
repeat
  local plan, bucket_period, counted = values[2], values[5], values[6]
  if values[1] ~= 'active' or type(plan) ~= 'string' or type(bucket_period) ~= 'string' or
      type(counted) ~= 'string' then break end
  if ARGV[2] ~= '' then
    local fact = redis.call('HGET', KEYS[3], ARGV[2])
    -- 'ok <sealed credential>': the key was found valid.
    if type(fact) ~= 'string' or string.byte(fact, 1) ~= 111 then break end
  end
  local hold = true
  for i = 1, metric_count do
    local need = values[6 + i]
    if (type(need) == 'string' and need or '') ~= ARGV[hints_at + i - 1] then hold = false break end
  end
  -- The plan's throttles are the hinted ones when its plan is the one hinted; every field of them is there.
  local throttled = false
  if hold and ARGV[12] ~= '' then
    if plan ~= ARGV[19] then
      hold = not string.find(ARGV[12], '\\n' .. plan .. '\\t', 1, true)
    elseif throttle_count > 0 then
      throttled = true
      for i = hints_at - throttle_count - 13, hints_at - 14 do
        if type(values[i]) ~= 'string' then hold = false break end
      end
    end
  end
  if not hold then break end
  local bucket = ARGV[8]
  if bucket_period == 'minute' then bucket = ARGV[6] elseif bucket_period == 'hour' then bucket = ARGV[7]
  elseif bucket_period ~= 'day' then break end
  -- The bucket's last call and the call's metrics in it: the counts hold while that last call is the one
  -- they counted (COUNTS_HOLD_LUA).
  local fields = { 't:' .. bucket }
  for i = first_pair, #ARGV, 2 do fields[#fields + 1] = bucket .. ':' .. ARGV[i] end
  local held = redis.call('HMGET', KEYS[4], unpack(fields))
  local last_call, counts_hold, nothing_waits = held[1], false, false
  ${COUNTS_HOLD_LUA}
  if not counts_hold then break end
  -- What each hinted limit takes: a call of one metric its amount from every one (the metric's need lists
  -- the limits of it and its ancestors only), else each metric's amount added up its tree (the throttles'
  -- cells too).
  local single, requested = metric_count == 1 and tonumber(ARGV[first_pair + 1]), nil
  if not single or throttled then
    local parents = {}
    requested = {}
    for i = parents_at, first_pair - 1, 2 do parents[ARGV[i]] = ARGV[i + 1] end
    for i = first_pair, #ARGV, 2 do
      local metric, amount, depth = ARGV[i], tonumber(ARGV[i + 1]), 0
      while metric and depth < 16 do
        requested[metric] = (requested[metric] or 0) + amount
        metric, depth = parents[metric], depth + 1
      end
    end
  end
  -- The limits that apply, each {field, calls left, max as read, period end, period end as read, count with
  -- the call}. A count not there, or whose period is over, is the general path's.
  local limits = {}
  for i = 0, limit_count - 1 do
    local amount = single or requested[ARGV[limits_at + i]]
    if amount then
      local value = values[7 + metric_count + i]
      if type(value) ~= 'string' then hold = false break end
      local end_text, max, count = string.match(value, '^(%-?%d+) (%d+) (%d+)$')
      local period_end = tonumber(end_text)
      if not period_end or (period_end >= 0 and now >= period_end) then hold = false break end
      local used = tonumber(count) + amount
      limits[#limits + 1] = { ARGV[20 + metric_count + i], tonumber(max) - used, max, period_end, end_text, used }
    end
  end
  if not hold then break end
  -- The first limit exceeded; the fewest calls left, of two alike the longer period (as the general path).
  local exceeded, tightest = false, nil
  for k = 1, #limits do
    local limit = limits[k]
    local left, best = limit[2], tightest and tightest[2]
    if left < 0 then exceeded = true end
    if not tightest or left < best or (left == best and (limit[4] < 0 or
        (tightest[4] >= 0 and limit[4] > tightest[4]))) then
      tightest = limit
    end
  end
  -- A refusal at a limit marks it: the general path's.
  if exceeded and ARGV[4] ~= '1' then break end
  -- What the hit writes to the snapshot, in one HSET: the throttles' TATs, the counts, the report window.
  local writes = {}
  -- The plan's throttles, as take_throttles takes them, from the hinted parameters: every field holds its
  -- TAT (none to convert). \`now\` is the throttles' clock (µs) in this block.
  local throttle, throttle_field, throttle_a, throttle_b
  if throttled then
    local now = redis_time_us(ARGV[13])
    local refused_field, refused_excess, tightest_field, tightest_remaining, tightest_ahead = nil, 0.001, nil, nil, 0
    for i = 0, throttle_count - 1 do
      local metric, cells = ARGV[throttles_at + 3 * i], 1
      if metric ~= '' then cells = requested[metric] or 0 end
      if cells > 0 then
        local field, interval = ARGV[hints_at - throttle_count + i], tonumber(ARGV[throttles_at + 3 * i + 1])
        local capacity = tonumber(ARGV[throttles_at + 3 * i + 2]) * interval
        local tat = tonumber(values[hints_at - throttle_count + i - 13])
        ${GCRA_STEP_LUA}
        writes[#writes + 1], writes[#writes + 2] = field, string.format('%.0f', math.floor(now + ahead))
      end
    end
    if refused_field then return {'deny', 'rate_limited', plan, '0', refused_field, math.ceil(refused_excess / 1000)} end
    if tightest_field then
      throttle, throttle_field, throttle_a = 'taken', tightest_field, tightest_remaining
      throttle_b = math.ceil(tightest_ahead / 1000)
    end
  end
  -- The usage recorded as record_usage records it (its fields in the pending hash), the counts with it,
  -- the report window opened as open_window opens it.
  local usage, publish = { fields[1], ARGV[1] }, '0'
  for i = first_pair, #ARGV, 2 do
    local amount = tonumber(ARGV[i + 1])
    if amount > 0 then
      local at = (i - first_pair) / 2 + 2
      local before = held[at]
      usage[#usage + 1] = fields[at]
      usage[#usage + 1] = string.format('%.0f', (type(before) == 'string' and tonumber(before) or 0) + amount)
    end
  end
  if #usage > 2 then
    redis.call('HSET', KEYS[4], unpack(usage))
    if nothing_waits and redis.call('SET', KEYS[6], ARGV[1], 'NX') then redis.call('PERSIST', KEYS[2]) end
    writes[#writes + 1], writes[#writes + 2] = 'counted', ARGV[1]
    for k = 1, #limits do
      local limit = limits[k]
      writes[#writes + 1] = limit[1]
      writes[#writes + 1] = limit[5] .. ' ' .. limit[3] .. ' ' .. string.format('%.0f', limit[6])
    end
    local window_end = values[4]
    publish = '1'
    if window_ms > 0 then
      if type(window_end) == 'string' and tonumber(window_end) > now then
        publish = '0'
      else
        writes[#writes + 1], writes[#writes + 2] = 'window', string.format('%.0f', now + window_ms)
      end
    end
  end
  if #writes > 0 then redis.call('HSET', KEYS[2], unpack(writes)) end
  local over, synced, field, max, period_end, left = exceeded and '1' or '0', values[3], '', '0', '-1', 0
  if type(synced) ~= 'string' then synced = '0' end
  if tightest then
    field, max, period_end, left = tightest[1], tightest[3], tightest[5], math.max(tightest[2], 0)
    -- Lua writes a number into a text with 14 digits.
    if left >= 1e14 then left = string.format('%.0f', left) end
  end
  -- The reply is one text (see the notes) when the plan is the hinted one.
  if plan == ARGV[19] then
    return 'allow\t\t' .. publish .. '\t' .. over .. '\t' .. max .. '\t' .. period_end .. '\t' .. left .. '\t' ..
      bucket .. '\t' .. synced .. '\t' .. (throttle_field or '') .. '\t' .. (throttle_a or '') .. '\t' ..
      (throttle_b or '') .. '\t' .. field
  end
  return {'allow', plan, publish, over, field, max, period_end, left, bucket, synced, throttle_field or '', throttle_a or '',
    throttle_b or ''}
until true
-- What the budget's keys hash says of the presented key: true when it was found valid (or there is no
-- key to check), false when it was never checked (or its refusal expired), or the reply refusing it.
local function presented_key()
  if ARGV[2] == '' then return true end
  local fact = redis.call('HGET', KEYS[3], ARGV[2])
  if not fact then return false end
  local until_ms, code = string.match(fact, '^bad (%d+) (.+)$')
  if not until_ms then return true end
  if tonumber(until_ms) > now then return {'cached', 'invalid:' .. code, '0'} end
  return false
end
-- An active snapshot with its bucket field is read by name (read_call_snapshot). The store script that
-- makes a snapshot active deletes the negative entry in the same step, and any answer that sets one makes
-- the state invalid, so it needs no GET then. Any other is first checked for a negative entry, and a
-- budget without a snapshot (the miss) is answered before the general path's functions are made.
local key_known
if values[1] ~= 'active' or type(values[5]) ~= 'string' then
  local negative = redis.call('GET', KEYS[1])
  if negative then return {'cached', negative, '0'} end
  key_known = presented_key()
  if type(key_known) == 'table' then return key_known end
  if type(values[1]) ~= 'string' then
    local seen = redis.call('SISMEMBER', KEYS[9], ARGV[2]) == 1 and '1' or '0'
    if ARGV[14] == '' then return {'miss', '0', seen} end
    return {'miss', redis.call('SET', KEYS[8], ARGV[14], 'PX', ARGV[15], 'NX') and '1' or '0', seen}
  end
end
${HOT_PRELUDE}${CALL_SNAPSHOT}
-- Whether the snapshot's counts hold (the hit path's test, for a call it left): then the call's are kept
-- up, else every limit's is worked out again, so the snapshot is read whole.
local counts_hold, counted = false, field_value(values, 6)
if counted and values[1] == 'active' and field_value(values, 5) then
  local bucket, nothing_waits = period_start_text(values[5]), false
  local last_call = redis.call('HGET', KEYS[4], 't:' .. bucket)
  ${COUNTS_HOLD_LUA}
end
local snapshot = counts_hold and read_call_snapshot(values) or nil
if not snapshot then
  ${READ_SNAPSHOT}
  snapshot = read_snapshot(KEYS[2])
  -- Stored before the bucket field: the smallest limited period that nests in every other (module note).
  if not snapshot.bucket then
    local rank, smallest = { minute = 1, hour = 2, day = 3 }, 'day'
    for _, limit in ipairs(snapshot.limits) do
      local r = rank[limit.period]
      if r and r < rank[smallest] then smallest = limit.period end
    end
    snapshot.bucket = smallest
  end
end
-- The needs whose hint was wrong (metric, need, ...), for the caller to learn, however the snapshot was read.
for i = 1, metric_count do
  local need = field_value(values, 6 + i) or ''
  if need ~= ARGV[hints_at + i - 1] then
    snapshot.needs = snapshot.needs or {}
    snapshot.needs[#snapshot.needs + 1] = ARGV[first_pair + 2 * (i - 1)]
    snapshot.needs[#snapshot.needs + 1] = need
  end
end
if key_known == nil then
  key_known = presented_key()
  if type(key_known) == 'table' then return key_known end
end
if not key_known then
  return {'key_unknown', redis.call('SISMEMBER', KEYS[9], ARGV[2]) == 1 and '1' or '0'}
end
if snapshot.state ~= 'active' then
  return {'cached', snapshot.state, open_window(KEYS[2], snapshot.window, now, window_ms)}
end
local requested = {}
for i = first_pair, #ARGV, 2 do add_up(requested, snapshot.parents, ARGV[i], tonumber(ARGV[i + 1])) end
local buckets, pending, in_flight, unknown = {}, {}, {}, {}
local reporting = add_usage(KEYS[5], snapshot, buckets, in_flight, unknown)
local pending_held = add_usage(KEYS[4], snapshot, buckets, pending, unknown)
local pending_before = pending_held or reporting
-- The usage add_usage set aside, once the ancestors of its metrics are read (see HOT_PRELUDE).
if #unknown > 0 then
  local metrics, fields = {}, {}
  for _, item in ipairs(unknown) do
    if not snapshot.known[item[2]] then
      snapshot.known[item[2]] = true
      metrics[#metrics + 1] = item[2]
      fields[#fields + 1] = 'need:' .. item[2]
    end
  end
  local needs = redis.call('HMGET', KEYS[2], unpack(fields))
  for i, metric in ipairs(metrics) do
    local need = field_value(needs, i)
    if need then take_need(snapshot, metric, need) end
  end
  for _, item in ipairs(unknown) do
    buckets[item[1]] = buckets[item[1]] or {}
    add_up(buckets[item[1]], snapshot.parents, item[2], item[3])
  end
end
local exceeded, tightest, tightest_left = nil, nil, nil
for _, limit in ipairs(snapshot.limits) do
  local amount = requested[limit.metric]
  if amount or not counts_hold then
    -- Its period's count and buckets: its own period while it lasts, then the period now is in (the
    -- platform's counter starts again from 0); every bucket for eternity.
    local used, since = limit.current + (amount or 0), nil
    if limit.period_end >= 0 then
      since = limit.period_start
      if now >= limit.period_end then used, since = amount or 0, tonumber(period_start_text(limit.period)) end
    end
    for start, totals in pairs(buckets) do
      if since == nil or start >= since then used = used + (totals[limit.metric] or 0) end
    end
    -- The count the hit path reads, kept while the period it names lasts.
    if limit.period_end < 0 or now < limit.period_end then limit.used = used end
    local left = limit.max - used
    if amount and left < 0 and not exceeded then exceeded = limit end
    -- The fewest calls left; of two alike, the longer period (it resets later), as the platform's headers.
    if amount and (not tightest or left < tightest_left or (left == tightest_left and limit.period_end < 0) or
        (left == tightest_left and tightest.period_end >= 0 and limit.period_end > tightest.period_end)) then
      tightest, tightest_left = limit, left
    end
  end
end
local function period_end_of(limit)
  if limit.period_end >= 0 and now >= limit.period_end then return '-2' end
  return limit.end_text
end
if exceeded and ARGV[4] ~= '1' then
  redis.call('HSET', KEYS[7], exceeded.period .. ':' .. exceeded.metric, ARGV[1])
  redis.call('PEXPIRE', KEYS[7], ${REFUSAL_MARK_TTL_MS})
  return {'deny', 'limits_exceeded', snapshot.plan, open_window(KEYS[2], snapshot.window, now, window_ms),
    exceeded.field, exceeded.max_text, period_end_of(exceeded)}
end
read_plan_throttles(KEYS[2], snapshot, ARGV[12])
local throttle, throttle_field, throttle_a, throttle_b = take_throttles(KEYS[2], snapshot.throttles, ARGV[12],
  ARGV[13], snapshot.plan, requested, false)
if throttle == 'refused' then
  return {'deny', 'rate_limited', snapshot.plan, '0', throttle_field, throttle_a}
end
local bucket = period_start_text(snapshot.bucket)
local publish = record_usage(KEYS[2], KEYS[4], KEYS[6], snapshot.window, ARGV[1], window_ms, bucket, first_pair,
  pending_before, pending)
-- The counts worked out above, with the last call they hold for (COUNTS_HOLD_LUA): none when the usage
-- waiting lacks its bucket's.
local last_call = pending['t:' .. bucket]
if not pending_held then last_call = in_flight['t:' .. bucket] or (not reporting and '') or nil end
for i = first_pair, #ARGV, 2 do
  if tonumber(ARGV[i + 1]) > 0 then last_call = ARGV[1] end
end
if last_call then
  local counts = { 'counted', last_call }
  for _, limit in ipairs(snapshot.limits) do
    if limit.used then
      counts[#counts + 1] = 'count:' .. string.sub(limit.field, 7)
      counts[#counts + 1] = limit.end_text .. ' ' .. limit.max_text .. ' ' .. int(limit.used)
    end
  end
  -- unpack() takes a bounded number of values: the fields go in slices.
  for i = 1, #counts, 200 do redis.call('HSET', KEYS[2], unpack(counts, i, math.min(i + 199, #counts))) end
end
local over = exceeded and '1' or '0'
local field, max, period_end, left = '', '0', '-1', 0
if tightest then
  field, max, period_end, left = tightest.field, tightest.max_text, period_end_of(tightest), math.max(tightest_left, 0)
end
local reply = {'allow', snapshot.plan, publish, over, field, max, period_end, left, bucket,
  snapshot.synced or '0', throttle_field or '', throttle_a or '', throttle_b or ''}
for _, item in ipairs(snapshot.needs or {}) do reply[#reply + 1] = item end
return {unpack(reply)}
`,
};
