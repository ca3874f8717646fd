/**
 * What the authorizer tells the gateway about each call: the keys of its context. Gateway responses
 * (`$context.authorizer.<key>`), access logs and backends read them, so the Lambdas and the CDK code share
 * this one list. Values are flat strings and numbers, as a REST API's policy context requires.
 */

export const AUTHORIZER_CONTEXT_KEYS = [
  /** The budget's credential id (never the credential). */
  'credentialId',
  /** The plan's name; empty when no platform answer told it. */
  'plan',
  /** Metric names the call maps to, comma-joined. */
  'metrics',
  /** The application id in app_id mode. */
  'applicationId',
  /** Why a call was refused (a DenyReason, or one of the reasons below). */
  'reason',
  /** The limit's maximum. */
  'limit',
  /** What the limit leaves (0 on a refusal). */
  'remaining',
  /** Whole seconds until the limit's period ends; absent for eternity. */
  'reset',
  'limitMetric',
  'limitPeriod',
  /** The plan's throttle on an allowed call (docs/throttling.md): its burst. */
  'throttleLimit',
  /** The calls the throttle admits now. */
  'throttleRemaining',
  /** Whole seconds until the whole burst is back. */
  'throttleReset',
  /** The RateLimit-Policy field, formatted (core/decision/rate-limit-fields.ts). */
  'rateLimitPolicy',
  /** The RateLimit field, formatted. */
  'rateLimit',
  /**
   * Whole seconds until a refused call would pass (core/decision/retry-after.ts), for the `Retry-After`
   * header; absent on an allowed call and on a refusal that waiting does not mend.
   */
  'retryAfter',
] as const;

export type AuthorizerContextKey = (typeof AUTHORIZER_CONTEXT_KEYS)[number];

export type AuthorizerContext = { readonly [K in AuthorizerContextKey]?: string | number };

/** Reason of a refusal when the authorizer itself failed (a bug or a start-up failure). */
export const AUTHORIZER_ERROR = 'authorizer_error';

/**
 * Reason of a refusal of a missing, malformed or unknown credential, on a gateway format that has no
 * 401 to answer it with (HTTP APIs: docs/http-api.md).
 */
export const INVALID_CREDENTIAL = 'invalid_credential';

/** The context keys that carry the two fields, formatted. */
export const RATE_LIMIT_CONTEXT = {
  'RateLimit-Policy': 'rateLimitPolicy',
  RateLimit: 'rateLimit',
} as const;
