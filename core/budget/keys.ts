/**
 * Redis key layout. A budget is what limits count against: the application (its user key in user_key
 * mode, its app id in app_id mode, whatever key or token it presents). Every key of one budget carries
 * the hash tag `{<credentialId>}`, so each Lua script touches a single slot and runs unchanged on a
 * sharded (cluster-mode) Redis.
 *
 *   am:{id}:neg       string, TTL negativeCacheTtlSeconds: `invalid:<code>` (401), a short-lived answer
 *                     that keeps a flood of bad credentials off the platform
 *   am:{id}:app       hash, the platform's last answer for the budget:
 *                       state            `active` | `denied:<reason>` | `invalid:<code>`
 *                       plan             plan name
 *                       cred             the credential the reporter uses, sealed (AES-256-GCM, seal.ts)
 *                       synced           when the platform last confirmed the answer (epoch ms): a first
 *                                        call's authrep, an authorize, the reporter's resync
 *                       limit:<period>:<metric>  `<period start> <period end> <max> <current>` (-1 -1: eternity)
 *                       parent:<metric>  the metric's parent (the platform's hierarchy)
 *                       window           end of the report window (epoch ms): while it is ahead, an SNS
 *                                        message for this budget is on its way
 *                       throttle:call@<rate>, throttle:metric:<name>@<rate>  the TAT (µs) of the
 *                                        budget's GCRA throttles (throttle-script.ts)
 *                       bucket           the period of the pending buckets (`minute` | `hour` | `day`)
 *                       need:<metric>    what a call of the metric reads: its ancestors, nearest first,
 *                                        then the limit fields of it and them (snapshot.ts)
 *                     The hot path reads by name what the call needs (one HMGET while the instance's
 *                     hints of the needs hold, cache-scripts.ts); the other scripts read it whole. A new
 *                     answer keeps `window`, the throttles and the newer of each limit's counts.
 *   am:{id}:keys      hash, app_id budgets: what the platform said of each application key presented,
 *                     by key id (keyIdOf): `ok <sealed credential>` | `bad <until ms> <code>`
 *   am:{id}:pending   hash, usage allowed from the cache and not yet reported, per period bucket:
 *                     `<bucket start>:<metric>` -> usage, `t:<bucket start>` -> time of its last call
 *   am:{id}:inflight  hash, the same for usage taken by a reporter and not yet accepted by the platform
 *   am:{id}:rejected  hash, metric -> usage the platform refuses to take (a metric it does not have)
 *   am:{id}:refusals  hash, `<period>:<metric>` -> when a call was last refused at that limit; the
 *                     reporter takes it with the usage (a refusal counts as reaching 100 % for alerts)
 *   am:{id}:alerts    hash, usage alerts not yet published (alerts.ts): `<period>:<metric>:<period start>:<level>`
 *                     -> the alert as JSON, kept from its claim until SNS accepted it
 *   am:{id}:appname   string, EX hours (user_key budgets with an admin token): the application the
 *                     platform's admin API names for the key, JSON {id, name, account}, or `-` (unknown)
 *   am:{id}:alert:<period>:<metric>:<period start>:<level>
 *                     string, PX one period past the period's end: the alert of that level in that
 *                     period instance is `sending:<token>` (under a short lease), `out` (its publish
 *                     failed: in the alerts hash for a retry) or `sent`; SET NX makes it fire once
 *   am:{id}:since     string, epoch ms of the oldest unreported usage (pending or in flight); the sweep
 *                     finds budgets by scanning for these keys
 *   am:{id}:lease     string, PX: the token of the reporter currently flushing the budget
 *   am:{id}:batch     string, PX a day (BATCH_MARK_TTL_MS): `<batch id> <state>` of the in-flight usage,
 *                     state `new` | `posting` | `sent` (report-batch-scripts.ts); it goes with the batch
 *   am:{id}:first     string, PX: the token of the one call asking the platform for a budget it has no
 *                     snapshot of; concurrent first calls wait for its answer instead of asking too
 *   am:{id}:nbf       string, EX the longest a token lives: epoch ms before which the application's
 *                     access tokens were issued are refused (its key deleted, it suspended or deleted:
 *                     credentials/token-not-before.ts)
 *   am:{id}:seen      set, EX 30 days from the last answer: the key ids ('' for the budget's own
 *                     credential) the platform said exist; it outlives the snapshot, so the first-call
 *                     gate never counts a known credential whose snapshot expired (seen-marks.ts)
 *
 * Keys of the service, not of a budget (mappingRulesSource platform, decision/platform-mapping-rules.ts):
 *   am:<serviceId>:rules          string, no TTL: the mapping rules last read from the platform, JSON
 *                                 {readAt, version, rules}; the last good ones outlive a platform outage
 *   am:<serviceId>:rules:refresh  string, PX: the token of the one instance reading the platform's rules;
 *                                 a failed read keeps it to its expiry, so instances retry once per lease
 */

export const KEY_PREFIX = 'am';

export interface CredentialKeys {
  readonly negative: string;
  readonly app: string;
  readonly keys: string;
  readonly pending: string;
  readonly inFlight: string;
  readonly rejected: string;
  readonly refusals: string;
  readonly alerts: string;
  readonly since: string;
  readonly lease: string;
  readonly batch: string;
  readonly firstCall: string;
  readonly tokensNotBefore: string;
  readonly seen: string;
}

export function credentialKeys(credentialId: string): CredentialKeys {
  const base = `${KEY_PREFIX}:{${credentialId}}`;
  return {
    negative: `${base}:neg`,
    app: `${base}:app`,
    keys: `${base}:keys`,
    pending: `${base}:pending`,
    inFlight: `${base}:inflight`,
    rejected: `${base}:rejected`,
    refusals: `${base}:refusals`,
    alerts: `${base}:alerts`,
    since: `${base}:since`,
    lease: `${base}:lease`,
    batch: `${base}:batch`,
    firstCall: `${base}:first`,
    tokensNotBefore: `${base}:nbf`,
    seen: `${base}:seen`,
  };
}

/** The mark of one usage alert (`<period>:<metric>:<period start>:<level>`, a field of the alerts hash). */
export function alertMarkKey(credentialId: string, alert: string): string {
  return `${KEY_PREFIX}:{${credentialId}}:alert:${alert}`;
}

/** The application a user_key budget belongs to, as the admin API named it (platform/application-directory.ts). */
export function applicationNameKey(credentialId: string): string {
  return `${KEY_PREFIX}:{${credentialId}}:appname`;
}

/** The service's mapping rules read from the platform, and the lease of the one instance refreshing them. */
export function mappingRulesKeys(serviceId: string): { readonly rules: string; readonly refresh: string } {
  return { rules: `${KEY_PREFIX}:${serviceId}:rules`, refresh: `${KEY_PREFIX}:${serviceId}:rules:refresh` };
}

/** SCAN pattern of the keys that mark unreported usage (braces are literal in Redis glob patterns). */
export const SINCE_KEY_PATTERN = `${KEY_PREFIX}:{*}:since`;

/** SCAN pattern of the keys that hold usage the platform refused to take. */
export const REJECTED_KEY_PATTERN = `${KEY_PREFIX}:{*}:rejected`;

const SINCE_KEY = new RegExp(`^${KEY_PREFIX}:\\{([0-9a-f]{64})\\}:since$`);
const ANY_KEY = new RegExp(`^${KEY_PREFIX}:\\{([0-9a-f]{64})\\}:`);

/** The credential id of a `since` key; undefined for any other key. */
export function credentialIdOfSinceKey(key: string): string | undefined {
  return SINCE_KEY.exec(key)?.[1];
}

/** The credential id of any key of the layout; undefined for a key of another layout. */
export function credentialIdOfKey(key: string): string | undefined {
  return ANY_KEY.exec(key)?.[1];
}
