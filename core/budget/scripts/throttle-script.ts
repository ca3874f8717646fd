/**
 * GCRA, the generic cell rate algorithm (docs/throttling.md), as a Lua fragment of the hot-path script,
 * so a throttle costs no round trip of its own and is exact across every authorizer instance.
 *
 * A throttle of rate r and burst b has the emission interval T = 1/r s and stores the theoretical
 * arrival time (TAT) of the budget's next cell. A call costing n cells is admitted when
 * max(TAT, now) + n·T - now <= b·T: from a rested bucket b calls pass at once, then one every T. A
 * refused call stores nothing; its wait is the excess, the time until the same call would pass.
 *
 * Each throttle's TAT (µs) is a field of the budget's snapshot hash, named by the throttle's scope and
 * rate (`throttle:call@10`, `throttle:metric:<name>@0.5`, see throttleField in throttles.ts): the script
 * reads that hash already, so a throttle adds no command to a hit (its TATs go in the HSET of the
 * snapshot's counts; the general path's take_throttles writes them with one HSET, and an HDEL once when
 * its rate changed), and its state reads with one lookup. A TAT in the past is a rested bucket, so the fields need no expiry of
 * their own. A throttle whose field is missing looks for its scope under another rate (a new setting, a
 * plan change) and reads that TAT as the bucket's content in calls: the calls already made are kept and
 * drain at the new interval from the first call that sees the change, and the old field is removed. The
 * content never exceeds the burst (a lowered burst caps it).
 *
 * Time is Redis's TIME in microseconds, never an instance's clock: every instance then agrees. The
 * caller passes it (the check script reads TIME once, for its deadline and the throttles alike), or a
 * test clock, which only AccessCache's `throttleClock` option sends.
 * TATs are stored rounded down, so rounding can only admit a microsecond early, never refuse a call.
 */

import { lua } from './lua';

/**
 * One throttle's GCRA step, written out wherever a script takes a throttle (take_throttles, and the check
 * script's hit path, which makes no closure): with the clock `now` (µs), the throttle's `field`,
 * `interval` (µs), `capacity` (burst · interval), the call's `cells` and the stored `tat` (nil: a rested
 * bucket) in scope, it sets `before` and `ahead` (the TAT before and after the call, less `now`), keeps
 * the longest refusal in `refused_field`/`refused_excess` and the fewest calls left in
 * `tightest_field`/`tightest_remaining`/`tightest_ahead`.
 */
export const GCRA_STEP_LUA = lua`
local before = math.min(math.max(tat or now, now), now + capacity)
local ahead = before - now + cells * interval
local excess = ahead - capacity
if excess > refused_excess then refused_field, refused_excess = field, excess end
local remaining = math.max(math.floor((capacity - ahead) / (cells * interval) + 0.000001), 0)
if not tightest_field or remaining < tightest_remaining then
  tightest_field, tightest_remaining, tightest_ahead = field, remaining, ahead
end
`;

export const THROTTLE_LUA = lua`
-- Redis's TIME in µs, read once per script; or the test clock when one is given ('' = none).
local time_us = nil
local function redis_time_us(clock)
  if clock ~= '' then return tonumber(clock) end
  if not time_us then
    local time = redis.call('TIME')
    -- A float factor: fengari (ioredis-mock) multiplies integers in 32 bits.
    time_us = tonumber(time[1]) * 1000000.0 + tonumber(time[2])
  end
  return time_us
end

-- Takes the call's cells from every throttle of the plan that applies, or from none. The table's lines
-- (ThrottleTable.text in throttles.ts) each start with a newline, so a plan's lines are found by a plain search,
-- whatever the other plans. \`stored\` holds the snapshot's throttle fields; \`forced\` takes the cells
-- whatever the buckets hold (a call the platform admitted already). Returns nothing when no throttle
-- applies; 'refused', the field of the throttle with the longest wait and that wait in ms; or 'taken',
-- the tightest throttle's field, the calls like this one it still admits at once and ms until it is rested.
local function take_throttles(app_key, stored, table_text, clock, plan, requested, forced)
  if table_text == '' then return nil end
  local head = '\\n' .. plan .. '\\t'
  local at = string.find(table_text, head, 1, true)
  if not at then return nil end
  local now = redis_time_us(clock)
  -- Per applying throttle: its field, its TAT before and after this call, the field it was converted from.
  local taken = {}
  -- An excess of a thousandth of a µs or less is the floats' rounding, not a refusal; a forced call none.
  local refused_field, refused_excess = nil, forced and math.huge or 0.001
  local tightest_field, tightest_remaining, tightest_ahead = nil, nil, 0
  while at do
    local metric, field, interval, burst = string.match(table_text, '^([^\\t]*)\\t([^\\t]+)\\t([^\\t]+)\\t([^\\n]+)',
      at + #head)
    local cells = 1
    if metric ~= '' then cells = requested[metric] or 0 end
    if cells > 0 then
      interval = tonumber(interval)
      local capacity = tonumber(burst) * interval
      local tat, converted_from = tonumber(stored[field] or ''), nil
      -- A field that holds no TAT: its scope's bucket under another rate, the calls it holds rescaled to
      -- this interval, if there is one (written out here, not a function: a call makes no closure of it).
      if not tat then
        local scope = string.match(field, '^(.*@)')
        for name, value in pairs(stored) do
          local rate = string.sub(name, 1, #scope) == scope and tonumber(string.sub(name, #scope + 1))
          local old_tat = tonumber(value)
          if rate and old_tat then
            tat, converted_from = now + math.max(old_tat - now, 0) * rate / 1000000 * interval, name
            break
          end
        end
      end
      ${GCRA_STEP_LUA}
      taken[#taken + 1] = { field, before, now + ahead, converted_from }
    end
    at = string.find(table_text, head, at + #head, true)
  end
  if not tightest_field then return nil end
  -- A refused call takes nothing; a bucket read under an old rate is still moved to its new field (the
  -- same calls), so it drains at the new rate from the first call that sees the change.
  local tat_slot = refused_field and 2 or 3
  for _, throttle in ipairs(taken) do
    if throttle[4] then redis.call('HDEL', app_key, throttle[4]) end
    if throttle[4] or not refused_field then
      redis.call('HSET', app_key, throttle[1], string.format('%.0f', math.floor(throttle[tat_slot])))
    end
  end
  if refused_field then return 'refused', refused_field, math.ceil(refused_excess / 1000) end
  return 'taken', tightest_field, tightest_remaining, math.ceil(tightest_ahead / 1000)
end
`;
