/**
 * GCRA, the generic cell rate algorithm (docs/throttling.md), as a Lua fragment of the hot-path script,
 * so a throttle costs no round trip of its own and is exact across every authorizer instance.
 *
 * A throttle of rate r and burst b has the emission interval T = 1/r s and stores the theoretical
 * arrival time (TAT) of the budget's next cell. A call costing n cells is admitted when
 * max(TAT, now) + n·T - now <= b·T: from a rested bucket b calls pass at once, then one every T. A
 * refused call stores nothing; its wait is the excess, the time until the same call would pass.
 *
 * Each throttle is a field of the budget's throttle hash (`call`, or `metric:<name>`), valued
 * `<TAT µs> <rate>`: a TAT stored under another rate is read as the bucket's content in calls, so a
 * changed rate (a new setting, a plan change) keeps the calls already made and applies its own interval
 * to them from the first call that sees the change; the content never exceeds the burst (a lowered
 * burst caps it).
 *
 * Time is Redis's TIME in microseconds, never an instance's clock: every instance then agrees. The one
 * exception is a test clock (`clock` not ''), which only AccessCache's `throttleClock` option sends.
 * TATs are stored rounded down, so rounding can only admit a microsecond early, never refuse a call.
 */
export const THROTTLE_LUA = `
local function throttle_now(clock)
  if clock ~= '' then return tonumber(clock) end
  local time = redis.call('TIME')
  -- A float factor: fengari (ioredis-mock) multiplies integers in 32 bits.
  return tonumber(time[1]) * 1000000.0 + tonumber(time[2])
end

-- The plan's throttles that apply to the call (cells: 1 a call, or the metric's usage with its
-- descendants'), and the longest time any of the plan's buckets takes to empty (the hash's lifetime).
local function throttles_of(table_text, plan, requested)
  local applying, horizon = {}, 0
  for entry_plan, metric, rate, burst in string.gmatch(table_text, '([^\\t\\n]+)\\t([^\\t\\n]*)\\t([^\\t\\n]+)\\t([^\\t\\n]+)\\n') do
    if entry_plan == plan then
      local interval, size = 1000000 / tonumber(rate), tonumber(burst)
      horizon = math.max(horizon, interval * size)
      local cells, field = 1, 'call'
      if metric ~= '' then cells, field = requested[metric] or 0, 'metric:' .. metric end
      if cells > 0 then
        applying[#applying + 1] = { field = field, metric = metric, rate = rate, burst = size,
          interval = interval, cells = cells }
      end
    end
  end
  return applying, horizon
end

-- The throttle's TAT before this call: at least now, at most a full bucket ahead; and whether it was
-- stored under another rate.
local function throttle_tat(key, throttle, now)
  local stored = redis.call('HGET', key, throttle.field)
  if not stored then return now, false end
  local tat, rate = string.match(stored, '^(%d+) (.+)$')
  if not tat then return now, false end
  local ahead = math.max(tonumber(tat) - now, 0)
  local converted = rate ~= throttle.rate
  if converted then ahead = ahead / (1000000 / tonumber(rate)) * throttle.interval end
  return now + math.min(ahead, throttle.burst * throttle.interval), converted
end

local function store_tat(key, throttle, tat)
  redis.call('HSET', key, throttle.field, string.format('%.0f', math.floor(tat)) .. ' ' .. throttle.rate)
end

-- Takes the call's cells from every throttle of the plan that applies, or from none. \`forced\` takes
-- them whatever the buckets hold (a call the platform admitted already). Returns nil when no throttle
-- applies; { refused = true, the throttle, wait_ms } when one refuses (the longest wait); else the
-- tightest throttle with remaining (calls like this one left at once) and full_ms (until it is rested).
local function take_throttles(key, table_text, clock, plan, requested, forced)
  if table_text == '' then return nil end
  local applying, horizon = throttles_of(table_text, plan, requested)
  if #applying == 0 then return nil end
  local now = throttle_now(clock)
  local refused, tightest = nil, nil
  for _, throttle in ipairs(applying) do
    throttle.before, throttle.converted = throttle_tat(key, throttle, now)
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
    for _, throttle in ipairs(applying) do
      if throttle.converted then store_tat(key, throttle, throttle.before) end
    end
    return { refused = true, metric = refused.metric, rate = refused.rate, burst = refused.burst,
      wait_ms = math.ceil(refused.excess / 1000) }
  end
  for _, throttle in ipairs(applying) do store_tat(key, throttle, throttle.tat) end
  redis.call('PEXPIRE', key, string.format('%.0f', math.ceil(horizon / 1000) + 1))
  tightest.full_ms = math.ceil((tightest.tat - now) / 1000)
  return tightest
end

-- The throttle's part of an allowed call's reply: metric, rate, burst, remaining, ms until rested.
local function throttle_feedback(throttle)
  if not throttle then return {} end
  return { throttle.metric, throttle.rate, string.format('%.0f', throttle.burst),
    string.format('%.0f', throttle.remaining), string.format('%.0f', throttle.full_ms) }
end
`;
