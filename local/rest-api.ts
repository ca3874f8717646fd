/**
 * A REST API with a Lambda REQUEST authorizer: the REST event, the IAM policy evaluated against the
 * methodArn, and refusals answered by the API's gateway responses (UNAUTHORIZED, ACCESS_DENIED, ...).
 */
import { createHash } from 'node:crypto';
import type { APIGatewayAuthorizerResult, APIGatewayRequestAuthorizerEvent } from 'aws-lambda';
import type { IdentitySource } from '../core/credentials';
import {
  type ApiKind,
  AuthorizerTimeoutError,
  type GatewayAnswer,
  type GatewayCall,
  type GatewayRefusal,
  integrationContext,
} from './api-kind';
import { requestAuthorizerEvent } from './authorizer-event';
import {
  contextHeadersOf,
  DEFAULT_GATEWAY_RESPONSES,
  type GatewayResponses,
  type GatewayResponseType,
  renderTemplate,
} from './gateway-responses';
import { evaluateAuthorizerResult } from './policy';
import { hasIdentitySource, restHeaders, restQuery } from './request-maps';

export type AuthorizerFunction = (
  event: APIGatewayRequestAuthorizerEvent,
) => Promise<APIGatewayAuthorizerResult>;

export interface RestApiSettings {
  readonly apiId: string;
  readonly stage: string;
  /** Parameters a call must carry: one missing gets 401 without an invocation. */
  readonly identitySources: readonly IdentitySource[];
  readonly authorizer: AuthorizerFunction;
  /** Default API Gateway's own gateway responses. */
  readonly responses?: GatewayResponses;
}

/** `$context.error.message` of each gateway response, as API Gateway sets it. */
const DEFAULT_MESSAGES: Readonly<Record<GatewayResponseType, string | null>> = {
  MISSING_AUTHENTICATION_TOKEN: 'Missing Authentication Token',
  UNAUTHORIZED: 'Unauthorized',
  ACCESS_DENIED: 'User is not authorized to access this resource with an explicit deny',
  AUTHORIZER_CONFIGURATION_ERROR: null,
  AUTHORIZER_FAILURE: null,
  REQUEST_TOO_LARGE: 'Request Too Long',
  INTEGRATION_FAILURE: 'Internal server error',
  INTEGRATION_TIMEOUT: 'Endpoint request timed out',
};

const REFUSAL_RESPONSES: Readonly<Record<GatewayRefusal, GatewayResponseType>> = {
  NO_ROUTE: 'MISSING_AUTHENTICATION_TOKEN',
  REQUEST_TOO_LARGE: 'REQUEST_TOO_LARGE',
  INTEGRATION_FAILURE: 'INTEGRATION_FAILURE',
  INTEGRATION_TIMEOUT: 'INTEGRATION_TIMEOUT',
};

/** The REST authorizer event of a call. */
export function restAuthorizerEvent(
  settings: Pick<RestApiSettings, 'apiId' | 'stage'>,
  call: GatewayCall,
): APIGatewayRequestAuthorizerEvent {
  const resource = call.match.route.resource;
  return requestAuthorizerEvent({
    apiId: settings.apiId,
    stage: settings.stage,
    method: call.method,
    resource,
    path: call.path,
    ...restHeaders(call.headerLines),
    ...restQuery(call.rawQueryString),
    pathParameters: call.match.pathParameters,
    requestId: call.requestId,
    requestTimeEpoch: call.receivedAt,
    resourceId: createHash('sha256').update(resource).digest('hex').slice(0, 6),
    sourceIp: call.sourceIp,
    userAgent: call.userAgent,
    protocol: call.protocol,
    connection: {
      domainName: call.domainName,
      domainPrefix: call.domainName.split('.')[0] ?? call.domainName,
      extendedRequestId: call.extendedRequestId,
      requestTime: call.requestTime,
    },
  });
}

/** The gateway response of one type, rendered for one call. */
export function gatewayResponse(
  responses: GatewayResponses,
  requestId: string,
  type: GatewayResponseType,
  variables: Record<string, unknown> = {},
  message: string | null = DEFAULT_MESSAGES[type],
): GatewayAnswer {
  const definition = responses[type];
  return {
    status: definition.statusCode,
    headers: {
      ...definition.headers,
      ...contextHeadersOf(definition, variables),
      'content-type': 'application/json',
      'x-amzn-ErrorType': definition.errorType,
    },
    body: renderTemplate(definition.template, {
      requestId,
      ...variables,
      error: { message, messageString: JSON.stringify(message), responseType: type },
    }),
    errorType: definition.errorType,
  };
}

/** A refusal the REST API gives itself, with API Gateway's own gateway responses unless told others. */
export function restRefusal(
  refusal: GatewayRefusal,
  requestId: string,
  responses: GatewayResponses = DEFAULT_GATEWAY_RESPONSES,
): GatewayAnswer {
  return gatewayResponse(responses, requestId, REFUSAL_RESPONSES[refusal]);
}

export function restApi(settings: RestApiSettings): ApiKind {
  const responses = settings.responses ?? DEFAULT_GATEWAY_RESPONSES;
  return {
    refusal: (refusal, requestId) => restRefusal(refusal, requestId, responses),
    async authorize(call, invoke) {
      const refuse = (type: GatewayResponseType, variables?: Record<string, unknown>, message?: string) => ({
        ok: false as const,
        answer: gatewayResponse(responses, call.requestId, type, variables, message),
      });
      if (
        !settings.identitySources.every((source) =>
          hasIdentitySource(call.headerLines, call.rawQueryString, source),
        )
      ) {
        return refuse('UNAUTHORIZED');
      }
      const event = restAuthorizerEvent(settings, call);
      const startedAt = Date.now();
      let verdict: ReturnType<typeof evaluateAuthorizerResult>;
      try {
        verdict = evaluateAuthorizerResult(await invoke(settings.authorizer, event), event.methodArn);
      } catch (error) {
        // The Lambda runtime turns a thrown Error('Unauthorized') into the error API Gateway answers 401.
        if (error instanceof Error && error.message === 'Unauthorized') return refuse('UNAUTHORIZED');
        return refuse(
          error instanceof AuthorizerTimeoutError ? 'AUTHORIZER_FAILURE' : 'AUTHORIZER_CONFIGURATION_ERROR',
        );
      }
      const context = {
        ...integrationContext(verdict.context),
        principalId: verdict.principalId,
        integrationLatency: Date.now() - startedAt,
      };
      if (verdict.decision === 'explicit_deny') return refuse('ACCESS_DENIED', { authorizer: context });
      if (verdict.decision === 'implicit_deny') {
        return refuse(
          'ACCESS_DENIED',
          { authorizer: context },
          'User is not authorized to access this resource',
        );
      }
      return { ok: true, context };
    },
  };
}
