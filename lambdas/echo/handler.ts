import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import { rateLimitFields } from '../../core/decision/rate-limit-fields';
import { type CorsSettings, corsResponseHeaders } from '../../core/settings/cors';

/**
 * Header and query-parameter names that can carry a credential. The echo never reflects them, so a
 * demo backend cannot leak a consumer's key into a response, a browser cache or a log of responses.
 */
export const CREDENTIAL_NAMES: readonly string[] = [
  'apikey',
  'app_key',
  'user_key',
  'access_token',
  'authorization',
  'proxy-authorization',
  'x-api-key',
  'cookie',
];

/**
 * The configured headers that carry a secret: the user key and the app key. The app id is an identifier
 * (the authorizer's context carries it too), so the echo shows it.
 */
export function configuredSecretHeaders(headers: {
  readonly credentialHeader?: string;
  readonly appKeyHeader?: string;
}): string[] {
  return [headers.credentialHeader, headers.appKeyHeader].filter(
    (name): name is string => name !== undefined && name !== '',
  );
}

export interface EchoOptions {
  /** Further names to hide, for example a configured credential header; matched case-insensitively. */
  readonly hiddenNames?: readonly string[];
  /** The API's CORS settings: a proxy integration sets the CORS headers of its answers itself. */
  readonly cors?: CorsSettings;
}

/** What the echo answers: the request as API Gateway handed it to the backend, minus credentials. */
export interface EchoBody {
  readonly method: string;
  readonly path: string;
  readonly resource: string;
  readonly pathParameters: Readonly<Record<string, string | undefined>>;
  readonly queryStringParameters: Readonly<Record<string, string | undefined>>;
  readonly headers: Readonly<Record<string, string | undefined>>;
  /** The authorizer's context (application, plan, metric) and principal id. */
  readonly authorizer: Readonly<Record<string, unknown>>;
}

function withoutHidden(
  values: Readonly<Record<string, string | undefined>> | null,
  hidden: ReadonlySet<string>,
): Record<string, string | undefined> {
  return Object.fromEntries(Object.entries(values ?? {}).filter(([name]) => !hidden.has(name.toLowerCase())));
}

/** The RateLimit fields of the call from the authorizer's context; none when no limit or throttle applies. */
export function rateLimitHeaders(authorizer: Readonly<Record<string, unknown>>): Record<string, string> {
  return rateLimitFields(authorizer) ?? {};
}

/** The demo backend: answers the request's method, path, parameters, headers and authorizer context as JSON. */
export function echo(event: APIGatewayProxyEvent, options: EchoOptions = {}): APIGatewayProxyResult {
  const hidden = new Set(
    [...CREDENTIAL_NAMES, ...(options.hiddenNames ?? [])].map((name) => name.toLowerCase()),
  );
  const body: EchoBody = {
    method: event.httpMethod,
    path: event.path,
    resource: event.resource,
    pathParameters: event.pathParameters ?? {},
    queryStringParameters: withoutHidden(event.queryStringParameters, hidden),
    headers: withoutHidden(event.headers, hidden),
    authorizer: event.requestContext.authorizer ?? {},
  };
  return {
    statusCode: 200,
    headers: {
      ...corsResponseHeaders(options.cors, event.headers),
      ...rateLimitHeaders(event.requestContext.authorizer ?? {}),
      'content-type': 'application/json; charset=utf-8',
    },
    body: JSON.stringify(body),
  };
}
