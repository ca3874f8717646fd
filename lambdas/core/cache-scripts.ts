/**
 * The Lua scripts of the cache. Each touches the keys of one credential only (one hash tag, one slot)
 * and takes the time as an argument, so an injected clock moves periods and windows (the hot path
 * reads TIME only to refuse to run after its caller gave up, see CHECK_SCRIPT).
 * Numbers are written with %.0f: Redis's Lua 5.1 prints large ones in exponent notation, and %d
 * needs a 64-bit integer that fengari (ioredis-mock) does not have.
 * Tables are returned as `{unpack(t)}`, a shape both Redis and ioredis-mock (fengari) return as arrays.
 */

const PRELUDE = `
local function int(n) return string.format('%.0f', n) end

local function read_snapshot(app_key)
  local fields = redis.call('HGETALL', app_key)
  local snapshot = { plan = '', parents = {}, limits = {} }
  for i = 1, #fields, 2 do
    local name, value = fields[i], fields[i + 1]
    if name == 'state' then
      snapshot.state = value
    elseif name == 'plan' then
      snapshot.plan = value
    elseif string.sub(name, 1, 7) == 'parent:' then
      snapshot.parents[string.sub(name, 8)] = value
    elseif string.sub(name, 1, 6) == 'limit:' then
      local period_end, max, current = string.match(value, '^(%-?%d+) (%d+) (%d+)$')
      if period_end then
        snapshot.limits[#snapshot.limits + 1] = {
          field = name,
          metric = string.match(name, '^limit:[^:]*:(.*)$'),
          period_end = tonumber(period_end),
          max = tonumber(max),
          current = tonumber(current),
        }
      end
    end
  end
  return snapshot
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

local function hash_totals(key, parents)
  local totals = {}
  local fields = redis.call('HGETALL', key)
  for i = 1, #fields, 2 do add_up(totals, parents, fields[i], tonumber(fields[i + 1])) end
  return totals
end

-- Once a period has ended the platform's counter for it starts again from 0.
local function current_of(limit, now)
  if limit.period_end >= 0 and now >= limit.period_end then return 0 end
  return limit.current
end

-- Counters only grow within a period, so of two answers for the same period the higher count is the
-- newer: answers of concurrent first calls, or a resync that does not see a report the platform
-- still processes, never lower it. A later period wins; the limit itself comes from the answer.
local function newest_limit(stored, answered)
  if not stored then return answered end
  local stored_end, _, stored_current = string.match(stored, '^(%-?%d+) (%d+) (%d+)$')
  local answered_end, answered_max, answered_current = string.match(answered, '^(%-?%d+) (%d+) (%d+)$')
  if not stored_end or not answered_end then return answered end
  if tonumber(stored_end) > tonumber(answered_end) then return stored end
  if stored_end == answered_end and tonumber(stored_current) > tonumber(answered_current) then
    return answered_end .. ' ' .. answered_max .. ' ' .. stored_current
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

-- Adds the usage pairs ARGV[first..] to pending, marks the oldest unreported usage for the sweep and
-- sets the report window flag. Returns '1' when the caller must publish the report message.
local function record_usage(app_key, pending_key, since_key, window_key, now, window_ms, first)
  local added = false
  for i = first, #ARGV, 2 do
    local amount = tonumber(ARGV[i + 1])
    if amount > 0 then
      redis.call('HINCRBY', pending_key, ARGV[i], amount)
      added = true
    end
  end
  if not added then return '0' end
  if redis.call('SET', since_key, int(now), 'NX') then redis.call('PERSIST', app_key) end
  if window_ms == 0 then return '1' end
  local window_end = redis.call('GET', window_key)
  if window_end and tonumber(window_end) > now then return '0' end
  redis.call('SET', window_key, int(now + window_ms), 'PX', int(window_ms))
  return '1'
end
`;

export interface ScriptDefinition {
  readonly name: string;
  readonly numberOfKeys: number;
  readonly lua: string;
}

/**
 * The hot path. KEYS: neg, app, ep, pending, inflight, since, window.
 * ARGV: now, endpoint ('' = decide from the credential's snapshot whatever the endpoint: the
 * resilient answer while the platform is down), window ms, soft ('1'), deadline (epoch ms by the
 * wall clock, 0 = none), then metric/delta pairs.
 * The deadline is the one use of TIME, and it decides nothing about limits or windows (those follow
 * `now`): once the authorizer gave up waiting it answered through the platform's authrep, so a script
 * that reaches Redis later (a paused or partitioned server) must not count the call a second time.
 * A new endpoint of an active credential is a miss only within its limits; over a hard limit it is
 * denied like a hit, since the platform's authrep would not count the usage pending here.
 * Returns {'expired'} | {'miss'} | {'cached', state} | {'deny', 'limits_exceeded', plan} |
 * {'allow', plan, publish, over}.
 */
export const CHECK_SCRIPT: ScriptDefinition = {
  name: 'accessCheck',
  numberOfKeys: 7,
  lua: `${PRELUDE}
local deadline = tonumber(ARGV[5])
if deadline > 0 then
  local time = redis.call('TIME')
  if tonumber(time[1]) * 1000.0 + math.floor(tonumber(time[2]) / 1000) > deadline then return {'expired'} end
end
local now = tonumber(ARGV[1])
local negative = redis.call('GET', KEYS[1])
if negative then return {'cached', negative} end
local known_endpoint = ARGV[2] == '' or redis.call('HEXISTS', KEYS[3], ARGV[2]) == 1
local snapshot = read_snapshot(KEYS[2])
if not snapshot.state then return {'miss'} end
if snapshot.state ~= 'active' then
  if known_endpoint then return {'cached', snapshot.state} end
  return {'miss'}
end
local requested = {}
for i = 6, #ARGV, 2 do add_up(requested, snapshot.parents, ARGV[i], tonumber(ARGV[i + 1])) end
local pending = hash_totals(KEYS[4], snapshot.parents)
local in_flight = hash_totals(KEYS[5], snapshot.parents)
local over = '0'
for _, limit in ipairs(snapshot.limits) do
  local amount = requested[limit.metric]
  if amount then
    local used = current_of(limit, now) + (pending[limit.metric] or 0) + (in_flight[limit.metric] or 0)
    if used + amount > limit.max then over = '1' end
  end
end
if over == '1' and ARGV[4] ~= '1' then return {'deny', 'limits_exceeded', snapshot.plan} end
if not known_endpoint then return {'miss'} end
local publish = record_usage(KEYS[2], KEYS[4], KEYS[6], KEYS[7], now, tonumber(ARGV[3]), 6)
return {'allow', snapshot.plan, publish, over}
`,
};

/**
 * Stores a platform answer. KEYS: neg, app, ep, since.
 * ARGV: state, negative TTL ms, entry TTL ms, sealed credential, plan, now, endpoint ('' = none),
 * endpoint usage JSON, then snapshot field/value pairs.
 * An active state clears the negative entry and records the endpoint; any other state sets the
 * negative entry and drops the endpoint entries, so the credential asks the platform again once the
 * negative entry expires. An invalid answer keeps no snapshot: a key never seen leaves only its
 * negative entry; a known one keeps its sealed credential for the usage still to report.
 */
export const STORE_SCRIPT: ScriptDefinition = {
  name: 'accessStore',
  numberOfKeys: 4,
  lua: `${PRELUDE}
local state = ARGV[1]
if state == 'active' then
  redis.call('DEL', KEYS[1])
else
  redis.call('SET', KEYS[1], state, 'PX', ARGV[2])
  redis.call('DEL', KEYS[3])
end
if string.sub(state, 1, 8) == 'invalid:' then
  if redis.call('EXISTS', KEYS[2]) == 0 then return 'ok' end
  redis.call('HSET', KEYS[2], 'state', state, 'synced', ARGV[6])
else
  local previous = {}
  local old = redis.call('HGETALL', KEYS[2])
  for i = 1, #old, 2 do
    if string.sub(old[i], 1, 6) == 'limit:' then previous[old[i]] = old[i + 1] end
  end
  redis.call('DEL', KEYS[2])
  redis.call('HSET', KEYS[2], 'state', state, 'cred', ARGV[4], 'plan', ARGV[5], 'synced', ARGV[6])
  for i = 9, #ARGV, 2 do
    redis.call('HSET', KEYS[2], ARGV[i], newest_limit(previous[ARGV[i]], ARGV[i + 1]))
  end
  if state == 'active' and ARGV[7] ~= '' then
    redis.call('HSET', KEYS[3], ARGV[7], ARGV[8])
    redis.call('PEXPIRE', KEYS[3], ARGV[3])
  end
end
keep_or_expire(KEYS[2], KEYS[4], ARGV[3])
return 'ok'
`,
};

/**
 * Lets a call through unchecked and keeps its usage for the reporter (failure mode allow, platform
 * down, nothing cached). KEYS: app, pending, since, window. ARGV: now, window ms, sealed credential,
 * entry TTL ms, then metric/delta pairs. Returns '1' when the caller must publish.
 */
export const ADMIT_SCRIPT: ScriptDefinition = {
  name: 'accessAdmit',
  numberOfKeys: 4,
  lua: `${PRELUDE}
redis.call('HSETNX', KEYS[1], 'cred', ARGV[3])
local publish = record_usage(KEYS[1], KEYS[2], KEYS[3], KEYS[4], tonumber(ARGV[1]), tonumber(ARGV[2]), 5)
keep_or_expire(KEYS[1], KEYS[3], ARGV[4])
return publish
`,
};

/**
 * Takes the usage to report. KEYS: app, pending, inflight, since, lease. ARGV: lease token, lease ms.
 * In-flight usage left by an earlier failed attempt is sent again as it is, and nothing new joins
 * it until the platform accepted it. Returns {'busy'} (another reporter holds the lease) | {'empty'} |
 * {'unreadable'} (no sealed credential) | {'ready', sealed credential, resent ('1' when the in-flight
 * usage was left by an earlier attempt, so pending usage may still wait), metric, value, ...}.
 */
export const DRAIN_SCRIPT: ScriptDefinition = {
  name: 'accessDrain',
  numberOfKeys: 5,
  lua: `
if redis.call('EXISTS', KEYS[5]) == 1 then return {'busy'} end
local resent = '1'
if redis.call('EXISTS', KEYS[3]) == 0 then
  if redis.call('EXISTS', KEYS[2]) == 0 then
    redis.call('DEL', KEYS[4])
    return {'empty'}
  end
  redis.call('RENAME', KEYS[2], KEYS[3])
  resent = '0'
end
local sealed = redis.call('HGET', KEYS[1], 'cred')
if not sealed then return {'unreadable'} end
redis.call('SET', KEYS[5], ARGV[1], 'PX', ARGV[2])
local usage = redis.call('HGETALL', KEYS[3])
return {'ready', sealed, resent, unpack(usage)}
`,
};

/**
 * The platform accepted the in-flight usage. KEYS: app, pending, inflight, since, lease.
 * ARGV: now, lease token, entry TTL ms. Until the resync brings the platform's counters, the
 * snapshot's current values count what was just accepted (limits stay exact in between).
 * A reporter whose lease passed to another one changes nothing: the in-flight usage may by then be
 * the other's batch, not yet reported (its own was resent by the other, at least once).
 */
export const ACKNOWLEDGE_SCRIPT: ScriptDefinition = {
  name: 'accessAcknowledge',
  numberOfKeys: 5,
  lua: `${PRELUDE}
local holder = redis.call('GET', KEYS[5])
if holder and holder ~= ARGV[2] then return 'ok' end
local now = tonumber(ARGV[1])
local snapshot = read_snapshot(KEYS[1])
local reported = hash_totals(KEYS[3], snapshot.parents)
for _, limit in ipairs(snapshot.limits) do
  local amount = reported[limit.metric]
  if amount and (limit.period_end < 0 or now < limit.period_end) then
    redis.call('HSET', KEYS[1], limit.field,
      int(limit.period_end) .. ' ' .. int(limit.max) .. ' ' .. int(limit.current + amount))
  end
end
redis.call('DEL', KEYS[3], KEYS[5])
if redis.call('EXISTS', KEYS[2]) == 0 then
  redis.call('DEL', KEYS[4])
  if redis.call('EXISTS', KEYS[1]) == 1 then redis.call('PEXPIRE', KEYS[1], ARGV[3]) end
end
return 'ok'
`,
};

/** The report failed: give the lease back; the in-flight usage stays for the retry. KEYS: lease. ARGV: token. */
export const RELEASE_SCRIPT: ScriptDefinition = {
  name: 'accessRelease',
  numberOfKeys: 1,
  lua: `
if redis.call('GET', KEYS[1]) == ARGV[1] then redis.call('DEL', KEYS[1]) end
return 'ok'
`,
};

export const SCRIPTS: readonly ScriptDefinition[] = [
  CHECK_SCRIPT,
  STORE_SCRIPT,
  ADMIT_SCRIPT,
  DRAIN_SCRIPT,
  ACKNOWLEDGE_SCRIPT,
  RELEASE_SCRIPT,
];
