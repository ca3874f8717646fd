/**
 * The IETF RateLimit fields (draft-ietf-httpapi-ratelimit-headers-11) from the limit values of a decision: a
 * `default` policy, the call's most constrained limit, and a `burst` policy, its plan's throttle
 * (docs/throttling.md). The authorizer puts them into its context whole,
 * so that an HTTP API's response parameter mapping, which copies a context value and computes nothing, can
 * send them for any backend (docs/http-api.md).
 */

/** The limit values of the authorizer's context the fields are made of. */
export interface LimitValues {
  readonly limit?: unknown;
  readonly remaining?: unknown;
  /** Whole seconds until the period ends; absent for eternity. */
  readonly reset?: unknown;
  readonly limitPeriod?: unknown;
  /** The plan's throttle: its burst, the calls it admits now, whole seconds until the whole burst is back. */
  readonly throttleLimit?: unknown;
  readonly throttleRemaining?: unknown;
  readonly throttleReset?: unknown;
}

/** The context keys that carry the two fields, formatted. */
export const RATE_LIMIT_CONTEXT = {
  'RateLimit-Policy': 'rateLimitPolicy',
  RateLimit: 'rateLimit',
} as const;

export type RateLimitFields = Record<keyof typeof RATE_LIMIT_CONTEXT, string>;

/** The window of each fixed period in seconds (month and year: their longest). */
const PERIOD_SECONDS = {
  minute: 60,
  hour: 3600,
  day: 86_400,
  week: 604_800,
  month: 2_678_400,
  year: 31_622_400,
} as const;

/** `RateLimit-Policy` and `RateLimit`, or undefined when neither a limit nor a throttle applies to the call. */
export function rateLimitFields(values: LimitValues): RateLimitFields | undefined {
  const policies = [defaultPolicy(values), burstPolicy(values)].filter(
    (policy): policy is Policy => policy !== undefined,
  );
  if (policies.length === 0) return undefined;
  return {
    'RateLimit-Policy': policies.map(({ policy }) => policy).join(', '),
    RateLimit: policies.map(({ state }) => state).join(', '),
  };
}

interface Policy {
  readonly policy: string;
  readonly state: string;
}

function defaultPolicy({ limit, remaining, reset, limitPeriod }: LimitValues): Policy | undefined {
  if (limit === undefined || limit === null || remaining === undefined) return undefined;
  const window =
    typeof limitPeriod === 'string' && limitPeriod in PERIOD_SECONDS
      ? `;w=${PERIOD_SECONDS[limitPeriod as keyof typeof PERIOD_SECONDS]}`
      : '';
  const resetIn = reset === undefined || reset === null ? '' : `;t=${reset}`;
  return { policy: `"default";q=${limit}${window}`, state: `"default";r=${remaining}${resetIn}` };
}

function burstPolicy({ throttleLimit, throttleRemaining, throttleReset }: LimitValues): Policy | undefined {
  if (throttleLimit === undefined || throttleLimit === null || throttleRemaining === undefined) {
    return undefined;
  }
  return {
    policy: `"burst";q=${throttleLimit};w=1`,
    state: `"burst";r=${throttleRemaining};t=${throttleReset}`,
  };
}
