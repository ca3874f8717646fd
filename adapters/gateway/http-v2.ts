/**
 * An HTTP API's Lambda authorizer with payload format 2.0 and simple responses: `isAuthorized` and the
 * context. What the event carries (docs/http-api.md): header names in lower case with repeated headers
 * joined by commas, repeated query values joined by commas in `queryStringParameters` (so the query is
 * read from `rawQueryString`), and `rawPath` starting with the stage's name on a named stage of the
 * execute-api endpoint (adapters/gateway/stage.ts).
 */
import type {
  APIGatewayRequestAuthorizerEventV2,
  APIGatewaySimpleAuthorizerWithContextResult,
} from 'aws-lambda';
import { type AuthorizerContext, INVALID_CREDENTIAL } from '../../contract/authorizer-context';
import { parsedQueryString } from '../../core/decision/request';
import { decisionContext, FAILURE_CONTEXT } from './context';
import type { GatewayFormat } from './format';
import { sourceAddressOf } from './rest-request';
import { apiPathOf } from './stage';

export type SimpleAnswer = APIGatewaySimpleAuthorizerWithContextResult<AuthorizerContext>;

/** The path part of a route key (`GET /v1/words/{word}`); '' for `$default`. */
function routeTemplate(routeKey: string): string {
  const at = routeKey.indexOf(' ');
  return at < 0 ? '' : routeKey.slice(at + 1);
}

export const httpV2Format: GatewayFormat<APIGatewayRequestAuthorizerEventV2, SimpleAnswer> = {
  name: 'http-2.0',
  requestOf(event) {
    const headers: Record<string, readonly string[]> = {};
    for (const [name, value] of Object.entries(event.headers ?? {})) {
      if (value !== undefined) headers[name] = [value];
    }
    return {
      method: event.requestContext.http.method,
      path: apiPathOf({
        path: event.rawPath,
        template: routeTemplate(event.routeKey),
        stage: event.requestContext.stage,
        domainName: event.requestContext.domainName,
        pathParameters: event.pathParameters,
      }),
      query: parsedQueryString(event.rawQueryString ?? ''),
      headers,
      ...sourceAddressOf(event.requestContext.http.sourceIp),
    };
  },
  answerOf(_event, decision, now) {
    if (decision.effect === 'unauthorized') {
      return { isAuthorized: false, context: { reason: INVALID_CREDENTIAL } };
    }
    return { isAuthorized: decision.effect === 'allow', context: decisionContext(decision, now) };
  },
  failureOf: () => ({ isAuthorized: false, context: FAILURE_CONTEXT }),
};
