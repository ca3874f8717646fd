/** The authorizer's context of a decision (contract/authorizer-context.ts), the same for every format. */
import { AUTHORIZER_ERROR, type AuthorizerContext } from '../../contract/authorizer-context';
import { type LimitValues, RATE_LIMIT_CONTEXT, rateLimitFields } from '../../core/decision/rate-limit-fields';
import type { PolicyDecision } from './format';

/**
 * The limit of a decision as flat context values a backend can send as RateLimit headers: `limit` (the
 * max), `remaining` (0 on a refusal), `reset` (whole seconds until the period ends; absent for
 * eternity), `limitMetric` and `limitPeriod`.
 */
export function limitContext(limit: PolicyDecision['limit'], now: number): AuthorizerContext {
  if (limit === undefined) return {};
  return {
    limit: limit.max,
    remaining: Math.max(limit.remaining ?? 0, 0),
    ...(limit.resetAt !== undefined && { reset: Math.max(Math.ceil((limit.resetAt - now) / 1000), 0) }),
    limitMetric: limit.metric,
    limitPeriod: limit.period,
  };
}

/**
 * A decision's throttle as flat context values. A refusal (`rate_limited`) fills the limit's own values,
 * so the 403 body tells it: `limit` the burst, `remaining` 0, `reset` whole seconds until the call would
 * pass (rounded up), `limitPeriod` `second`, `limitMetric` the metric it counts (absent: every call). An
 * allowed call gets a policy of its own for its RateLimit headers (`"burst";q=<burst>;w=1`):
 * `throttleLimit`, `throttleRemaining` and `throttleReset` (whole seconds until the whole burst is back).
 */
export function throttleContext(throttle: PolicyDecision['throttle']): AuthorizerContext {
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

/**
 * The two RateLimit fields of a decision's limit and throttle values, formatted, for a gateway that copies
 * them into the response (`rateLimitPolicy`, `rateLimit`): an HTTP API's response mapping computes nothing.
 */
export function rateLimitContext(values: LimitValues): AuthorizerContext {
  const fields = rateLimitFields(values);
  if (fields === undefined) return {};
  return {
    [RATE_LIMIT_CONTEXT['RateLimit-Policy']]: fields['RateLimit-Policy'],
    [RATE_LIMIT_CONTEXT.RateLimit]: fields.RateLimit,
  };
}

/**
 * When a refused call will pass: `retryAfter`, and `reset` too when the refusal names no limit of its own
 * (platform_busy, platform_unavailable), so the 403 body says when for every refusal that passes later.
 * A throttle refusal that never passes keeps no `reset` either.
 */
export function retryContext(decision: PolicyDecision, limits: AuthorizerContext): AuthorizerContext {
  const seconds = decision.retryAfterSeconds;
  if (seconds === undefined) {
    const { reset: _never, ...rest } = limits;
    return decision.reason === 'rate_limited' ? rest : limits;
  }
  return { ...limits, retryAfter: seconds, reset: limits.reset ?? seconds };
}

export function decisionContext(decision: PolicyDecision, now: number): AuthorizerContext {
  const limits = retryContext(decision, {
    ...limitContext(decision.limit, now),
    ...throttleContext(decision.throttle),
  });
  return {
    credentialId: decision.credentialId,
    plan: decision.plan,
    metrics: decision.metrics,
    ...(decision.applicationId !== undefined && { applicationId: decision.applicationId }),
    ...(decision.reason !== undefined && { reason: decision.reason }),
    ...limits,
    ...rateLimitContext(limits),
  };
}

/** The context of a refusal when the authorizer could not decide. */
export const FAILURE_CONTEXT: AuthorizerContext = { reason: AUTHORIZER_ERROR };
