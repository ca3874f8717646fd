/**
 * Redis key layout. Every key of one credential carries the hash tag `{<credentialId>}`, so each Lua
 * script touches a single slot and runs unchanged on a sharded (cluster-mode) Redis.
 *
 *   am:{id}:neg       string, TTL negativeCacheTtlSeconds: `invalid:<code>` (401) or `denied:<reason>`
 *                     (Deny) — a short-lived answer that keeps a flood of bad keys off the platform and
 *                     makes a denied credential ask the platform again once it expires
 *   am:{id}:app       hash, the platform's last answer for the credential:
 *                       state            `active` | `denied:<reason>` | `invalid:<code>`
 *                       plan             plan name
 *                       cred             the credential, sealed (AES-256-GCM, see seal.ts)
 *                       synced           when the answer was stored (epoch ms)
 *                       limit:<period>:<metric>  `<period end ms | -1> <max> <current>`
 *                       parent:<metric>  the metric's parent (the platform's hierarchy)
 *   am:{id}:ep        hash, endpoint (`METHOD /resource/{template}`) -> JSON usage of its first call;
 *                     a missing field is a cache miss for that endpoint
 *   am:{id}:pending   hash, metric -> usage allowed from the cache and not yet reported
 *   am:{id}:inflight  hash, metric -> usage taken by a reporter and not yet accepted by the platform
 *   am:{id}:since     string, epoch ms of the oldest unreported usage (pending or in flight); the sweep
 *                     finds credentials by scanning for these keys
 *   am:{id}:window    string, end of the report window (epoch ms), PX window: set means an SNS
 *                     message for this credential is on its way
 *   am:{id}:lease     string, PX: the token of the reporter currently flushing the credential
 */

export const KEY_PREFIX = 'am';

export interface CredentialKeys {
  readonly negative: string;
  readonly app: string;
  readonly endpoints: string;
  readonly pending: string;
  readonly inFlight: string;
  readonly since: string;
  readonly window: string;
  readonly lease: string;
}

export function credentialKeys(credentialId: string): CredentialKeys {
  const base = `${KEY_PREFIX}:{${credentialId}}`;
  return {
    negative: `${base}:neg`,
    app: `${base}:app`,
    endpoints: `${base}:ep`,
    pending: `${base}:pending`,
    inFlight: `${base}:inflight`,
    since: `${base}:since`,
    window: `${base}:window`,
    lease: `${base}:lease`,
  };
}

/** SCAN pattern of the keys that mark unreported usage (braces are literal in Redis glob patterns). */
export const SINCE_KEY_PATTERN = `${KEY_PREFIX}:{*}:since`;

const SINCE_KEY = new RegExp(`^${KEY_PREFIX}:\\{([0-9a-f]{64})\\}:since$`);

/** The credential id of a `since` key; undefined for any other key. */
export function credentialIdOfSinceKey(key: string): string | undefined {
  return SINCE_KEY.exec(key)?.[1];
}
