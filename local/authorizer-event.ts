/**
 * The events API Gateway sends a Lambda REQUEST authorizer (a REST API's; an HTTP API's, payload 2.0),
 * built in one place for the local gateway, the benchmark and the reliability tests, so that all of them
 * hand the authorizer the same shape.
 */
import type {
  APIGatewayEventIdentity,
  APIGatewayRequestAuthorizerEvent,
  APIGatewayRequestAuthorizerEventV2,
} from 'aws-lambda';
import { LOCAL_ACCOUNT_ID, LOCAL_REGION } from './sns-endpoint';

/** What API Gateway knows about one call when it invokes the authorizer. */
export interface AuthorizerCall {
  readonly apiId: string;
  readonly stage: string;
  readonly method: string;
  /** The matched resource template, like /v1/words/{word}.json. */
  readonly resource: string;
  /** The path the API sees: without the stage or a custom domain's base path. */
  readonly path: string;
  readonly headers: Record<string, string>;
  readonly multiValueHeaders: Record<string, string[]>;
  readonly pathParameters: Record<string, string> | null;
  readonly queryStringParameters?: Record<string, string> | null;
  readonly multiValueQueryStringParameters?: Record<string, string[]> | null;
  readonly requestId: string;
  readonly requestTimeEpoch: number;
  readonly resourceId: string;
  readonly sourceIp: string;
  readonly userAgent: string | null;
  /** 'HTTP/1.1' unless the connection said otherwise. */
  readonly protocol?: string;
  /** Known only to a gateway that really took the connection. */
  readonly connection?: {
    readonly domainName: string;
    readonly domainPrefix: string;
    readonly extendedRequestId: string;
    /** CLF time, like 21/Nov/2026:05:01:02 +0000. */
    readonly requestTime: string;
  };
}

export function methodArnOf(apiId: string, stage: string, method: string, path: string): string {
  return `arn:aws:execute-api:${LOCAL_REGION}:${LOCAL_ACCOUNT_ID}:${apiId}/${stage}/${method}${path}`;
}

/** A caller without IAM or Cognito credentials: API Gateway fills in only its address and user agent. */
function anonymousIdentity(sourceIp: string, userAgent: string | null): APIGatewayEventIdentity {
  return {
    accessKey: null,
    accountId: null,
    apiKey: null,
    apiKeyId: null,
    caller: null,
    clientCert: null,
    cognitoAuthenticationProvider: null,
    cognitoAuthenticationType: null,
    cognitoIdentityId: null,
    cognitoIdentityPoolId: null,
    principalOrgId: null,
    sourceIp,
    user: null,
    userAgent,
    userArn: null,
  };
}

export function requestAuthorizerEvent(call: AuthorizerCall): APIGatewayRequestAuthorizerEvent {
  return {
    type: 'REQUEST',
    methodArn: methodArnOf(call.apiId, call.stage, call.method, call.path),
    resource: call.resource,
    path: call.path,
    httpMethod: call.method,
    headers: call.headers,
    multiValueHeaders: call.multiValueHeaders,
    pathParameters: call.pathParameters,
    queryStringParameters: call.queryStringParameters ?? null,
    multiValueQueryStringParameters: call.multiValueQueryStringParameters ?? null,
    stageVariables: null,
    requestContext: {
      accountId: LOCAL_ACCOUNT_ID,
      apiId: call.apiId,
      authorizer: undefined,
      ...call.connection,
      httpMethod: call.method,
      identity: anonymousIdentity(call.sourceIp, call.userAgent),
      path: `/${call.stage}${call.path}`,
      protocol: call.protocol ?? 'HTTP/1.1',
      requestId: call.requestId,
      requestTimeEpoch: call.requestTimeEpoch,
      resourceId: call.resourceId,
      resourcePath: call.resource,
      stage: call.stage,
    },
  };
}

/** What an HTTP API knows about one call when it invokes its authorizer (payload format 2.0). */
export interface HttpApiAuthorizerCall {
  readonly apiId: string;
  /** `$default`, or a named stage whose name starts rawPath. */
  readonly stage: string;
  readonly method: string;
  /** The matched route, like `GET /v1/words/{word}` or `ANY /{proxy+}`. */
  readonly routeKey: string;
  /** The path as the client sent it, the stage's prefix included. */
  readonly rawPath: string;
  readonly rawQueryString: string;
  /** Header lines in the order received (repeated names repeat). */
  readonly headerLines: readonly (readonly [name: string, value: string])[];
  readonly pathParameters: Readonly<Record<string, string>> | null;
  readonly requestId: string;
  readonly requestTimeEpoch: number;
  readonly sourceIp: string;
  readonly userAgent: string | null;
  readonly protocol?: string;
  readonly domainName: string;
  readonly requestTime: string;
}

/**
 * The 2.0 event of an HTTP API's Lambda authorizer (docs/http-api.md): header names in lower case,
 * repeated headers and query values joined by commas, Cookie headers moved to `cookies`.
 */
export function httpApiAuthorizerEvent(call: HttpApiAuthorizerCall): APIGatewayRequestAuthorizerEventV2 {
  const headers: Record<string, string> = {};
  const cookies: string[] = [];
  for (const [name, value] of call.headerLines) {
    const lower = name.toLowerCase();
    if (lower === 'cookie') cookies.push(...value.split(';').map((cookie) => cookie.trim()));
    else headers[lower] = headers[lower] === undefined ? value : `${headers[lower]},${value}`;
  }
  const query: Record<string, string> = {};
  for (const [name, value] of new URLSearchParams(call.rawQueryString)) {
    query[name] = query[name] === undefined ? value : `${query[name]},${value}`;
  }
  return {
    version: '2.0',
    type: 'REQUEST',
    routeArn: `arn:aws:execute-api:${LOCAL_REGION}:${LOCAL_ACCOUNT_ID}:${call.apiId}/${call.stage}/${call.method}${call.rawPath}`,
    identitySource: [],
    routeKey: call.routeKey,
    rawPath: call.rawPath,
    rawQueryString: call.rawQueryString,
    cookies,
    headers,
    queryStringParameters: query,
    requestContext: {
      accountId: LOCAL_ACCOUNT_ID,
      apiId: call.apiId,
      domainName: call.domainName,
      domainPrefix: call.domainName.split('.')[0] ?? call.domainName,
      http: {
        method: call.method,
        path: call.rawPath,
        protocol: call.protocol ?? 'HTTP/1.1',
        sourceIp: call.sourceIp,
        userAgent: call.userAgent ?? '',
      },
      requestId: call.requestId,
      routeKey: call.routeKey,
      stage: call.stage,
      time: call.requestTime,
      timeEpoch: call.requestTimeEpoch,
    },
    ...(call.pathParameters !== null && { pathParameters: { ...call.pathParameters } }),
  };
}
