/** The authorizer's context of a decision (contract/authorizer-context.ts), the same for every format. */
import { AUTHORIZER_ERROR, type AuthorizerContext } from '../../contract/authorizer-context';
import {
  type LimitValues,
  limitValues,
  RATE_LIMIT_CONTEXT,
  rateLimitFields,
  throttleValues,
} from '../../core/decision/rate-limit-fields';
import type { PolicyDecision } from './format';

/** The limit of a decision as flat context values (core/decision/rate-limit-fields.ts limitValues). */
export function limitContext(limit: PolicyDecision['limit'], now: number): AuthorizerContext {
  return { ...limitValues(limit, now) };
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

export function decisionContext(decision: PolicyDecision, now: number): AuthorizerContext {
  const limits = { ...limitContext(decision.limit, now), ...throttleContext(decision.throttle) };
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
