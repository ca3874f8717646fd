/**
 * Refusals an authorizer instance keeps in memory, so a credential that keeps calling after a refusal
 * costs no Redis command (issue 23; envoyproxy/ratelimit's local cache of over-limit keys does the same).
 * It only ever refuses, never allows: a call it does not know goes on to Redis as before.
 *
 * - `limits_exceeded`, per budget, key and the metrics the call maps to: until the earlier of the limit's reset
 *   and `boundMs`. The limit may be on a parent of the call's metrics (the hierarchy is Redis'), so the
 *   refusal is kept for the call's own metrics: only a call to the same metrics, adding at least the
 *   refused amount to each, is refused from memory; a smaller one may fit what is left and asks Redis.
 *   The key is part of it: only a key Redis verified gets the limit's refusal from memory, so a wrong
 *   key is checked (and refused 401) and learns nothing of the application's usage.
 * - A credential the platform refused (401), per budget and key: for `boundMs`.
 * - `rate_limited`, per budget and the metrics the call maps to: until the earlier of the moment the GCRA
 *   said the same call can pass and `boundMs`. Never wrongly: another instance's admissions only push that
 *   moment later, and the moment is counted from before the call was sent, less the millisecond the
 *   script rounds its wait up by. As for limits, only a call adding at least the refused amounts is
 *   refused from memory (a metric's throttle takes a cell per unit of the metric).
 *
 * `boundMs` (setting `refusalMemoryMs`, default 1 s) keeps the propagation of a raised limit, a plan
 * change or a new key within about one second, as the webhooks promise.
 *
 * Past the bound, a limit or throttle refusal is re-checked by one call, not by every call that comes at
 * once: the first goes to Redis, and the others are refused for `RECHECK_GRACE_MS` while it does, never
 * past the limit's reset or the moment the throttle lets the call pass. The re-check's answer replaces
 * the entry (refused again) or removes it (any other answer: `forget`), so the calls after it get the
 * re-check's answer: a raised limit lets them through, a suspension refuses them as such.
 */
import type { LimitInfo, ThrottleInfo, ThrottleRefusal } from '../budget/cache-types';
import type { Usage } from '../platform/types';

/** Entries an instance keeps at most: beyond it, the oldest goes (a flood of distinct refusals). */
export const MAX_REMEMBERED_REFUSALS = 10_000;

/**
 * How long the other calls keep a refusal past its bound while one call re-checks it: a Redis round
 * trip, with room for a loaded machine; the next call re-checks when no answer came by then.
 */
export const RECHECK_GRACE_MS = 100;

export type RememberedRefusal =
  | { readonly kind: 'limited'; readonly plan: string; readonly limit: LimitInfo }
  | { readonly kind: 'invalid' }
  | { readonly kind: 'throttled'; readonly plan: string; readonly throttle: ThrottleRefusal };

interface HeldRefusal {
  /** Until when the refusal is kept (its bound, then the grace of a re-check). */
  readonly until: number;
  /** The latest it may ever be kept: the limit's reset, or when the throttle lets the call pass. */
  readonly latest: number;
  /** The amounts the refused call added, per metric. */
  readonly usage: Usage;
  /** Past its bound, kept for a re-check's grace. */
  readonly graced?: boolean;
}

interface LimitedEntry extends HeldRefusal {
  readonly plan: string;
  readonly limit: LimitInfo;
}

interface ThrottledEntry extends HeldRefusal {
  readonly plan: string;
  readonly throttle: ThrottleInfo;
  /** When the GCRA said the refused call could pass (the Retry-After a remembered refusal tells). */
  readonly retryAt: number;
}

export class RefusalMemory {
  private readonly limited = new Map<string, LimitedEntry>();
  private readonly invalid = new Map<string, number>();
  private readonly throttled = new Map<string, ThrottledEntry>();

  constructor(
    private readonly boundMs: number,
    private readonly maxEntries: number = MAX_REMEMBERED_REFUSALS,
  ) {}

  /** The refusal memory holds for this call, if any. */
  refusalOf(credentialId: string, keyId: string, usage: Usage, now: number): RememberedRefusal | undefined {
    if (this.boundMs <= 0) return undefined;
    const invalidUntil =
      this.invalid.size === 0 ? undefined : this.invalid.get(invalidKey(credentialId, keyId));
    if (invalidUntil !== undefined) {
      if (now < invalidUntil) return { kind: 'invalid' };
      this.invalid.delete(invalidKey(credentialId, keyId));
    }
    // Nothing remembered (an instance whose calls pass): no key to build, every call of the hot path.
    if (this.limited.size === 0 && this.throttled.size === 0) return undefined;
    const key = limitedKey(credentialId, keyId, usage);
    const graceMs = Math.min(RECHECK_GRACE_MS, this.boundMs);
    const entry = heldEntry(this.limited, key, usage, now, graceMs, 'once');
    if (entry !== undefined) return { kind: 'limited', plan: entry.plan, limit: entry.limit };
    const throttled = heldEntry(this.throttled, key, usage, now, graceMs, 'again');
    if (throttled === undefined) return undefined;
    return {
      kind: 'throttled',
      plan: throttled.plan,
      throttle: { ...throttled.throttle, retryInMs: throttled.retryAt - now },
    };
  }

  /**
   * The throttle refusal kept for this call even past its bound, until the GCRA lets the call pass, for a
   * call whose re-check could not reach Redis: the platform knows no throttle and would let it through.
   * A limit refusal has no such standing: the platform knows its limits, and a raised one must reach the
   * call within the bound.
   */
  standingThrottleRefusalOf(
    credentialId: string,
    keyId: string,
    usage: Usage,
    now: number,
  ): RememberedRefusal | undefined {
    if (this.throttled.size === 0) return undefined;
    const throttled = this.throttled.get(limitedKey(credentialId, keyId, usage));
    if (throttled === undefined || now >= throttled.latest || !refusedAtLeast(throttled, usage))
      return undefined;
    return {
      kind: 'throttled',
      plan: throttled.plan,
      throttle: { ...throttled.throttle, retryInMs: throttled.retryAt - now },
    };
  }

  /** A call with a verified key adding `usage` was refused by `limit` (on one of its metrics or a parent). */
  rememberLimited(
    credentialId: string,
    keyId: string,
    usage: Usage,
    plan: string,
    limit: LimitInfo,
    now: number,
  ): void {
    const latest = limit.resetAt ?? Number.POSITIVE_INFINITY;
    const until = Math.min(now + this.boundMs, latest);
    if (until <= now) return;
    const key = limitedKey(credentialId, keyId, usage);
    const known = this.limited.get(key)?.usage ?? usage;
    this.limited.delete(key);
    this.limited.set(key, { until, latest, usage: smallestOf(usage, known), plan, limit });
    trim(this.limited, this.maxEntries);
  }

  /**
   * A call adding `usage`, sent at `now`, was refused by a throttle whose GCRA said the same call passes in
   * `throttle.retryInMs` (rounded up to the millisecond, hence the one taken off).
   */
  rememberThrottled(
    credentialId: string,
    keyId: string,
    usage: Usage,
    plan: string,
    throttle: ThrottleRefusal,
    now: number,
  ): void {
    const retryAt = now + throttle.retryInMs;
    const latest = retryAt - 1;
    const until = Math.min(now + this.boundMs, latest);
    if (until <= now) return;
    const key = limitedKey(credentialId, keyId, usage);
    const known = this.throttled.get(key)?.usage ?? usage;
    this.throttled.delete(key);
    const { retryInMs: _, ...info } = throttle;
    this.throttled.set(key, {
      until,
      latest,
      usage: smallestOf(usage, known),
      plan,
      throttle: info,
      retryAt,
    });
    trim(this.throttled, this.maxEntries);
  }

  /** A call with this budget, key and metrics was answered otherwise: no limit or throttle refusal kept holds. */
  forget(credentialId: string, keyId: string, usage: Usage): void {
    if (this.limited.size === 0 && this.throttled.size === 0) return;
    const key = limitedKey(credentialId, keyId, usage);
    this.limited.delete(key);
    this.throttled.delete(key);
  }

  /** The platform said this credential (budget and key) is not valid. */
  rememberInvalid(credentialId: string, keyId: string, now: number): void {
    if (this.boundMs <= 0) return;
    const key = invalidKey(credentialId, keyId);
    this.invalid.delete(key);
    this.invalid.set(key, now + this.boundMs);
    trim(this.invalid, this.maxEntries);
  }
}

/** Two refusals of the same metrics: the smaller amounts hold for both. */
function smallestOf(usage: Usage, known: Usage): Usage {
  return Object.fromEntries(
    Object.entries(usage).map(([metric, amount]) => [metric, Math.min(amount, known[metric] ?? amount)]),
  );
}

/** Whether an entry whose grace ran out unanswered gets another (`again`) or is dropped (`once`). */
type Regrace = 'again' | 'once';

/**
 * The entry kept under `key` while it holds at `now` for a call adding `usage`: one adding at least the
 * refused amounts to each metric. An entry past its time is this call's to re-check: the others keep it
 * for `graceMs` more, never past its latest, when it is dropped. A grace that ran out with no answer (a
 * slow Redis) is renewed for the next re-check, or, `once`, ends the entry: a limit refusal then holds
 * no longer than its bound and one grace, for a raised limit must reach the calls by then.
 */
function heldEntry<Entry extends HeldRefusal>(
  entries: Map<string, Entry>,
  key: string,
  usage: Usage,
  now: number,
  graceMs: number,
  regrace: Regrace,
): Entry | undefined {
  const entry = entries.get(key);
  if (entry === undefined) return undefined;
  if (now >= entry.until) {
    const until = Math.min(now + graceMs, entry.latest);
    if (until > now && !(regrace === 'once' && entry.graced))
      entries.set(key, { ...entry, until, graced: true });
    else entries.delete(key);
    return undefined;
  }
  return refusedAtLeast(entry, usage) ? entry : undefined;
}

function refusedAtLeast(entry: HeldRefusal, usage: Usage): boolean {
  return Object.entries(entry.usage).every(([metric, amount]) => (usage[metric] ?? 0) >= amount);
}

/** The budget, the key and the call's metric names (hex ids, then JSON: no two encode alike). */
function limitedKey(credentialId: string, keyId: string, usage: Usage): string {
  return `${credentialId} ${keyId} ${JSON.stringify(Object.keys(usage).sort())}`;
}

/** Credential ids are hex: a space cannot occur in one, so no two pairs join alike. */
function invalidKey(credentialId: string, keyId: string): string {
  return `${credentialId} ${keyId}`;
}

/** Drops the oldest entries (a Map keeps insertion order) beyond `max`. */
function trim(entries: Map<string, unknown>, max: number): void {
  for (const key of entries.keys()) {
    if (entries.size <= max) return;
    entries.delete(key);
  }
}
