/**
 * The event API Gateway's Lambda proxy integration hands a handler for a request with a text body (or
 * none), built in one place for callers that invoke a proxy handler without the local gateway (the
 * benchmark, the SOAP unit tests). The local gateway builds its events from the HTTP request it took.
 */
import type { APIGatewayProxyEvent } from 'aws-lambda';

export function textPostEvent(
  path: string,
  body: string,
  headers: Readonly<Record<string, string>>,
): APIGatewayProxyEvent {
  return proxyEvent('POST', path, body, headers);
}

export function proxyEvent(
  method: string,
  path: string,
  body: string | null,
  headers: Readonly<Record<string, string>>,
): APIGatewayProxyEvent {
  return {
    httpMethod: method,
    path,
    resource: path,
    headers: { ...headers },
    multiValueHeaders: Object.fromEntries(Object.entries(headers).map(([name, value]) => [name, [value]])),
    body,
    isBase64Encoded: false,
    pathParameters: null,
    queryStringParameters: null,
    multiValueQueryStringParameters: null,
    stageVariables: null,
    requestContext: {} as APIGatewayProxyEvent['requestContext'],
  };
}
