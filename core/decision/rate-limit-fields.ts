/**
 * The IETF RateLimit fields (draft-ietf-httpapi-ratelimit-headers-11) from the limit values of a decision: a
 * `default` policy, the call's most constrained limit, and a `burst` policy, its plan's throttle
 * (docs/throttling.md). The authorizer puts them into its context whole,
 * so that an HTTP API's response parameter mapping, which copies a context value and computes nothing, can
 * send them for any backend (docs/http-api.md).
 */

import type { RATE_LIMIT_CONTEXT } from '../../contract/authorizer-context';
import type { LimitInfo, ThrottleFeedback, ThrottleRefusal } from '../budget/cache-types';

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

/** What a decision says of its limits, as flat values: the authorizer's context, the plugin's headers. */
export interface DecisionLimitValues {
  readonly limit?: number;
  readonly remaining?: number;
  readonly reset?: number;
  readonly limitMetric?: string;
  readonly limitPeriod?: string;
  readonly throttleLimit?: number;
  readonly throttleRemaining?: number;
  readonly throttleReset?: number;
}

/** A decision's limit as flat values (limitValues). */
export interface FlatLimit extends DecisionLimitValues {
  readonly limit: number;
  readonly remaining: number;
  readonly limitMetric: string;
  readonly limitPeriod: string;
}

/**
 * The limit of a decision as flat values a backend can send as RateLimit headers: `limit` (the max),
 * `remaining` (0 on a refusal), `reset` (whole seconds until the period ends; absent for eternity),
 * `limitMetric` and `limitPeriod`.
 */
export function limitValues(limit: LimitInfo & { readonly remaining?: number }, now: number): FlatLimit {
  const { max, metric, period, resetAt } = limit;
  const remaining = Math.max(limit.remaining ?? 0, 0);
  return resetAt === undefined
    ? { limit: max, remaining, limitMetric: metric, limitPeriod: period }
    : { limit: max, remaining, reset: secondsUntil(resetAt, now), limitMetric: metric, limitPeriod: period };
}

/** Whole seconds from `now` until `at` (epoch ms), rounded up; 0 once it is past. */
function secondsUntil(at: number, now: number): number {
  return Math.max(Math.ceil((at - now) / 1000), 0);
}

/**
 * A decision's throttle as flat values. A refusal (`rate_limited`) fills the limit's own values, so the
 * refusal tells it: `limit` the burst, `remaining` 0, `reset` whole seconds until the call would pass
 * (rounded up), `limitPeriod` `second`, `limitMetric` the metric it counts (absent: every call). An
 * allowed call gets a policy of its own for its RateLimit headers (`"burst";q=<burst>;w=1`):
 * `throttleLimit`, `throttleRemaining` and `throttleReset` (whole seconds until the whole burst is back).
 */
export function throttleValues(
  throttle: ThrottleFeedback | ThrottleRefusal | undefined,
): DecisionLimitValues {
  if (throttle === undefined) return {};
  const metric = throttle.metric === undefined ? {} : { limitMetric: throttle.metric };
  if ('retryInMs' in throttle) {
    return {
      limit: throttle.burst,
      remaining: 0,
      reset: Math.ceil(throttle.retryInMs / 1000),
      ...metric,
      limitPeriod: 'second',
    };
  }
  return {
    throttleLimit: throttle.burst,
    throttleRemaining: throttle.remaining,
    throttleReset: Math.ceil(throttle.fullInMs / 1000),
  };
}

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
  const byDefault = defaultPolicy(values);
  const burst = burstPolicy(values);
  if (byDefault === undefined || burst === undefined) {
    const only = byDefault ?? burst;
    return only && { 'RateLimit-Policy': only.policy, RateLimit: only.state };
  }
  return {
    'RateLimit-Policy': `${byDefault.policy}, ${burst.policy}`,
    RateLimit: `${byDefault.state}, ${burst.state}`,
  };
}

interface Policy {
  readonly policy: string;
  readonly state: string;
}

function defaultPolicy({ limit, remaining, reset, limitPeriod }: LimitValues): Policy | undefined {
  if (limit === undefined || limit === null || remaining === undefined) return undefined;
  // Own keys only: a name every object inherits (`constructor`) is no period.
  const window =
    typeof limitPeriod === 'string' && Object.hasOwn(PERIOD_SECONDS, limitPeriod)
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
