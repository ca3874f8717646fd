/**
 * Authorizer events of each gateway format, built after the sample events of aws/aws-lambda-go
 * (events/testdata at 815d21f4176907c97cc6a77465ece6a1d2bbbac4, Apache-2.0):
 * apigw-custom-auth-request-type-request.json (REST), apigw-v2-custom-authorizer-v1-request.json (HTTP API
 * payload 1.0) and apigw-v2-custom-authorizer-v2-request.json (payload 2.0), with the fields API Gateway's
 * developer guide describes ("Control access to HTTP APIs with AWS Lambda authorizers"). The 2.0 sample
 * spells header names with capitals; the guide says they arrive in lower case, so they are lower case here.
 */
import type { APIGatewayRequestAuthorizerEvent, APIGatewayRequestAuthorizerEventV2 } from 'aws-lambda';
import type { HttpApiV1AuthorizerEvent } from '../../../../adapters/gateway/http-v1';

export function restSampleEvent(
  overrides: Partial<APIGatewayRequestAuthorizerEvent> = {},
): APIGatewayRequestAuthorizerEvent {
  return {
    type: 'REQUEST',
    methodArn: 'arn:aws:execute-api:us-east-1:123456789012:s4x3opwd6i/test/GET/request',
    resource: '/request',
    path: '/request',
    httpMethod: 'GET',
    headers: { Accept: '*/*', HeaderAuth1: 'headerValue1', 'X-Forwarded-Port': '443' },
    multiValueHeaders: { Accept: ['*/*'], HeaderAuth1: ['headerValue1'], 'X-Forwarded-Port': ['443'] },
    queryStringParameters: { QueryString1: 'queryValue1' },
    multiValueQueryStringParameters: { QueryString1: ['queryValue1'] },
    pathParameters: {},
    stageVariables: { StageVar1: 'stageValue1' },
    requestContext: {
      path: '/request',
      accountId: '123456789012',
      resourceId: '05c7jb',
      stage: 'test',
      requestId: 'request-1',
      resourcePath: '/request',
      httpMethod: 'GET',
      apiId: 's4x3opwd6i',
    } as APIGatewayRequestAuthorizerEvent['requestContext'],
    ...overrides,
  };
}

/** The REST sample's shape with the payload 1.0 fields, and no multi-value maps (as its sample has none). */
export function httpV1SampleEvent(
  overrides: Partial<HttpApiV1AuthorizerEvent> = {},
): HttpApiV1AuthorizerEvent {
  const rest = restSampleEvent();
  return {
    ...rest,
    version: '1.0',
    methodArn: 'arn:aws:execute-api:us-east-1:123456789012:abcdef123/test/GET/request',
    identitySource: 'user1,123',
    headers: { Accept: '*/*', HeaderAuth1: 'headerValue1' },
    multiValueHeaders: null as unknown as HttpApiV1AuthorizerEvent['multiValueHeaders'],
    multiValueQueryStringParameters: null,
    requestContext: { ...rest.requestContext, apiId: 'abcdef123' },
    ...overrides,
  };
}

export interface V2Overrides {
  readonly method?: string;
  readonly rawPath?: string;
  readonly rawQueryString?: string;
  readonly headers?: Record<string, string>;
  readonly routeKey?: string;
  readonly stage?: string;
  readonly domainName?: string;
  readonly pathParameters?: Record<string, string>;
}

export function httpV2SampleEvent(overrides: V2Overrides = {}): APIGatewayRequestAuthorizerEventV2 {
  const rawPath = overrides.rawPath ?? '/my/path';
  const rawQueryString = overrides.rawQueryString ?? 'parameter1=value1&parameter1=value2&parameter2=value';
  const query: Record<string, string> = {};
  for (const [name, value] of new URLSearchParams(rawQueryString)) {
    query[name] = query[name] === undefined ? value : `${query[name]},${value}`;
  }
  const routeKey = overrides.routeKey ?? '$default';
  const stage = overrides.stage ?? '$default';
  const method = overrides.method ?? 'POST';
  return {
    version: '2.0',
    type: 'REQUEST',
    routeArn: `arn:aws:execute-api:us-east-1:123456789012:abcdef123/${stage}/${method}${rawPath}`,
    identitySource: ['user1', '123'],
    routeKey,
    rawPath,
    rawQueryString,
    cookies: ['cookie1', 'cookie2'],
    headers: overrides.headers ?? { header1: 'value1', header2: 'value2' },
    queryStringParameters: query,
    requestContext: {
      accountId: '123456789012',
      apiId: 'api-id',
      domainName: overrides.domainName ?? 'id.execute-api.us-east-1.amazonaws.com',
      domainPrefix: (overrides.domainName ?? 'id').split('.')[0] ?? 'id',
      http: { method, path: rawPath, protocol: 'HTTP/1.1', sourceIp: 'IP', userAgent: 'agent' },
      requestId: 'id',
      routeKey,
      stage,
      time: '12/Mar/2020:19:03:58 +0000',
      timeEpoch: 1583348638390,
    },
    pathParameters: overrides.pathParameters ?? { parameter1: 'value1' },
    stageVariables: { stageVariable1: 'value1', stageVariable2: 'value2' },
  };
}

/**
 * A REST call through a custom domain whose base path mapping `basePath` ('' for `(none)`) names stage `stage`: `path`
 * carries the base path and never the stage, `resource` is the API's own template (the events quoted in
 * aws/serverless-java-container#34 and aws-powertools/powertools-lambda-python#576, and the developer
 * guide's "API Gateway strips the incoming base path" before choosing the resource).
 */
export function restCustomDomainEvent(call: {
  readonly basePath: string;
  readonly stage: string;
  readonly resource: string;
  readonly apiPath: string;
  readonly pathParameters?: Record<string, string>;
}): APIGatewayRequestAuthorizerEvent {
  const sample = restSampleEvent();
  const path = call.basePath === '' ? call.apiPath : `/${call.basePath}${call.apiPath}`;
  return restSampleEvent({
    resource: call.resource,
    path,
    pathParameters: call.pathParameters ?? {},
    requestContext: {
      ...sample.requestContext,
      stage: call.stage,
      path,
      resourcePath: call.resource,
      domainName: 'api.example.com',
      domainPrefix: 'api',
    },
  });
}
