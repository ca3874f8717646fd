/**
 * The reporter's scripts: a budget's usage taken in flight as a batch with an id, the batch's mark
 * (posting, sent), its acknowledgement and the lease given back. Each touches one budget's keys (one
 * slot) and takes the time as an argument.
 *
 * A batch is the in-flight hash (`<bucket start>:<metric>`, `t:<bucket start>`, see prelude.ts)
 * plus its mark, the `batch` key: `<batch id> <state>`, state `new` (taken, not yet sent), `posting`
 * (a report carrying it is on its way: whether the platform took it is unknown) or `sent` (the platform
 * answered 202). 3scale's report API has no idempotency key, so the mark is what lets a reporter that
 * finds a batch left by a dead one tell a batch the platform has from one it may not have:
 * - `sent`: the platform counted it; the drain acknowledges it (folds it into the snapshot's counts) and
 *   never sends it again;
 * - `posting`, or no mark at all: a report may or may not have reached the platform (the reporter died
 *   inside the POST, or between the 202 and the mark); it is sent again (at least once) and said so;
 * - `new`: no report ever carried it; sending it again counts nothing twice.
 */

import type { Period } from '../../platform/types';
import type { BatchHistory, DrainResult, LimitRefusal } from '../cache-types';
import { bucketsOf, totalUsage } from '../usage-buckets';
import { lua, type ScriptDefinition } from './lua';
import { PRELUDE } from './prelude';

/**
 * How long a batch's mark lives: far longer than a lease (a minute) and the sweep's period, so a batch
 * left by a dead reporter is judged by its mark; one found without it is sent again as possibly sent.
 */
export const BATCH_MARK_TTL_MS = 24 * 60 * 60 * 1000;

const BATCH_PRELUDE = lua`${PRELUDE}
-- The batch mark's id and state; nil, nil without a mark.
local function batch_mark(batch_key)
  local mark = redis.call('GET', batch_key)
  if not mark then return nil, nil end
  return string.match(mark, '^(%S+) (%S+)$')
end

-- The platform accepted the in-flight batch: each limit's current value counts the buckets just
-- accepted that lie in its period, until the resync brings the platform's counters (limits stay exact
-- in between); the batch leaves Redis, and with nothing pending the sweep mark goes and the snapshot
-- expires again.
local function acknowledge_batch(app_key, pending_key, inflight_key, since_key, batch_key, now, entry_ttl)
  local snapshot = read_snapshot(app_key)
  local buckets = bucket_totals(inflight_key, snapshot.parents, {})
  for _, limit in ipairs(snapshot.limits) do
    if limit.period_end < 0 or now < limit.period_end then
      local reported = 0
      for start, totals in pairs(buckets) do
        if limit.period_end < 0 or (start >= limit.period_start and start < limit.period_end) then
          reported = reported + (totals[limit.metric] or 0)
        end
      end
      if reported > 0 then
        redis.call('HSET', app_key, limit.field, int(limit.period_start) .. ' ' .. int(limit.period_end) .. ' ' ..
          int(limit.max) .. ' ' .. int(limit.current + reported))
      end
    end
  end
  redis.call('DEL', inflight_key, batch_key)
  if redis.call('EXISTS', pending_key) == 0 then
    redis.call('DEL', since_key)
    if redis.call('EXISTS', app_key) == 1 then redis.call('PEXPIRE', app_key, entry_ttl) end
  end
end
`;

/**
 * Takes the usage to report. KEYS: app, pending, inflight, since, lease, refused, batch. ARGV: lease
 * token (also the id of a batch this drain starts), lease ms, now, entry TTL ms, batch mark TTL ms, the
 * token of a lease this reporter holds and may take over ('' = none: a lease it could not give back).
 * A batch left in flight by an earlier attempt is first judged by its mark: `sent` is acknowledged here
 * (the platform has it), anything else is sent again as it is, and nothing new joins it until the
 * platform accepted it. The limits refused calls hit since the last drain are taken too
 * (`<period>:<metric>` fields, each with the time of its last refusal).
 * Returns {'busy'} (another reporter holds the lease) | {'empty', sealed credential or '', settled,
 * refused field, time, ...} (nothing to report; the credential lets the reporter refresh the budget all
 * the same) | {'unreadable', settled} (no sealed credential) | {'ready', sealed credential, resent,
 * settled, batch id, refused item count, refused field, time, ..., field, value, ...} with the fields of
 * the in-flight hash. settled: '1' when a batch marked sent was acknowledged here. resent: '0' a new
 * batch, '1' a batch no report carried yet, '2' a batch a report may have carried (sending it again may
 * count it twice).
 */
export const DRAIN_SCRIPT: ScriptDefinition = {
  name: 'accessDrain',
  numberOfKeys: 7,
  lua: lua`${BATCH_PRELUDE}
local holder = redis.call('GET', KEYS[5])
if holder and holder ~= ARGV[6] then return {'busy'} end
local refused = redis.call('HGETALL', KEYS[6])
redis.call('DEL', KEYS[6])
local sealed = redis.call('HGET', KEYS[1], 'cred')
local settled, resent = '0', '0'
local batch_id, state = batch_mark(KEYS[7])
if redis.call('EXISTS', KEYS[3]) == 1 then
  if state == 'sent' then
    acknowledge_batch(KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[7], tonumber(ARGV[3]), ARGV[4])
    settled = '1'
  elseif state == 'new' then
    resent = '1'
  else
    resent = '2'
  end
end
if redis.call('EXISTS', KEYS[3]) == 0 then
  if redis.call('EXISTS', KEYS[2]) == 0 then
    redis.call('DEL', KEYS[4])
    if holder then redis.call('DEL', KEYS[5]) end
    return {'empty', sealed or '', settled, unpack(refused)}
  end
  redis.call('RENAME', KEYS[2], KEYS[3])
  batch_id = ARGV[1]
  redis.call('SET', KEYS[7], batch_id .. ' new', 'PX', ARGV[5])
elseif not batch_id then
  -- In flight without a mark (left by a version without batches): it gets one, as a batch that a
  -- report may have carried.
  batch_id = ARGV[1]
  redis.call('SET', KEYS[7], batch_id .. ' posting', 'PX', ARGV[5])
end
if not sealed then
  if holder then redis.call('DEL', KEYS[5]) end
  return {'unreadable', settled}
end
redis.call('SET', KEYS[5], ARGV[1], 'PX', ARGV[2])
-- unpack() is cut to one value anywhere but last in a table constructor: build the reply by hand.
local reply = {'ready', sealed, resent, settled, batch_id, tostring(#refused)}
for _, field in ipairs(refused) do reply[#reply + 1] = field end
for _, value in ipairs(redis.call('HGETALL', KEYS[3])) do reply[#reply + 1] = value end
return {unpack(reply)}
`,
};

/**
 * Marks a batch `posting` (before its report goes out) or `sent` (once the platform answered 202), or
 * back `new` (the platform refused the report: it counted nothing). KEYS: batch. ARGV: batch id,
 * state, mark TTL ms. A batch no longer in flight under that id (acknowledged meanwhile) is left alone.
 * Returns '1' when marked, '0' when the batch is gone.
 */
export const MARK_BATCH_SCRIPT: ScriptDefinition = {
  name: 'accessMarkBatch',
  numberOfKeys: 1,
  lua: lua`
local mark = redis.call('GET', KEYS[1])
if not mark or string.match(mark, '^(%S+) ') ~= ARGV[1] then return '0' end
redis.call('SET', KEYS[1], ARGV[1] .. ' ' .. ARGV[2], 'PX', ARGV[3])
return '1'
`,
};

/**
 * The platform accepted the batch. KEYS: app, pending, inflight, since, lease, batch.
 * ARGV: now, lease token, entry TTL ms, batch id.
 * Acknowledges the batch only while it is the one in flight (another reporter may have acknowledged it
 * by its mark, and a new batch be in flight since); gives the lease back if it is still this one's.
 * Returns 'ok' when acknowledged here, 'gone' when the batch had left already.
 */
export const ACKNOWLEDGE_SCRIPT: ScriptDefinition = {
  name: 'accessAcknowledge',
  numberOfKeys: 6,
  lua: lua`${BATCH_PRELUDE}
if redis.call('GET', KEYS[5]) == ARGV[2] then redis.call('DEL', KEYS[5]) end
local batch_id = batch_mark(KEYS[6])
if batch_id ~= ARGV[4] or redis.call('EXISTS', KEYS[3]) == 0 then return 'gone' end
acknowledge_batch(KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[6], tonumber(ARGV[1]), ARGV[3])
return 'ok'
`,
};

export const REPORT_BATCH_SCRIPTS: readonly ScriptDefinition[] = [
  DRAIN_SCRIPT,
  MARK_BATCH_SCRIPT,
  ACKNOWLEDGE_SCRIPT,
];

const HISTORY_OF_REPLY: Readonly<Record<string, BatchHistory>> = {
  '0': 'none',
  '1': 'unsent',
  '2': 'maybe-sent',
};

const REFUSAL_FIELD = /^([a-z]+):(.+)$/;

/** The refusals hash's `<period>:<metric>` fields, each followed by the time of its last refusal. */
function refusalsOf(flat: readonly string[]): LimitRefusal[] {
  const refusals: LimitRefusal[] = [];
  for (let i = 0; i + 1 < flat.length; i += 2) {
    const match = REFUSAL_FIELD.exec(flat[i] as string);
    if (match)
      refusals.push({ period: match[1] as Period, metric: match[2] as string, at: Number(flat[i + 1]) });
  }
  return refusals;
}

/** DRAIN_SCRIPT's reply as a result. */
export function drainResultOf(reply: readonly string[]): DrainResult {
  const [kind, ...rest] = reply;
  if (kind === 'ready') {
    const [sealedCredential = '', resent = '', settled, batch = '', refusalCount, ...fields] = rest;
    const count = Number(refusalCount);
    const buckets = bucketsOf(fields.slice(count));
    const history = HISTORY_OF_REPLY[resent];
    if (history === undefined) throw new Error(`unexpected drain reply: resent ${resent}`);
    return {
      kind,
      sealedCredential,
      batch,
      buckets,
      usage: totalUsage(buckets),
      history,
      refusals: refusalsOf(fields.slice(0, count)),
      settledSent: settled === '1',
    };
  }
  if (kind === 'empty') {
    const [sealedCredential = '', settled, ...refused] = rest;
    return {
      kind,
      ...(sealedCredential !== '' && { sealedCredential }),
      refusals: refusalsOf(refused),
      settledSent: settled === '1',
    };
  }
  if (kind === 'unreadable') return { kind, settledSent: rest[0] === '1' };
  if (kind === 'busy') return { kind };
  throw new Error(`unexpected drain reply: ${kind}`);
}
