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
 *
 * `boundMs` (setting `refusalMemoryMs`, default 1 s) keeps the propagation of a raised limit, a plan
 * change or a new key within about one second, as the webhooks promise.
 */
import type { LimitInfo } from '../budget/cache';
import type { Usage } from '../platform/types';

/** Entries an instance keeps at most: beyond it, the oldest goes (a flood of distinct refusals). */
export const MAX_REMEMBERED_REFUSALS = 10_000;

export type RememberedRefusal =
  | { readonly kind: 'limited'; readonly plan: string; readonly limit: LimitInfo }
  | { readonly kind: 'invalid' };

interface LimitedEntry {
  readonly until: number;
  /** The amounts the refused call added, per metric. */
  readonly usage: Usage;
  readonly plan: string;
  readonly limit: LimitInfo;
}

export class RefusalMemory {
  private readonly limited = new Map<string, LimitedEntry>();
  private readonly invalid = new Map<string, number>();

  constructor(
    private readonly boundMs: number,
    private readonly maxEntries: number = MAX_REMEMBERED_REFUSALS,
  ) {}

  /** The refusal memory holds for this call, if any. */
  refusalOf(credentialId: string, keyId: string, usage: Usage, now: number): RememberedRefusal | undefined {
    if (this.boundMs <= 0) return undefined;
    const invalidUntil = this.invalid.get(invalidKey(credentialId, keyId));
    if (invalidUntil !== undefined) {
      if (now < invalidUntil) return { kind: 'invalid' };
      this.invalid.delete(invalidKey(credentialId, keyId));
    }
    const key = limitedKey(credentialId, keyId, usage);
    const entry = this.limited.get(key);
    if (entry === undefined) return undefined;
    if (now >= entry.until) {
      this.limited.delete(key);
      return undefined;
    }
    const atLeastRefused = Object.entries(entry.usage).every(
      ([metric, amount]) => (usage[metric] ?? 0) >= amount,
    );
    return atLeastRefused ? { kind: 'limited', plan: entry.plan, limit: entry.limit } : undefined;
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
    const until = Math.min(now + this.boundMs, limit.resetAt ?? Number.POSITIVE_INFINITY);
    if (until <= now) return;
    const key = limitedKey(credentialId, keyId, usage);
    const known = this.limited.get(key)?.usage ?? usage;
    this.limited.delete(key);
    // Two refusals of the same metrics: the smaller amounts hold for both.
    const smallest = Object.fromEntries(
      Object.entries(usage).map(([metric, amount]) => [metric, Math.min(amount, known[metric] ?? amount)]),
    );
    this.limited.set(key, { until, usage: smallest, plan, limit });
    trim(this.limited, this.maxEntries);
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
