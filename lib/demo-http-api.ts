/**
 * The demo on an API Gateway HTTP API (`-c apiType=http`): the echo backend's routes on the `$default` stage,
 * with stage throttling and JSON access logs that carry the authorizer's reason, metric and reset.
 */
import { type CfnStage, HttpApi, HttpMethod, PayloadFormatVersion } from 'aws-cdk-lib/aws-apigatewayv2';
import { HttpLambdaIntegration } from 'aws-cdk-lib/aws-apigatewayv2-integrations';
import type { IFunction } from 'aws-cdk-lib/aws-lambda';
import { LogGroup, type RetentionDays } from 'aws-cdk-lib/aws-logs';
import type { Construct } from 'constructs';
import { ConfigError } from '../core/settings/config';

/** What the stack's props may say about an API type, by type: the REST and HTTP demos. */
export const API_TYPES = ['rest', 'http'] as const;
export type ApiType = (typeof API_TYPES)[number];

/**
 * The access log line of the HTTP API (the variables of "Customizing HTTP API access logs" in the API Gateway
 * developer guide): no headers and no query string, so no credential is ever logged. The authorizer's
 * `reason`, `limitMetric` and `reset` come from its simple response's context.
 */
export const HTTP_ACCESS_LOG_FORMAT = JSON.stringify({
  requestId: '$context.requestId',
  requestTime: '$context.requestTime',
  sourceIp: '$context.identity.sourceIp',
  httpMethod: '$context.httpMethod',
  routeKey: '$context.routeKey',
  path: '$context.path',
  status: '$context.status',
  responseLength: '$context.responseLength',
  responseLatency: '$context.responseLatency',
  integrationLatency: '$context.integrationLatency',
  authorizerError: '$context.authorizer.error',
  denialReason: '$context.authorizer.reason',
  limitMetric: '$context.authorizer.limitMetric',
  limitReset: '$context.authorizer.reset',
  retryAfter: '$context.authorizer.retryAfter',
  error: '$context.error.message',
});

export interface DemoHttpApiProps {
  /** The echo backend. */
  readonly echo: IFunction;
  readonly logRetention: RetentionDays;
  readonly throttlingRateLimit: number;
  readonly throttlingBurstLimit: number;
  /** The REST demo's stage name; an HTTP API demo is served on its `$default` stage only. */
  readonly stageName?: string;
}

/**
 * The echo API as an HttpApi: `GET /v1/words/{word}`, `ANY /` and `ANY /{proxy+}`, each a Lambda proxy
 * integration of payload 1.0 (the event REST's proxy integration sends, which the echo handler reads).
 */
export function demoHttpApi(scope: Construct, props: DemoHttpApiProps): HttpApi {
  if (props.stageName !== undefined) {
    throw new ConfigError(
      'stageName',
      `names the REST API's stage; the HTTP API demo is served on its $default stage, at the root of its endpoint (got ${props.stageName})`,
    );
  }
  const api = new HttpApi(scope, 'HttpApi', {
    description: 'Demo echo API protected by the API access authorizer',
  });
  const stage = api.defaultStage?.node.defaultChild as CfnStage;
  stage.accessLogSettings = {
    destinationArn: new LogGroup(scope, 'ApiAccessLogs', { retention: props.logRetention }).logGroupArn,
    format: HTTP_ACCESS_LOG_FORMAT,
  };
  stage.defaultRouteSettings = {
    throttlingRateLimit: props.throttlingRateLimit,
    throttlingBurstLimit: props.throttlingBurstLimit,
  };
  const integration = new HttpLambdaIntegration('Echo', props.echo, {
    payloadFormatVersion: PayloadFormatVersion.VERSION_1_0,
  });
  api.addRoutes({ path: '/', methods: [HttpMethod.ANY], integration });
  api.addRoutes({ path: '/v1/words/{word}', methods: [HttpMethod.GET], integration });
  api.addRoutes({ path: '/{proxy+}', methods: [HttpMethod.ANY], integration });
  return api;
}
