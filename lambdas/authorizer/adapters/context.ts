/** The authorizer's context of a decision (contract/authorizer-context.ts), the same for every format. */
import { AUTHORIZER_ERROR, type AuthorizerContext } from '../../../contract/authorizer-context';
import { RATE_LIMIT_CONTEXT, rateLimitFields } from '../../core/rate-limit-fields';
import type { PolicyDecision } from './format';

/**
 * The limit of a decision as flat context values a backend can send as RateLimit headers: `limit` (the
 * max), `remaining` (0 on a refusal), `reset` (whole seconds until the period ends; absent for
 * eternity), `limitMetric` and `limitPeriod`; and the two RateLimit fields formatted, for a gateway that
 * copies them into the response (`rateLimitPolicy`, `rateLimit`).
 */
export function limitContext(limit: PolicyDecision['limit'], now: number): AuthorizerContext {
  if (limit === undefined) return {};
  const values = {
    limit: limit.max,
    remaining: Math.max(limit.remaining ?? 0, 0),
    ...(limit.resetAt !== undefined && { reset: Math.max(Math.ceil((limit.resetAt - now) / 1000), 0) }),
    limitMetric: limit.metric,
    limitPeriod: limit.period,
  };
  const fields = rateLimitFields(values);
  return {
    ...values,
    ...(fields && {
      [RATE_LIMIT_CONTEXT['RateLimit-Policy']]: fields['RateLimit-Policy'],
      [RATE_LIMIT_CONTEXT.RateLimit]: fields.RateLimit,
    }),
  };
}

export function decisionContext(decision: PolicyDecision, now: number): AuthorizerContext {
  return {
    credentialId: decision.credentialId,
    plan: decision.plan,
    metrics: decision.metrics,
    ...(decision.applicationId !== undefined && { applicationId: decision.applicationId }),
    ...(decision.reason !== undefined && { reason: decision.reason }),
    ...limitContext(decision.limit, now),
  };
}

/** The context of a refusal when the authorizer could not decide. */
export const FAILURE_CONTEXT: AuthorizerContext = { reason: AUTHORIZER_ERROR };
