/**
 * What API Gateway's authorizer step adds to a call, read from the stage's access log where it runs
 * (docs/operations.md, "The gateway's own overhead"). The variables each API type logs are the API Gateway
 * developer guide's: "Variables for access logging for API Gateway" (REST: `$context.authorizer.latency`,
 * `$context.authorizer.integrationLatency`, `$context.authorizer.status`) and "Customize HTTP API access
 * logs" (HTTP: no authorizer latency; `$context.responseLatency` and `$context.integrationLatency`).
 */
import { LogQueryVisualizationType, LogQueryWidget } from 'aws-cdk-lib/aws-cloudwatch';
import type { ApiType } from '../demo-http-api';

/**
 * REST: per route, the authorizer step as API Gateway times it (`authorizerLatency`) and API Gateway's own
 * part of it, without the Lambda invocation (`authorizerLatency - authorizerIntegrationLatency`). Calls
 * the authorizer did not run for (an unprotected method) log `-` and are left out.
 */
export const REST_AUTHORIZER_OVERHEAD_QUERY = [
  'filter ispresent(authorizerLatency) and authorizerLatency != "-"',
  'fields authorizerLatency - authorizerIntegrationLatency as gatewayMs',
  'stats count(*) as calls, pct(authorizerLatency, 50) as authorizerP50, pct(authorizerLatency, 90) as authorizerP90, ' +
    'pct(authorizerLatency, 99) as authorizerP99, pct(gatewayMs, 50) as gatewayP50, pct(gatewayMs, 90) as gatewayP90, ' +
    'pct(gatewayMs, 99) as gatewayP99 by httpMethod, resourcePath',
].join('\n| ');

/**
 * HTTP API: its log has no authorizer latency, so per route the figure is everything API Gateway adds to
 * the backend's time, the authorizer included (`responseLatency - integrationLatency`), of the calls that
 * reached the backend (a refused call has no integration latency: its whole `responseLatency` is overhead).
 */
export const HTTP_AUTHORIZER_OVERHEAD_QUERY = [
  'filter ispresent(integrationLatency) and integrationLatency != "-"',
  'fields responseLatency - integrationLatency as overheadMs',
  'stats count(*) as calls, pct(overheadMs, 50) as overheadP50, pct(overheadMs, 90) as overheadP90, ' +
    'pct(overheadMs, 99) as overheadP99 by routeKey',
].join('\n| ');

export const AUTHORIZER_OVERHEAD_QUERIES: Readonly<Record<ApiType, string>> = {
  rest: REST_AUTHORIZER_OVERHEAD_QUERY,
  http: HTTP_AUTHORIZER_OVERHEAD_QUERY,
};

const TITLES: Readonly<Record<ApiType, string>> = {
  rest: "Authorizer overhead per route, ms (API Gateway's authorizer latency, and its own part without the Lambda)",
  http: 'Gateway overhead per route, ms (response latency less the integration latency, authorizer included)',
};

/** The dashboard table of the queries above, over the stage's access log group. */
export function gatewayOverheadWidget(apiType: ApiType, accessLogGroupName: string): LogQueryWidget {
  return new LogQueryWidget({
    title: TITLES[apiType],
    logGroupNames: [accessLogGroupName],
    queryString: AUTHORIZER_OVERHEAD_QUERIES[apiType],
    view: LogQueryVisualizationType.TABLE,
    width: 24,
    height: 6,
  });
}
