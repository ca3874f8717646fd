/**
 * The API Gateway Lambda REQUEST authorizer, for every gateway format (adapters/): the event's adapter
 * turns it into the core's request and the core's decision into that gateway's answer.
 */
import type {
  APIGatewayAuthorizerResult,
  APIGatewayRequestAuthorizerEvent,
  APIGatewayRequestAuthorizerEventV2,
} from 'aws-lambda';
import { type AuthorizerAnswer, type AuthorizerEvent, formatOf } from '../../adapters/gateway';
import type { SimpleAnswer } from '../../adapters/gateway/http-v2';
import { createLogger, createMetrics } from '../../adapters/powertools/observability';
import type { SnsClientSource } from '../../adapters/sns/client';
import { createAccessAuthorizerOnSns } from '../../adapters/sns/report-publisher';
import type { RedisConnection } from '../../core/budget/redis-client';
import type { AccessDecision } from '../../core/decision/decision';
import { SERVICE_NAME } from '../../core/observability/metric-names';
import { errorMessage, type LogPort, METRIC, type MetricsPort } from '../../core/observability/observability';
import type { PlatformPort } from '../../core/platform/types';
import type { AccessConfig } from '../../core/settings/config';

export const AUTHORIZER_SERVICE_NAME = SERVICE_NAME.authorizer;

export interface AuthorizerDeps {
  readonly config: AccessConfig;
  /** Undefined: no cache, every call asks the platform (authrep). */
  readonly redis?: RedisConnection;
  /** The report topic's client; the authorizer's own is built on its first publish. */
  readonly sns: SnsClientSource;
  readonly platform: PlatformPort;
  /** Epoch ms; default Date.now. */
  readonly now?: () => number;
  readonly logger?: LogPort;
  readonly metrics?: MetricsPort;
}

/** The authorizer, typed per format: a REST or payload 1.0 event gets a policy, a 2.0 event a simple answer. */
export interface AuthorizerHandler {
  (event: APIGatewayRequestAuthorizerEvent): Promise<APIGatewayAuthorizerResult>;
  (event: APIGatewayRequestAuthorizerEventV2): Promise<SimpleAnswer>;
  (event: AuthorizerEvent): Promise<AuthorizerAnswer>;
}

export function createAuthorizerHandler(deps: AuthorizerDeps): AuthorizerHandler {
  const logger = deps.logger ?? createLogger(AUTHORIZER_SERVICE_NAME);
  const metrics = deps.metrics ?? createMetrics(AUTHORIZER_SERVICE_NAME);
  const now = deps.now ?? Date.now;
  const access = createAccessAuthorizerOnSns({ ...deps, logger, metrics });
  const handle = async (event: AuthorizerEvent): Promise<AuthorizerAnswer> => {
    // An event no format reads throws: the gateway answers 5xx, for the authorizer is misattached.
    const format = formatOf(event);
    let decision: AccessDecision;
    try {
      decision = await access.decide(format.requestOf(event));
    } catch (error) {
      metrics.addMetric(METRIC.authorizerError, 'Count', 1);
      logger.error('authorizer failed', { error: errorMessage(error), format: format.name });
      return format.failureOf(event);
    } finally {
      metrics.publishStoredMetrics();
    }
    return format.answerOf(event, decision, now());
  };
  return handle as AuthorizerHandler;
}
