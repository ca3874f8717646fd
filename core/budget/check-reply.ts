/**
 * The check script's reply (scripts/check-script.ts) read into a CheckResult: the hit path's one-text
 * allow, a limit or throttle it names, the periods a limit's end stands for.
 */
import type { Period } from '../platform/types';
import type {
  CheckResult,
  LimitFeedback,
  LimitInfo,
  ThrottleFeedback,
  ThrottleInfo,
  ThrottleRefusal,
} from './cache-types';
import { LIMIT_OR_COUNT_FIELD } from './need-hints';
import { periodWindow } from './periods';
import { replyItems } from './script-commands';
import { decodeState } from './snapshot';
import type { ThrottleTable } from './throttles';

type Writable<T> = { -readonly [K in keyof T]: T[K] };

/**
 * The check script's reply as items: the hit path's allow comes as one text when the plan is the hinted
 * one (see CHECK_SCRIPT), its items joined by tabs, the plan left out and the limit field last.
 */
export function checkReplyOf(reply: unknown, hintedPlan: string): string[] {
  if (typeof reply !== 'string') return replyItems(reply);
  const items = reply.split('\t');
  const [kind, , publish, over, max, end, remaining, bucket, synced, throttleField, ...rest] = items;
  if (kind !== 'allow' || rest.length < 3) throw new Error(`unexpected check reply: ${reply.slice(0, 20)}`);
  const field = rest.slice(2).join('\t');
  const allowed = [kind, hintedPlan, publish, over, field, max, end, remaining, bucket, synced] as string[];
  return throttleField === ''
    ? allowed
    : [...allowed, throttleField as string, rest[0] as string, rest[1] as string];
}

/** When a limit's period ends: -1 is eternity, -2 the period `now` is in (the snapshot knew an earlier one). */
function resetAtOf(period: Period, encodedEnd: string, now: number): number | undefined {
  const end = Number(encodedEnd);
  if (end === -1) return undefined;
  return end === -2 ? periodWindow(period, now).end : end;
}

/**
 * The limit a reply names at `at` by its field (`limit:<period>:<metric>`, or the count's), then its max
 * and period end; undefined for a field that does not read as one (an allowed call then goes without
 * feedback, as throttleFeedbackOf explains).
 */
function limitInfoOf(reply: readonly string[], at: number, now: number): Writable<LimitInfo> | undefined {
  const field = LIMIT_OR_COUNT_FIELD.exec(reply[at] as string);
  if (field === null) return undefined;
  const period = field[1] as Period;
  const limit: Writable<LimitInfo> = { metric: field[2] as string, period, max: Number(reply[at + 1]) };
  const resetAt = resetAtOf(period, reply[at + 2] ?? '-1', now);
  if (resetAt !== undefined) limit.resetAt = resetAt;
  return limit;
}

/** The throttle a reply names by its plan and field (see CHECK_SCRIPT); undefined when the table has none. */
function throttleInfoOf(throttles: ThrottleTable, plan: string, field: string): ThrottleInfo | undefined {
  const entry = throttles.entryOf(plan, field);
  if (entry === undefined) return undefined;
  return {
    ...(entry.metric !== undefined && { metric: entry.metric }),
    rate: entry.rate,
    burst: entry.burst,
  };
}

/**
 * The allowed call's throttle feedback, at `at` of the reply when a throttle applied. The script names a
 * field of this cache's own table; were it another, the call is still allowed (its usage is recorded
 * already, so an error here would have the platform count it twice), without feedback.
 */
function throttleFeedbackOf(
  reply: readonly string[],
  at: number,
  throttles: ThrottleTable,
): ThrottleFeedback | undefined {
  if (reply.length <= at) return undefined;
  const throttle = throttleInfoOf(throttles, reply[1] as string, reply[at] as string);
  if (throttle === undefined) return undefined;
  return { ...throttle, remaining: Number(reply[at + 1]), fullInMs: Number(reply[at + 2]) };
}

/** The throttle that refused a call; nothing was recorded, so an unknown one may fail the check. */
function throttleRefusalOf(reply: readonly string[], throttles: ThrottleTable): ThrottleRefusal {
  const throttle = throttleInfoOf(throttles, reply[2] as string, reply[4] as string);
  if (throttle === undefined) {
    throw new Error(`check reply names a throttle this cache does not have: ${reply[4]}`);
  }
  return { ...throttle, retryInMs: Number(reply[5]) };
}

/** The check script's reply (see CHECK_SCRIPT) as a result. */
export function checkResultOf(reply: readonly string[], now: number, throttles: ThrottleTable): CheckResult {
  switch (reply[0]) {
    case 'expired':
      throw new Error('cache answer came after its deadline (is the Redis clock ahead of ours?)');
    case 'miss':
      return { kind: 'miss', claimed: reply[1] === '1', seen: reply[2] === '1' };
    case 'key_unknown':
      return { kind: 'key_unknown', seen: reply[1] === '1' };
    case 'cached': {
      const state = decodeState(reply[1] as string);
      if (state.kind === 'active') return { kind: 'miss', claimed: false, seen: false };
      return { kind: 'cached', state, publish: reply[2] === '1' };
    }
    case 'deny': {
      if (reply[1] === 'rate_limited') {
        return {
          kind: 'throttled',
          plan: reply[2] as string,
          publish: false,
          throttle: throttleRefusalOf(reply, throttles),
        };
      }
      const limit = limitInfoOf(reply, 4, now);
      if (limit === undefined) throw new Error(`check reply names no limit field: ${reply[4]}`);
      return { kind: 'limited', plan: reply[2] as string, publish: reply[3] === '1', limit };
    }
    case 'allow': {
      // Built field by field, not spread: one per allowed call, on the hot path.
      const allowed: Writable<Extract<CheckResult, { kind: 'allow' }>> = {
        kind: 'allow',
        plan: reply[1] as string,
        publish: reply[2] === '1',
        overLimit: reply[3] === '1',
        bucket: Number(reply[8]),
        confirmedAt: Number(reply[9] ?? 0),
      };
      const throttle = throttleFeedbackOf(reply, 10, throttles);
      if (throttle !== undefined) allowed.throttle = throttle;
      const limit: Writable<Partial<LimitFeedback>> | undefined = limitInfoOf(reply, 4, now);
      if (limit !== undefined) {
        limit.remaining = Number(reply[7]);
        allowed.limit = limit as LimitFeedback;
      }
      return allowed;
    }
    default:
      throw new Error(`unexpected check reply: ${reply[0]}`);
  }
}

/** Where an allowed call's reply carries the needs its hints missed (see CHECK_SCRIPT). */
export const CHECK_NEEDS_AT = 13;
