/**
 * The token function behind API Gateway (Lambda proxy integration): POST /oauth/token, GET
 * /.well-known/jwks.json and GET /.well-known/openid-configuration, none behind the access authorizer.
 */
import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import { errorMessage, type LogPort } from '../../core/observability/observability';
import type { TokenEndpoint, TokenHttpRequest } from './endpoint';

export function tokenHttpRequest(event: APIGatewayProxyEvent): TokenHttpRequest {
  const body =
    event.body === null || event.body === undefined
      ? undefined
      : event.isBase64Encoded
        ? Buffer.from(event.body, 'base64').toString('utf8')
        : event.body;
  const query: Record<string, readonly string[]> = {};
  for (const [name, values] of Object.entries(event.multiValueQueryStringParameters ?? {})) {
    if (values !== undefined) query[name] = values;
  }
  for (const [name, value] of Object.entries(event.queryStringParameters ?? {})) {
    if (value !== undefined && query[name] === undefined) query[name] = [value];
  }
  const sourceAddress = event.requestContext?.identity?.sourceIp;
  return {
    method: event.httpMethod,
    headers: event.headers ?? {},
    query,
    ...(body !== undefined && { body }),
    ...(sourceAddress && { sourceAddress }),
  };
}

/** The handler over a built endpoint; a failure of the endpoint itself is a 503 OAuth error, never a 500. */
export function createTokenHandler(endpoint: () => Promise<TokenEndpoint>, logger: LogPort) {
  return async (event: APIGatewayProxyEvent): Promise<APIGatewayProxyResult> => {
    try {
      // event.resource is the API's resource path (/oauth/token), whatever the stage or base path.
      return await (await endpoint()).handle(tokenHttpRequest(event), event.resource);
    } catch (error) {
      logger.error('token endpoint failed', { error: errorMessage(error) });
      return {
        statusCode: 503,
        headers: { 'content-type': 'application/json;charset=UTF-8', 'cache-control': 'no-store' },
        body: JSON.stringify({ error: 'temporarily_unavailable', error_description: 'try again later' }),
      };
    }
  };
}
