/**
 * Redis key layout. A budget is what limits count against: the application (its user key in user_key
 * mode, its app id in app_id mode, whatever key or token it presents). Every key of one budget carries
 * the hash tag `{<credentialId>}`, so each Lua script touches a single slot and runs unchanged on a
 * sharded (cluster-mode) Redis. Every key starts with `am:<service>:`, the service id (serviceSegment):
 * several services sharing one Redis each find, scan and report their own budgets only. Below, `am:{id}`
 * stands for `am:<service>:{<credentialId>}`.
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
 *                                        budget's GCRA throttles (scripts/throttle-script.ts)
 *                       bucket           the period of the pending buckets (`minute` | `hour` | `day`)
 *                       need:<metric>    what a call of the metric reads: its ancestors, nearest first,
 *                                        then the limit fields of it and them (snapshot.ts)
 *                       count:<period>:<metric>  `<period end> <max> <count>`: the limit's current value with
 *                                        the usage pending and in flight in its period, kept by every
 *                                        call that records usage, so a hit reads no usage hash
 *                       counted          the last call the counts hold for: the `t:` of its bucket in
 *                                        `pending`, or with nothing pending in `inflight`, '' for none. A
 *                                        version before the counts moves that `t:` when it records a call;
 *                                        the scripts that add or take usage without the counts (admit,
 *                                        give-back, the legacy layout's adoption) delete `counted`; either
 *                                        way the next call works every count out again
 *                     The hot path reads by name what the call needs (one HMGET while the instance's
 *                     hints of the needs hold, scripts/check-script.ts); the other scripts read it whole. A new
 *                     answer keeps `window`, the throttles and the newer of each limit's current value;
 *                     its counts are written anew when no usage waits, else by the next call.
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
 *                     state `new` | `posting` | `sent` (scripts/report-batch-scripts.ts); it goes with the batch
 *   am:{id}:first     string, PX: the token of the one call asking the platform for a budget it has no
 *                     snapshot of; concurrent first calls wait for its answer instead of asking too
 *   am:{id}:nbf       string, EX the longest a token lives: epoch ms before which the application's
 *                     access tokens were issued are refused (its key deleted, it suspended or deleted:
 *                     credentials/token-not-before.ts)
 *   am:{id}:seen      set, EX 30 days from the last answer: the key ids ('' for the budget's own
 *                     credential) the platform said exist; it outlives the snapshot, so the first-call
 *                     gate never counts a known credential whose snapshot expired. The store script
 *                     writes it, the check script's miss reads it (scripts/store-script.ts, SEEN_MARK_TTL_SECONDS)
 *
 * Keys of the service, not of a budget:
 *   am:<service>:{first-calls:<epoch second>}[:<hash of the source address>]
 *                                 the first-call gate's counters (decision/first-call-gate.ts), each service
 *                                 with its own bound; a second's share one hash tag, so one script takes
 *                                 an address's lease and the second's together
 *   am:<service>:rules            string, no TTL (mappingRulesSource platform, decision/platform-mapping-rules.ts):
 *                                 the mapping rules last read from the platform, JSON {readAt, version, rules};
 *                                 the last good ones outlive a platform outage
 *   am:<service>:rules:refresh    string, PX: the token of the one instance reading the platform's rules;
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

/** Characters a service id keeps as they are in a key; letters, digits, `_`, `.`, `-` (3scale's ids are digits). */
const PLAIN_SERVICE_CHARACTER = /[A-Za-z0-9_.-]/;

/**
 * The service id as it stands in a key: every other character percent-encoded (UTF-8), `%` included, so
 * no two services share a segment, and the segment never holds `{`, `}` (a hash tag), `:` or a glob
 * character of SCAN's MATCH.
 */
export function serviceSegment(serviceId: string): string {
  if (serviceId === '') throw new Error('a service id is required to name Redis keys');
  let segment = '';
  for (const character of serviceId) {
    segment += PLAIN_SERVICE_CHARACTER.test(character)
      ? character
      : [...Buffer.from(character, 'utf8')]
          .map((byte) => `%${byte.toString(16).toUpperCase().padStart(2, '0')}`)
          .join('');
  }
  return segment;
}

/** Every key name of one layout: its budgets, its SCAN patterns and its first-call counters. */
export interface LayoutKeys {
  /** The keys of one budget (credentialIdOf). */
  budget(credentialId: string): CredentialKeys;
  /** The mark of one usage alert (`<period>:<metric>:<period start>:<level>`, a field of the alerts hash). */
  alertMark(credentialId: string, alert: string): string;
  /** The application a user_key budget belongs to, as the admin API named it (platform/application-directory.ts). */
  applicationName(credentialId: string): string;
  /**
   * SCAN pattern of one kind of the service's budget keys (braces are literal in Redis glob patterns):
   * `since` finds the budgets with unreported usage, `rejected` those with usage the platform refused.
   */
  pattern(kind: keyof CredentialKeys): string;
  /** The credential id of a `since` key of the service; undefined for any other key. */
  credentialIdOfSinceKey(key: string): string | undefined;
  /** The credential id of any budget key of the service; undefined for another service's key or layout. */
  credentialIdOfKey(key: string): string | undefined;
  /** The first-call gate's counter of one second. */
  firstCallCounter(second: number): string;
  /** The first-call gate's counter of one source address (its hash) in one second. */
  addressCounter(second: number, addressHash: string): string;
}

/** The key names of one service. */
export interface ServiceKeys extends LayoutKeys {
  readonly serviceId: string;
}

export function serviceKeys(serviceId: string): ServiceKeys {
  return { serviceId, ...keysUnder(`${KEY_PREFIX}:${serviceSegment(serviceId)}`) };
}

/**
 * The layout before keys carried the service (`am:{<credentialId>}:<kind>`, 0.1.x), when one Redis served
 * one instance: the sweep adopts what an earlier version left there (legacy-layout.ts).
 */
export const LEGACY_KEYS: LayoutKeys = keysUnder(KEY_PREFIX);

function keysUnder(prefix: string): LayoutKeys {
  const budgetBase = (credentialId: string) => `${prefix}:{${credentialId}}`;
  const budget = (credentialId: string): CredentialKeys => {
    const base = budgetBase(credentialId);
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
  };
  const patterns = budget('*');
  const literalPrefix = prefix.replace(/[.]/g, '\\.');
  const sinceKey = new RegExp(`^${literalPrefix}:\\{([0-9a-f]{64})\\}:since$`);
  const anyKey = new RegExp(`^${literalPrefix}:\\{([0-9a-f]{64})\\}:`);
  return {
    budget,
    alertMark: (credentialId, alert) => `${budgetBase(credentialId)}:alert:${alert}`,
    applicationName: (credentialId) => `${budgetBase(credentialId)}:appname`,
    pattern: (kind) => patterns[kind],
    credentialIdOfSinceKey: (key) => sinceKey.exec(key)?.[1],
    credentialIdOfKey: (key) => anyKey.exec(key)?.[1],
    firstCallCounter: (second) => `${prefix}:{first-calls:${second}}`,
    addressCounter: (second, addressHash) => `${prefix}:{first-calls:${second}}:${addressHash}`,
  };
}

/** The keys of one budget of a service. */
export function credentialKeys(serviceId: string, credentialId: string): CredentialKeys {
  return serviceKeys(serviceId).budget(credentialId);
}

/** The service's mapping rules read from the platform, and the lease of the one instance refreshing them. */
export function mappingRulesKeys(serviceId: string): { readonly rules: string; readonly refresh: string } {
  const prefix = `${KEY_PREFIX}:${serviceSegment(serviceId)}`;
  return { rules: `${prefix}:rules`, refresh: `${prefix}:rules:refresh` };
}
