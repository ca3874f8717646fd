/**
 * GCRA, the generic cell rate algorithm (docs/throttling.md), as a Lua fragment of the hot-path script,
 * so a throttle costs no round trip of its own and is exact across every authorizer instance.
 *
 * A throttle of rate r and burst b has the emission interval T = 1/r s and stores the theoretical
 * arrival time (TAT) of the budget's next cell. A call costing n cells is admitted when
 * max(TAT, now) + n·T - now <= b·T: from a rested bucket b calls pass at once, then one every T. A
 * refused call stores nothing; its wait is the excess, the time until the same call would pass.
 *
 * Each throttle is a field of the budget's snapshot hash (`throttle:call`, or `throttle:metric:<name>`),
 * valued `<TAT µs> <rate>`: the script reads that hash already, so a throttle adds one HSET to an allowed
 * call and nothing else. A TAT in the past is a rested bucket, so the fields need no expiry of their own.
 * A TAT stored under another rate is read as the bucket's content in calls, so a changed rate (a new
 * setting, a plan change) keeps the calls already made and applies its own interval to them from the
 * first call that sees the change; the content never exceeds the burst (a lowered burst caps it).
 *
 * Time is Redis's TIME in microseconds, never an instance's clock: every instance then agrees. The
 * caller passes it (the check script reads TIME once, for its deadline and the throttles alike), or a
 * test clock, which only AccessCache's `throttleClock` option sends.
 * TATs are stored rounded down, so rounding can only admit a microsecond early, never refuse a call.
 */
export const THROTTLE_LUA = `
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

-- The plan's throttles that apply to the call (cells: 1 a call, or the metric's usage with its
-- descendants'). The table's lines each start with a newline, so the plan's lines are found by a plain
-- search, whatever the other plans.
local function throttles_of(table_text, plan, requested)
  local applying = {}
  local head = '\\n' .. plan .. '\\t'
  local at = string.find(table_text, head, 1, true)
  while at do
    local from = at + #head
    local line_end = string.find(table_text, '\\n', from, true) or (#table_text + 1)
    local metric, rate, burst = string.match(string.sub(table_text, from, line_end - 1),
      '^([^\\t]*)\\t([^\\t]+)\\t([^\\t]+)$')
    if metric then
      local cells, field = 1, 'throttle:call'
      if metric ~= '' then cells, field = requested[metric] or 0, 'throttle:metric:' .. metric end
      if cells > 0 then
        -- Every field the GCRA sets later is in the constructor: a table that grows past it is rebuilt.
        applying[#applying + 1] = { field = field, metric = metric, rate = rate, burst = tonumber(burst),
          burst_text = burst, interval = 1000000 / tonumber(rate), cells = cells, before = 0, tat = 0,
          excess = 0, remaining = 0, full_ms = 0 }
      end
    end
    at = string.find(table_text, head, line_end, true)
  end
  return applying
end

-- The throttle's TAT before this call (from its stored value, or nil): at least now, at most a full
-- bucket ahead; and whether it was stored under another rate.
local function throttle_tat(stored, throttle, now)
  if not stored then return now, false end
  local tat, rate = string.match(stored, '^(%d+) (.+)$')
  if not tat then return now, false end
  local ahead = math.max(tonumber(tat) - now, 0)
  local converted = rate ~= throttle.rate
  if converted then ahead = ahead / (1000000 / tonumber(rate)) * throttle.interval end
  return now + math.min(ahead, throttle.burst * throttle.interval), converted
end

-- Stores the throttles' TATs (\`at\` picks which one of each): an HSET each, as a plan has one or two.
local function store_tats(app_key, throttles, at)
  for _, throttle in ipairs(throttles) do
    redis.call('HSET', app_key, throttle.field, string.format('%.0f', math.floor(throttle[at])) .. ' ' .. throttle.rate)
  end
end

-- Takes the call's cells from every throttle of the plan that applies, or from none. \`stored\` holds
-- the snapshot's throttle fields; \`forced\` takes the cells whatever the buckets hold (a call the
-- platform admitted already). Returns nil when no throttle applies; { refused = true, the throttle,
-- wait_ms } when one refuses (the longest wait); else the tightest throttle with remaining (calls like
-- this one left at once) and full_ms (until it is rested).
local function take_throttles(app_key, stored, table_text, clock, plan, requested, forced)
  if table_text == '' then return nil end
  local applying = throttles_of(table_text, plan, requested)
  if #applying == 0 then return nil end
  local now = redis_time_us(clock)
  local refused, tightest, converted = nil, nil, nil
  for _, throttle in ipairs(applying) do
    local is_converted
    throttle.before, is_converted = throttle_tat(stored[throttle.field], throttle, now)
    if is_converted then
      converted = converted or {}
      converted[#converted + 1] = throttle
    end
    throttle.tat = throttle.before + throttle.cells * throttle.interval
    local excess = throttle.tat - now - throttle.burst * throttle.interval
    throttle.excess = excess
    if excess > 0.001 and not forced and (not refused or excess > refused.excess) then refused = throttle end
    throttle.remaining = math.max(math.floor((throttle.burst * throttle.interval - (throttle.tat - now)) /
      (throttle.cells * throttle.interval) + 0.000001), 0)
    if not tightest or throttle.remaining < tightest.remaining then tightest = throttle end
  end
  if refused then
    -- Nothing is taken; a bucket stored under an old rate is rewritten under the new one (the same calls),
    -- so it drains at the new rate from the first call that sees the change.
    if converted then store_tats(app_key, converted, 'before') end
    return { refused = true, metric = refused.metric, rate = refused.rate, burst_text = refused.burst_text,
      wait_ms = math.ceil(refused.excess / 1000) }
  end
  store_tats(app_key, applying, 'tat')
  tightest.full_ms = math.ceil((tightest.tat - now) / 1000)
  return tightest
end

-- The throttle's part of an allowed call's reply: metric, rate, burst, remaining, ms until rested. The two
-- counts are whole numbers, so they go back as integer replies, with no string to format.
local function throttle_feedback(throttle)
  if not throttle then return {} end
  return { throttle.metric, throttle.rate, throttle.burst_text, throttle.remaining, throttle.full_ms }
end
`;
