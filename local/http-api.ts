/**
 * An HTTP API with a Lambda authorizer, payload format 2.0 and simple responses (docs/http-api.md). It has
 * no gateway responses: a call missing an identity source gets 401 {"message":"Unauthorized"} without an
 * invocation, `isAuthorized: false` gets 403 {"message":"Forbidden"}, and an authorizer that fails or
 * answers anything but a simple response gets 500 {"message":"Internal Server Error"}. A thrown
 * "Unauthorized" is a REST API's convention the HTTP API documentation does not give: here it is an
 * authorizer failure like any other.
 */
import type { APIGatewayRequestAuthorizerEventV2 } from 'aws-lambda';
import type { IdentitySource } from '../core/credentials';
import {
  type ApiKind,
  type GatewayAnswer,
  type GatewayCall,
  type GatewayRefusal,
  integrationContext,
} from './api-kind';
import { httpApiAuthorizerEvent } from './authorizer-event';
import { hasIdentitySource } from './request-maps';

export type HttpAuthorizerFunction = (event: APIGatewayRequestAuthorizerEventV2) => Promise<unknown>;

export interface HttpApiSettings {
  readonly apiId: string;
  /** `$default` (served at the root) or a named stage (served under /<stage>). */
  readonly stage: string;
  readonly identitySources: readonly IdentitySource[];
  readonly authorizer: HttpAuthorizerFunction;
  /** Headers on the API's own answers, like CORS headers (an HTTP API's CORS covers every answer). */
  readonly answerHeaders?: Readonly<Record<string, string>>;
}

/** An HTTP API's own answers: a status and its reason phrase as the message. */
const ANSWERS = {
  NO_ROUTE: [404, 'Not Found'],
  REQUEST_TOO_LARGE: [413, 'Request Entity Too Large'],
  INTEGRATION_FAILURE: [500, 'Internal Server Error'],
  INTEGRATION_TIMEOUT: [503, 'Service Unavailable'],
  UNAUTHORIZED: [401, 'Unauthorized'],
  FORBIDDEN: [403, 'Forbidden'],
  AUTHORIZER_FAILURE: [500, 'Internal Server Error'],
} as const satisfies Record<GatewayRefusal | string, readonly [number, string]>;

type AnswerType = keyof typeof ANSWERS;

/** What API Gateway accepts as a simple response: `isAuthorized` a boolean, `context` an object if any. */
function simpleResponse(
  value: unknown,
): { readonly isAuthorized: boolean; readonly context: Record<string, unknown> } | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const { isAuthorized, context } = value as Record<string, unknown>;
  if (typeof isAuthorized !== 'boolean') return undefined;
  if (context === undefined) return { isAuthorized, context: {} };
  if (typeof context !== 'object' || context === null || Array.isArray(context)) return undefined;
  return { isAuthorized, context: context as Record<string, unknown> };
}

export function httpAuthorizerEvent(
  settings: HttpApiSettings,
  call: GatewayCall,
): APIGatewayRequestAuthorizerEventV2 {
  const { route } = call.match;
  return httpApiAuthorizerEvent({
    apiId: settings.apiId,
    stage: settings.stage,
    method: call.method,
    routeKey: `${route.method} ${route.resource}`,
    rawPath: call.stagePath,
    rawQueryString: call.rawQueryString,
    headerLines: call.headerLines,
    pathParameters: call.match.pathParameters,
    requestId: call.requestId,
    requestTimeEpoch: call.receivedAt,
    sourceIp: call.sourceIp,
    userAgent: call.userAgent,
    protocol: call.protocol,
    domainName: call.domainName,
    requestTime: call.requestTime,
  });
}

export function httpApi(settings: HttpApiSettings): ApiKind {
  const answer = (type: AnswerType): GatewayAnswer => {
    const [status, message] = ANSWERS[type];
    return {
      status,
      headers: { ...settings.answerHeaders, 'content-type': 'application/json' },
      body: JSON.stringify({ message }),
    };
  };
  const refuse = (type: AnswerType) => ({ ok: false as const, answer: answer(type) });
  return {
    refusal: (refusal) => answer(refusal),
    async authorize(call, invoke) {
      if (
        !settings.identitySources.every((source) =>
          hasIdentitySource(call.headerLines, call.rawQueryString, source),
        )
      ) {
        return refuse('UNAUTHORIZED');
      }
      let response: ReturnType<typeof simpleResponse>;
      try {
        response = simpleResponse(await invoke(settings.authorizer, httpAuthorizerEvent(settings, call)));
      } catch {
        return refuse('AUTHORIZER_FAILURE');
      }
      if (response === undefined) return refuse('AUTHORIZER_FAILURE');
      if (!response.isAuthorized) return refuse('FORBIDDEN');
      return { ok: true, context: integrationContext(response.context) };
    },
  };
}
