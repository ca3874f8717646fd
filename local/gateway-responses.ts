/**
 * API Gateway's gateway responses: the answers the gateway gives itself (no route, 401, 403, authorizer
 * failures, bad integration answers), with their status, JSON body template and x-amzn-ErrorType.
 * Templates use API Gateway's `$context` variables (for example `$context.authorizer.reason`).
 */

export type GatewayResponseType =
  | 'MISSING_AUTHENTICATION_TOKEN'
  | 'UNAUTHORIZED'
  | 'ACCESS_DENIED'
  | 'AUTHORIZER_CONFIGURATION_ERROR'
  | 'AUTHORIZER_FAILURE'
  | 'REQUEST_TOO_LARGE'
  | 'INTEGRATION_FAILURE'
  | 'INTEGRATION_TIMEOUT';

export interface GatewayResponse {
  readonly statusCode: number;
  /** A JSON body template; `$context.a.b` is replaced by that variable's value (empty when unset). */
  readonly template: string;
  readonly errorType: string;
  /** Static response headers (a gateway response's `responseParameters`). */
  readonly headers?: Readonly<Record<string, string>>;
  /** Headers mapped from `context.authorizer.<key>`; not sent when the context lacks the key. */
  readonly contextHeaders?: Readonly<Record<string, string>>;
}

export type GatewayResponses = Readonly<Record<GatewayResponseType, GatewayResponse>>;

/**
 * API Gateway's defaults, except the missing resource: REST APIs answer it 403, and this project's local
 * gateway answers 404 as its issue asks (unknown routes are "not found" to a consumer).
 */
export const DEFAULT_GATEWAY_RESPONSES: GatewayResponses = {
  MISSING_AUTHENTICATION_TOKEN: {
    statusCode: 404,
    template: '{"message":"Missing Authentication Token"}',
    errorType: 'MissingAuthenticationTokenException',
  },
  UNAUTHORIZED: {
    statusCode: 401,
    template: '{"message":"Unauthorized"}',
    errorType: 'UnauthorizedException',
  },
  ACCESS_DENIED: {
    statusCode: 403,
    template: '{"Message":"User is not authorized to access this resource with an explicit deny"}',
    errorType: 'AccessDeniedException',
  },
  AUTHORIZER_CONFIGURATION_ERROR: {
    statusCode: 500,
    template: '{"message": null}',
    errorType: 'AuthorizerConfigurationException',
  },
  AUTHORIZER_FAILURE: {
    statusCode: 500,
    template: '{"message": null}',
    errorType: 'AuthorizerFailureException',
  },
  REQUEST_TOO_LARGE: {
    statusCode: 413,
    template: '{"message":"Request Too Long"}',
    errorType: 'RequestTooLongException',
  },
  INTEGRATION_FAILURE: {
    statusCode: 502,
    template: '{"message": "Internal server error"}',
    errorType: 'InternalServerErrorException',
  },
  INTEGRATION_TIMEOUT: {
    statusCode: 504,
    template: '{"message": "Endpoint request timed out"}',
    errorType: 'InternalServerErrorException',
  },
};

/** The project's own gateway responses (as the CDK construct deploys them) over API Gateway's defaults. */
export function withOverrides(
  overrides: readonly {
    readonly type: GatewayResponseType;
    readonly statusCode: number;
    readonly template: string;
    readonly headers?: Readonly<Record<string, string>>;
    readonly contextHeaders?: Readonly<Record<string, string>>;
  }[],
  base: GatewayResponses = DEFAULT_GATEWAY_RESPONSES,
): GatewayResponses {
  const merged: Record<GatewayResponseType, GatewayResponse> = { ...base };
  for (const { type, statusCode, template, headers, contextHeaders } of overrides) {
    const combined = { ...base[type].headers, ...headers };
    merged[type] = {
      ...base[type],
      statusCode,
      template,
      ...(Object.keys(combined).length > 0 && { headers: combined }),
      ...(contextHeaders !== undefined && { contextHeaders }),
    };
  }
  return merged;
}

/** Every gateway response with `headers` added, as when the API's DEFAULT_4XX and DEFAULT_5XX carry them. */
export function withHeaders(
  responses: GatewayResponses,
  headers: Readonly<Record<string, string>>,
): GatewayResponses {
  if (Object.keys(headers).length === 0) return responses;
  return Object.fromEntries(
    Object.entries(responses).map(([type, response]) => [
      type,
      { ...response, headers: { ...response.headers, ...headers } },
    ]),
  ) as GatewayResponses;
}

export type TemplateVariables = Readonly<Record<string, unknown>>;

/** The context-mapped headers of a response, for one call: those whose value the authorizer gave. */
export function contextHeadersOf(
  response: GatewayResponse,
  variables: TemplateVariables,
): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const [name, key] of Object.entries(response.contextHeaders ?? {})) {
    const value = lookup(variables, ['authorizer', key]);
    if (value !== undefined && value !== null && value !== '') headers[name] = String(value);
  }
  return headers;
}

function lookup(variables: TemplateVariables, path: readonly string[]): unknown {
  let value: unknown = variables;
  for (const key of path) {
    if (typeof value !== 'object' || value === null) return undefined;
    value = (value as Record<string, unknown>)[key];
  }
  return value;
}

/**
 * Renders `$context.x.y` (and `$!context.x.y`) references. Values are escaped for a JSON string literal so
 * a body stays valid JSON whatever a reason holds; `$context.error.messageString` is already a quoted JSON
 * string, as in API Gateway.
 */
export function renderTemplate(template: string, context: TemplateVariables): string {
  const reference = /\$!?(?:\{context((?:\.[A-Za-z0-9_-]+)+)\}|context((?:\.[A-Za-z0-9_-]+)+))/g;
  return template.replace(reference, (_, braced: string | undefined, bare: string | undefined) => {
    const keys = (braced ?? bare ?? '').slice(1).split('.');
    const value = lookup(context, keys);
    if (value === undefined || value === null) return '';
    return keys.at(-1) === 'messageString' ? String(value) : JSON.stringify(String(value)).slice(1, -1);
  });
}
