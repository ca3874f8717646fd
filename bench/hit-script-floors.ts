/**
 * Hits written for the measurement, not for the product: what a cache hit costs Redis when it does less
 * than the product's hit path (docs/performance.md, "How low a hit goes"). Each decides one call of one
 * metric against the limits its need lists, kept as counts (`count:<period>:<metric>`, keys.ts), records
 * the call and opens the report window, and replies with the product's one text; none handles what the
 * product must besides (several metrics, throttles, application keys, stale hints, counts another writer
 * made stale). bench/hit-script.ts runs them beside the product's hit, each on a budget of its own that
 * the product stored and hit, with 3 keys (app, pending, since) and 11 arguments: now, deadline (epoch
 * ms, 0 = none), window ms, plan, the need field, two count fields, the need as stored, bucket start,
 * metric, amount.
 */

/** The deadline, as the product's hit checks it by Redis's clock. */
const DEADLINE = `
local now = tonumber(ARGV[1])
if tonumber(ARGV[2]) > 0 then
  local time = redis.call('TIME')
  if tonumber(time[1]) * 1000 + tonumber(time[2]) / 1000 > tonumber(ARGV[2]) then return {'expired'} end
end
local amount = tonumber(ARGV[11])
`;

/**
 * The decision from the two counts read into `values` (state, plan, synced, window, need, the counts),
 * as straight code (a closure would be made on every call): the counts' new texts and the report window
 * in `writes`, the fewest calls left in `tightest`.
 */
const DECIDE = `
if values[1] ~= 'active' or values[2] ~= ARGV[4] or values[5] ~= ARGV[8] then return {'general'} end
local writes, tightest = {}, nil
for i = 6, 7 do
  local value = values[i]
  if type(value) ~= 'string' then return {'general'} end
  local end_text, max, count = string.match(value, '^(%-?%d+) (%d+) (%d+)$')
  local period_end = tonumber(end_text)
  if not period_end or (period_end >= 0 and now >= period_end) then return {'general'} end
  local used = tonumber(count) + amount
  local left = tonumber(max) - used
  if left < 0 then return {'general'} end
  writes[#writes + 1], writes[#writes + 2] = ARGV[i], end_text .. ' ' .. max .. ' ' .. string.format('%.0f', used)
  if not tightest or left < tightest[1] then tightest = { left, max, end_text, ARGV[i] } end
end
if type(values[4]) ~= 'string' or tonumber(values[4]) <= now then
  writes[#writes + 1], writes[#writes + 2] = 'window', string.format('%.0f', now + tonumber(ARGV[3]))
end
`;

/** The product's one-text allow. */
const REPLY = `
return 'allow\\t\\t0\\t0\\t' .. tightest[2] .. '\\t' .. tightest[3] .. '\\t' .. tightest[1] .. '\\t' .. ARGV[9] ..
  '\\t' .. values[3] .. '\\t\\t\\t\\t' .. tightest[4]
`;

export interface HitFloorDesign {
  readonly name: string;
  /** What it does, against the product's hit. */
  readonly does: string;
  readonly lua: string;
  /** Whether it decides and records each call, so its budget's count goes up by every call. */
  readonly decides: boolean;
  /** Whether it runs without TIME (the deadline argument 0). */
  readonly withoutDeadline?: boolean;
}

/** Counts in the snapshot hash, usage in its own (5 commands: TIME, HMGET, HSET, HINCRBY, HSET). */
const COUNTS_BESIDE_USAGE = `${DEADLINE}
local values = redis.call('HMGET', KEYS[1], 'state', 'plan', 'synced', 'window', ARGV[5], ARGV[6], ARGV[7])
${DECIDE}
redis.call('HSET', KEYS[1], unpack(writes))
local bucket = ARGV[9]
if redis.call('HINCRBY', KEYS[2], bucket .. ':' .. ARGV[10], amount) == amount and
    redis.call('SET', KEYS[3], ARGV[1], 'NX') then
  redis.call('PERSIST', KEYS[1])
end
redis.call('HSET', KEYS[2], 't:' .. bucket, ARGV[1])
${REPLY}`;

/** Counts and the bucket's usage in the snapshot hash (3 commands: TIME, HMGET, HSET). */
const ONE_HASH = `${DEADLINE}
local usage_field = 'u:' .. ARGV[9] .. ':' .. ARGV[10]
local values = redis.call('HMGET', KEYS[1], 'state', 'plan', 'synced', 'window', ARGV[5], ARGV[6], ARGV[7], usage_field)
${DECIDE}
local held = values[8]
if type(held) ~= 'string' then
  held = '0'
  if redis.call('SET', KEYS[3], ARGV[1], 'NX') then redis.call('PERSIST', KEYS[1]) end
end
writes[#writes + 1], writes[#writes + 2] = usage_field, string.format('%.0f', tonumber(held) + amount)
writes[#writes + 1], writes[#writes + 2] = 't:' .. ARGV[9], ARGV[1]
redis.call('HSET', KEYS[1], unpack(writes))
${REPLY}`;

export const HIT_FLOOR_DESIGNS: readonly HitFloorDesign[] = [
  {
    name: 'counts, usage apart',
    does: 'one metric, counts beside the limits, usage in its own hash: TIME, HMGET, HSET, HINCRBY, HSET',
    lua: COUNTS_BESIDE_USAGE,
    decides: true,
  },
  {
    name: 'one hash',
    does: "the same with the bucket's usage in the snapshot hash: TIME, HMGET, HSET",
    lua: ONE_HASH,
    decides: true,
  },
  {
    name: 'one hash, no TIME',
    does: 'the same without the deadline (no TIME): HMGET, HSET',
    lua: ONE_HASH,
    decides: true,
    withoutDeadline: true,
  },
  {
    name: 'return 1, 3 keys',
    does: 'the call alone, with the designs’ 3 keys and 11 arguments',
    lua: 'return 1',
    decides: false,
  },
];
