/**
 * The request of a REST-shaped REQUEST authorizer event: a REST API's, and an HTTP API's with payload
 * format 1.0, which keeps the REST shape (`httpMethod`, `resource`, `path`, and the query and headers as
 * single and multi-value maps; the multi-value maps may be absent).
 */
import type { APIGatewayRequestAuthorizerEvent } from 'aws-lambda';
import type { GatewayRequest, ParameterValues } from '../../core/decision/request';
import { apiPathOf } from './stage';

type RestShapedEvent = Pick<
  APIGatewayRequestAuthorizerEvent,
  | 'httpMethod'
  | 'resource'
  | 'path'
  | 'headers'
  | 'multiValueHeaders'
  | 'queryStringParameters'
  | 'multiValueQueryStringParameters'
> & {
  readonly pathParameters?: APIGatewayRequestAuthorizerEvent['pathParameters'];
  readonly requestContext?: {
    readonly stage?: string;
    readonly domainName?: string;
    readonly identity?: { readonly sourceIp?: string | null } | null;
  } | null;
};

/**
 * Every value of each name of a single and a multi-value map. API Gateway fills both with the same
 * values; a single value the multi-value map lacks is one more value, so a request that says two things
 * is read as saying both.
 */
export function mergedValues(
  single: Readonly<Record<string, string | undefined>> | null | undefined,
  multi: Readonly<Record<string, readonly string[] | undefined>> | null | undefined,
): ParameterValues {
  const merged = new Map<string, readonly string[]>();
  for (const [name, values] of Object.entries(multi ?? {})) {
    if (values !== undefined && values.length > 0) merged.set(name, values);
  }
  for (const [name, value] of Object.entries(single ?? {})) {
    if (value === undefined) continue;
    const values = merged.get(name);
    if (values === undefined) merged.set(name, [value]);
    else if (!values.includes(value)) merged.set(name, [...values, value]);
  }
  return Object.fromEntries(merged);
}

/**
 * The path the consumer asked for, as APIcast sees it: without the query string, the stage (an HTTP
 * API's 1.0 `path` carries a named stage's) or a custom domain's base path (REST's `path` carries it).
 */
export function requestPathOf(event: RestShapedEvent): string {
  return apiPathOf({
    path: event.path,
    template: event.resource,
    stage: event.requestContext?.stage,
    domainName: event.requestContext?.domainName,
    pathParameters: event.pathParameters,
  });
}

/** The cache's endpoint: method and resource template (`GET /v1/words/{word}.json`), never the raw path. */
export function endpointOf(event: Pick<RestShapedEvent, 'httpMethod' | 'resource'>): string {
  return `${event.httpMethod.toUpperCase()} ${event.resource}`;
}

export function restRequestOf(event: RestShapedEvent): GatewayRequest {
  return {
    method: event.httpMethod,
    path: requestPathOf(event),
    query: mergedValues(event.queryStringParameters, event.multiValueQueryStringParameters),
    headers: mergedValues(event.headers, event.multiValueHeaders),
    ...sourceAddressOf(event.requestContext?.identity?.sourceIp),
  };
}

/** The source address field of a request, absent when the event has none. */
export function sourceAddressOf(sourceIp: string | null | undefined): { sourceAddress?: string } {
  return sourceIp ? { sourceAddress: sourceIp } : {};
}
