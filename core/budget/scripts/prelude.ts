/**
 * The Lua the budget scripts share, and what holds for all of them. Each script touches the keys of one
 * budget only (one hash tag, one slot) and takes the time as an argument, so an injected clock moves
 * periods and windows (the hot path reads TIME only to refuse to run after its caller gave up, see
 * CHECK_SCRIPT).
 *
 * Usage waiting to be reported is kept per period bucket: hash fields `<bucket start>:<metric>`, with
 * `t:<bucket start>` the time of the bucket's last call. A bucket is the smallest period the budget's
 * plan limits (minute, hour or day; a day when the plan limits only weeks, months, years or nothing,
 * since days nest in all of them and weeks do not nest in months), so every limited period holds each
 * bucket whole: a limit counts exactly the buckets of its current period, and the reporter sends each
 * bucket with a timestamp inside it, so the platform charges the period the calls happened in.
 *
 * A budget's snapshot hash (am:{id}:app) also holds what must live as long as the snapshot and be read
 * with it: the end of the report window (`window`) and the throttles' state (`throttle:*`). A new answer
 * carries those fields over. It also holds each limit's count with the usage waiting, and the last call
 * those counts hold for (`count:*`, `counted`, keys.ts): the check script keeps them, the store writes
 * them when no usage waits, the drain and the acknowledgement move usage without changing them, and
 * the other scripts that add or take usage delete `counted`. The hot path reads by name only what the
 * call needs (CHECK_SCRIPT's hit path, and read_call_snapshot on its general path); the other scripts
 * read it whole.
 *
 * Numbers are written with %.0f: Redis's Lua 5.1 prints large ones in exponent notation, and %d needs a
 * 64-bit integer that fengari (ioredis-mock) does not have. A whole number a reply only carries goes back
 * as a Lua number instead (an integer reply in both), which costs no formatting; AccessCache reads every
 * reply item as text.
 * Tables are returned as `{unpack(t)}`, a shape both Redis and ioredis-mock (fengari) return as arrays.
 */

import { lua } from './lua';

/**
 * The functions of the check script's general path (CHECK_SCRIPT), which the other scripts share. Notes
 * kept here rather than as Lua comments, which the bundle would carry. A script's body runs on every call,
 * and each `local function` it defines is a closure made again each time execution reaches it
 * (docs/performance.md): the check script's hit path, which decides most calls, runs before any of these
 * is made; what only the general path's rarer branches need (a snapshot read whole, usage of metrics
 * whose ancestors are unknown, a snapshot without a bucket field, a throttle whose rate changed) is
 * defined or written out where those branches run, not here.
 *
 * add_usage:
 * Adds the usage of a pending or in-flight hash into `buckets` (bucket start -> metric -> usage), up to
 * each metric's ancestors. `held`, when given, gets the fields as read (field -> value). The usage of
 * metrics whose ancestors the snapshot does not know yet is set aside in `unknown` ({bucket start,
 * metric, amount} each); CHECK_SCRIPT adds it once the ancestors of its metrics are known, read with one
 * HMGET of their `need:` fields (a metric without one has none). Returns whether the hash held any.
 *
 * record_usage:
 * Adds the usage pairs ARGV[first..] to the bucket (its start as text), marks the oldest unreported usage
 * for the sweep and opens the report window; `now_text` is ARGV's now, unconverted. `pending_before`:
 * the budget held unreported usage already, so its sweep mark is set and its snapshot persists (see since
 * in keys.ts). `held`: the pending hash's fields as the caller read them in this script, so the new
 * counts and the bucket's last call go in one HSET; nil: HINCRBY. Returns '1' when the caller must publish.
 *
 * period_start_text:
 * The start of the period now is in, as ARGV[6..11] has it (minute, hour, day, week, month, year), as text.
 * An if-chain, not a table: the script's body runs on every call, so a table here would be built each time.
 */
/**
 * What every script that reads limits or the metric tree starts with, the store script included (which
 * defines nothing else of HOT_PRELUDE: a first call's store makes only the closures it runs).
 */
export const LIMIT_PRELUDE = lua`
local function int(n) return string.format('%.0f', n) end

-- A limit is '<period start> <period end> <max> <current>' (-1 -1 for eternity). A snapshot stored
-- before periods had a start ('<period end> <max> <current>') reads with start -1: its limits then
-- count every bucket, more than their period, never less, until the next answer replaces it.
-- Its four parts as the text they are stored in (the hot path replies with some of them unconverted).
local function limit_texts(value)
  local period_start, period_end, max, current = string.match(value, '^(%-?%d+) (%-?%d+) (%d+) (%d+)$')
  if period_start then return period_start, period_end, max, current end
  period_end, max, current = string.match(value, '^(%-?%d+) (%d+) (%d+)$')
  if period_end then return '-1', period_end, max, current end
  return nil
end

-- The platform adds the usage of a metric to all its ancestors; so do the limit checks here.
local function add_up(totals, parents, metric, amount)
  local depth = 0
  while metric and depth < 16 do
    totals[metric] = (totals[metric] or 0) + amount
    metric = parents[metric]
    depth = depth + 1
  end
end
`;

export const HOT_PRELUDE = lua`${LIMIT_PRELUDE}
-- The first bytes of the field names that are not compared whole (string.byte allocates nothing).
local LIMIT_FIELD, PARENT_FIELD, THROTTLE_FIELD = string.byte('l'), string.byte('p'), string.byte('t')

-- A limit of the snapshot as the scripts use it; nil when its value does not read as one.
local function limit_entry(field, period, metric, value)
  local period_start, period_end, max, current = limit_texts(value)
  if not period_start then return nil end
  return {
    field = field,
    period = period,
    metric = metric,
    period_start = tonumber(period_start),
    period_end = tonumber(period_end),
    end_text = period_end,
    max = tonumber(max),
    max_text = max,
    current = tonumber(current),
  }
end


-- A value of an HMGET reply, nil for a missing field (Redis gives false, ioredis-mock's fengari an object).
local function field_value(values, i)
  local value = values[i]
  if type(value) == 'string' then return value end
  return nil
end

-- Takes a metric's \`need:<metric>\` field (its ancestors, nearest first, then the limit fields of it and
-- them, see snapshot.ts) into the snapshot's parents; returns the limit fields.
local function take_need(snapshot, metric, need)
  local limit_fields, child = {}, metric
  for token in string.gmatch(need, '%S+') do
    if string.sub(token, 1, 6) == 'limit:' then
      limit_fields[#limit_fields + 1] = token
    else
      snapshot.parents[child] = token
      snapshot.known[token] = true
      child = token
    end
  end
  return limit_fields
end

-- Adds a pending or in-flight hash's usage into \`buckets\` (see HOT_PRELUDE); whether it held any.
local function add_usage(key, snapshot, buckets, held, unknown)
  local fields = redis.call('HGETALL', key)
  for i = 1, #fields, 2 do
    if held then held[fields[i]] = fields[i + 1] end
    local bucket, metric = string.match(fields[i], '^(%d+):(.+)$')
    if bucket then
      local start = tonumber(bucket)
      if snapshot.known and not snapshot.known[metric] then
        unknown[#unknown + 1] = { start, metric, tonumber(fields[i + 1]) }
      else
        buckets[start] = buckets[start] or {}
        add_up(buckets[start], snapshot.parents, metric, tonumber(fields[i + 1]))
      end
    end
  end
  return #fields > 0
end

-- The start of the period now is in, as ARGV[6..11] has it (see HOT_PRELUDE).
local function period_start_text(period)
  if period == 'minute' then return ARGV[6] end
  if period == 'hour' then return ARGV[7] end
  if period == 'day' then return ARGV[8] end
  if period == 'week' then return ARGV[9] end
  if period == 'month' then return ARGV[10] end
  return ARGV[11]
end

-- Opens the report window (the snapshot's \`window\` field, its end) unless a message is on its way
-- already: '1' when the caller must publish the report message (at most one per budget per window; every
-- time with a window of 0). \`window_end\` is the field as read, or nil.
local function open_window(app_key, window_end, now, window_ms)
  if window_ms == 0 then return '1' end
  if window_end and tonumber(window_end) > now then return '0' end
  redis.call('HSET', app_key, 'window', int(now + window_ms))
  return '1'
end

-- Records the call's usage in its bucket (see HOT_PRELUDE); '1' when the caller must publish.
local function record_usage(app_key, pending_key, since_key, window_end, now_text, window_ms, bucket, first,
    pending_before, held)
  local counts, added = { 't:' .. bucket, now_text }, false
  for i = first, #ARGV, 2 do
    local amount = tonumber(ARGV[i + 1])
    if amount > 0 then
      added = true
      local field = bucket .. ':' .. ARGV[i]
      if held then
        held[field] = int((tonumber(held[field]) or 0) + amount)
        counts[#counts + 1] = field
        counts[#counts + 1] = held[field]
      else
        redis.call('HINCRBY', pending_key, field, amount)
      end
    end
  end
  if not added then return '0' end
  redis.call('HSET', pending_key, unpack(counts))
  if not pending_before and redis.call('SET', since_key, now_text, 'NX') then redis.call('PERSIST', app_key) end
  return open_window(app_key, window_end, tonumber(now_text), window_ms)
end
`;

/**
 * The check script's functions of a snapshot read by name, made only when a call leaves the hit path.
 *
 * read_call_snapshot:
 * What a call of the metrics in ARGV's pairs needs of an active snapshot, from the head and need fields
 * the check script read by name (`values`: state, plan, synced, window, bucket, counted, then the fields
 * ARGV names from 20 on; see CHECK_SCRIPT's ARGV), for a call the hit path left (a wrong hint, a refusal,
 * a period over, a throttle field missing) while the counts hold: each need read is parsed (its
 * ancestors, its limit fields) and the limit fields read with a second HMGET. `known`: the metrics whose
 * ancestors are in `parents` (see add_usage). nil when the snapshot is not active or has no `bucket`
 * field (stored before the hot path read it by name): the caller reads it whole.
 *
 * read_plan_throttles:
 * The plan's throttle fields of a snapshot read by read_call_snapshot (the throttles of a snapshot read
 * whole are read already), with an HMGET. A field missing (a throttle never taken, or a changed rate)
 * reads every throttle field: take_throttles then looks for the scope under another rate.
 */
export const CALL_SNAPSHOT = lua`
-- The snapshot a call needs, from its fields read by name (\`values\`, see CHECK_SCRIPT); nil: read it whole.
local function read_call_snapshot(values)
  local bucket = field_value(values, 5)
  if values[1] ~= 'active' or not bucket then return nil end
  local snapshot = { state = 'active', plan = field_value(values, 2) or '', synced = field_value(values, 3),
    window = field_value(values, 4), bucket = bucket, parents = {}, limits = {}, throttles = {}, known = {} }
  -- The limit fields of the needs read, each once.
  local fields, listed = {}, {}
  for i = 1, metric_count do
    local metric, need = ARGV[first_pair + 2 * (i - 1)], field_value(values, 6 + i) or ''
    snapshot.known[metric] = true
    for _, field in ipairs(take_need(snapshot, metric, need)) do
      if not listed[field] then
        listed[field] = true
        fields[#fields + 1] = field
      end
    end
  end
  if #fields == 0 then return snapshot end
  local limits = redis.call('HMGET', KEYS[2], unpack(fields))
  for i, field in ipairs(fields) do
    local period, metric = string.match(field, '^limit:([^:]+):(.+)$')
    local value = field_value(limits, i)
    local limit = value and limit_entry(field, period, metric, value)
    if limit then snapshot.limits[#snapshot.limits + 1] = limit end
  end
  return snapshot
end

-- The plan's throttle state of a snapshot read by name (see HOT_PRELUDE).
local function read_plan_throttles(app_key, snapshot, table_text)
  if not snapshot.known or table_text == '' then return end
  local head = '\\n' .. snapshot.plan .. '\\t'
  local fields = {}
  local at = string.find(table_text, head, 1, true)
  while at do
    fields[#fields + 1] = string.match(table_text, '^[^\\t]*\\t([^\\t]+)', at + #head)
    at = string.find(table_text, head, at + #head, true)
  end
  if #fields == 0 then return end
  local values = redis.call('HMGET', app_key, unpack(fields))
  for i, field in ipairs(fields) do
    local value = field_value(values, i)
    if not value then
      local all = redis.call('HGETALL', app_key)
      for j = 1, #all, 2 do
        if string.byte(all[j], 1) == THROTTLE_FIELD then snapshot.throttles[all[j]] = all[j + 1] end
      end
      return
    end
    snapshot.throttles[field] = value
  end
end
`;

/**
 * read_snapshot, which a hit never calls: the hot path defines it only in the branch that reads a snapshot
 * whole, the other scripts in PRELUDE.
 */
export const READ_SNAPSHOT = lua`
-- The whole snapshot (one HGETALL): every limit and the whole metric tree.
local function read_snapshot(app_key)
  local fields = redis.call('HGETALL', app_key)
  local snapshot = { plan = '', parents = {}, limits = {}, throttles = {} }
  for i = 1, #fields, 2 do
    local name, value = fields[i], fields[i + 1]
    if name == 'state' then
      snapshot.state = value
    elseif name == 'plan' then
      snapshot.plan = value
    elseif name == 'synced' then
      snapshot.synced = value
    elseif name == 'window' then
      snapshot.window = value
    elseif name == 'bucket' then
      snapshot.bucket = value
    elseif name ~= 'cred' then
      local head = string.byte(name, 1)
      if head == THROTTLE_FIELD then
        snapshot.throttles[name] = value
      elseif head == PARENT_FIELD then
        snapshot.parents[string.sub(name, 8)] = value
      elseif head == LIMIT_FIELD then
        -- limit:<period>:<metric>
        local colon = string.find(name, ':', 7, true)
        local limit = colon and limit_entry(name, string.sub(name, 7, colon - 1), string.sub(name, colon + 1), value)
        if limit then snapshot.limits[#snapshot.limits + 1] = limit end
      end
    end
  end
  return snapshot
end
`;

/** How an answer is stored over what the snapshot holds (the store script's and the reporter's). */
export const ANSWER_FUNCTIONS = lua`
local function parse_limit(value)
  local period_start, period_end, max, current = limit_texts(value)
  if not period_start then return nil end
  return tonumber(period_start), tonumber(period_end), tonumber(max), tonumber(current)
end

-- Counters only grow within a period, so of two answers for the same period the higher count is the
-- newer: answers of concurrent calls, or a resync that does not see a report the platform still
-- processes, never lower it. A later period wins; the limit itself comes from the answer.
local function newest_limit(stored, answered)
  if not stored then return answered end
  local _, stored_end, _, stored_current = parse_limit(stored)
  local answered_start, answered_end, answered_max, answered_current = parse_limit(answered)
  if not stored_end or not answered_end then return answered end
  if stored_end > answered_end then return stored end
  if stored_end == answered_end and stored_current > answered_current then
    return int(answered_start) .. ' ' .. int(answered_end) .. ' ' .. int(answered_max) .. ' ' .. int(stored_current)
  end
  return answered
end

-- The snapshot holds the sealed credential the reporter needs: it must not expire while usage waits.
local function keep_or_expire(app_key, since_key, ttl_ms)
  if redis.call('EXISTS', since_key) == 1 then
    redis.call('PERSIST', app_key)
  else
    redis.call('PEXPIRE', app_key, ttl_ms)
  end
end
`;

/**
 * What the scripts other than the hot path use besides HOT_PRELUDE. Kept out of the hot path's text: a
 * script's body runs on every call, and each `local function` it defines is a closure made again each time.
 */
export const PRELUDE = lua`${HOT_PRELUDE}${READ_SNAPSHOT}
-- Usage by bucket start, each bucket's metrics added up to their ancestors; and whether the hash held any.
local function bucket_totals(key, parents, buckets)
  return buckets, add_usage(key, { parents = parents }, buckets)
end
${ANSWER_FUNCTIONS}`;
