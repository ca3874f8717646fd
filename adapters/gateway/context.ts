/** The authorizer's context of a decision (contract/authorizer-context.ts), the same for every format. */
import {
  AUTHORIZER_ERROR,
  type AuthorizerContext,
  RATE_LIMIT_CONTEXT,
} from '../../contract/authorizer-context';
import {
  type LimitValues,
  limitValues,
  rateLimitFields,
  throttleValues,
} from '../../core/decision/rate-limit-fields';
import type { PolicyDecision } from './format';

/** The limit of a decision as flat context values (core/decision/rate-limit-fields.ts limitValues). */
export function limitContext(limit: PolicyDecision['limit'], now: number): AuthorizerContext {
  return limit === undefined ? {} : { ...limitValues(limit, now) };
}

/** A decision's throttle as flat context values (core/decision/rate-limit-fields.ts throttleValues). */
export function throttleContext(throttle: PolicyDecision['throttle']): AuthorizerContext {
  return { ...throttleValues(throttle) };
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
