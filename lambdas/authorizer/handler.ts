/**
 * The API Gateway REQUEST authorizer: the core's decision turned into API Gateway's contract.
 * 401 is `throw new Error('Unauthorized')`; every other answer is a policy for exactly the called
 * method, with flat primitives in the context (the gateway responses read `reason` from it).
 */
import type { SNSClient } from '@aws-sdk/client-sns';
import type {
  APIGatewayAuthorizerResult,
  APIGatewayAuthorizerResultContext,
  APIGatewayRequestAuthorizerEvent,
} from 'aws-lambda';
import { type AccessDecision, createAccessAuthorizerOnSns } from '../core/access';
import type { AccessConfig } from '../core/config';
import { SERVICE_NAME } from '../core/metric-names';
import {
  createLogger,
  createMetrics,
  errorMessage,
  type LogPort,
  METRIC,
  type MetricsPort,
} from '../core/observability';
import type { PlatformPort } from '../core/platform/types';
import { type LimitValues, RATE_LIMIT_CONTEXT, rateLimitFields } from '../core/rate-limit-fields';
import type { RedisConnection } from '../core/redis-client';

export const AUTHORIZER_SERVICE_NAME = SERVICE_NAME.authorizer;

/** Reason in the context of a Deny when the authorizer itself failed (a bug or a start-up failure). */
export const AUTHORIZER_ERROR = 'authorizer_error';

export interface AuthorizerDeps {
  readonly config: AccessConfig;
  /** Undefined: no cache, every call asks the platform (authrep). */
  readonly redis?: RedisConnection;
  readonly sns: SNSClient;
  readonly platform: PlatformPort;
  /** Epoch ms; default Date.now. */
  readonly now?: () => number;
  readonly logger?: LogPort;
  readonly metrics?: MetricsPort;
}

export type AuthorizerHandler = (
  event: APIGatewayRequestAuthorizerEvent,
) => Promise<APIGatewayAuthorizerResult>;

type PolicyDecision = Extract<AccessDecision, { effect: 'allow' | 'deny' }>;

/**
 * The limit of a decision as flat context values a backend can send as RateLimit headers: `limit` (the
 * max), `remaining` (0 on a refusal), `reset` (whole seconds until the period ends; absent for
 * eternity), `limitMetric` and `limitPeriod`.
 */
export function limitContext(limit: PolicyDecision['limit'], now: number): APIGatewayAuthorizerResultContext {
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
 * The two RateLimit fields of a decision's limit and throttle values, formatted, for a gateway that copies
 * them into the response (`rateLimitPolicy`, `rateLimit`): an HTTP API's response mapping computes nothing.
 */
export function rateLimitContext(values: LimitValues): APIGatewayAuthorizerResultContext {
  const fields = rateLimitFields(values);
  if (fields === undefined) return {};
  return {
    [RATE_LIMIT_CONTEXT['RateLimit-Policy']]: fields['RateLimit-Policy'],
    [RATE_LIMIT_CONTEXT.RateLimit]: fields.RateLimit,
  };
}

/**
 * A decision's throttle as flat context values. A refusal (`rate_limited`) fills the limit's own values,
 * so the 403 body tells it: `limit` the burst, `remaining` 0, `reset` whole seconds until the call would
 * pass (rounded up), `limitPeriod` `second`, `limitMetric` the metric it counts (absent: every call). An
 * allowed call gets a policy of its own for its RateLimit headers (`"burst";q=<burst>;w=1`):
 * `throttleLimit`, `throttleRemaining` and `throttleReset` (whole seconds until the whole burst is back).
 */
export function throttleContext(throttle: PolicyDecision['throttle']): APIGatewayAuthorizerResultContext {
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

/** The IAM policy for one decision: Allow or Deny execute-api:Invoke on exactly `methodArn`. */
export function policyOf(
  methodArn: string,
  decision: PolicyDecision,
  now: number = Date.now(),
): APIGatewayAuthorizerResult {
  const limits = { ...limitContext(decision.limit, now), ...throttleContext(decision.throttle) };
  const context: APIGatewayAuthorizerResultContext = {
    credentialId: decision.credentialId,
    plan: decision.plan,
    metrics: decision.metrics,
    ...(decision.applicationId !== undefined && { applicationId: decision.applicationId }),
    ...(decision.reason !== undefined && { reason: decision.reason }),
    ...limits,
    ...rateLimitContext(limits),
  };
  return {
    principalId: decision.credentialId,
    policyDocument: {
      Version: '2012-10-17',
      Statement: [
        {
          Action: 'execute-api:Invoke',
          Effect: decision.effect === 'allow' ? 'Allow' : 'Deny',
          Resource: methodArn,
        },
      ],
    },
    context,
  };
}

/** A refusal that is not a 5xx, for when the authorizer cannot decide at all. */
export function authorizerErrorPolicy(methodArn: string): APIGatewayAuthorizerResult {
  return {
    principalId: 'unknown',
    policyDocument: {
      Version: '2012-10-17',
      Statement: [{ Action: 'execute-api:Invoke', Effect: 'Deny', Resource: methodArn }],
    },
    context: { reason: AUTHORIZER_ERROR },
  };
}

export function createAuthorizerHandler(deps: AuthorizerDeps): AuthorizerHandler {
  const logger = deps.logger ?? createLogger(AUTHORIZER_SERVICE_NAME);
  const metrics = deps.metrics ?? createMetrics(AUTHORIZER_SERVICE_NAME);
  const now = deps.now ?? Date.now;
  const access = createAccessAuthorizerOnSns({ ...deps, logger, metrics });
  return async (event) => {
    let decision: AccessDecision;
    try {
      decision = await access.decide(event);
    } catch (error) {
      metrics.addMetric(METRIC.authorizerError, 'Count', 1);
      logger.error('authorizer failed', { error: errorMessage(error) });
      return authorizerErrorPolicy(event.methodArn);
    } finally {
      metrics.publishStoredMetrics();
    }
    if (decision.effect === 'unauthorized') throw new Error('Unauthorized');
    return policyOf(event.methodArn, decision, now());
  };
}
