import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import { type CorsSettings, corsResponseHeaders } from '../core/cors';

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

/**
 * IETF RateLimit headers (draft-ietf-httpapi-ratelimit-headers) from the authorizer's context: a
 * `default` policy, the call's most constrained limit, and a `burst` policy, its plan's throttle
 * (docs/throttling.md); none when neither applies to the call.
 */
export function rateLimitHeaders(authorizer: Readonly<Record<string, unknown>>): Record<string, string> {
  const policies = [defaultPolicy(authorizer), burstPolicy(authorizer)].filter(
    (policy): policy is { policy: string; state: string } => policy !== undefined,
  );
  if (policies.length === 0) return {};
  return {
    'RateLimit-Policy': policies.map(({ policy }) => policy).join(', '),
    RateLimit: policies.map(({ state }) => state).join(', '),
  };
}

function defaultPolicy(authorizer: Readonly<Record<string, unknown>>) {
  const { limit, remaining, reset } = authorizer;
  if (limit === undefined || limit === null || remaining === undefined) return undefined;
  const window = reset === undefined || reset === null ? '' : `;t=${reset}`;
  return {
    policy: `"default";q=${limit}${
      typeof authorizer.limitPeriod === 'string' && authorizer.limitPeriod in PERIOD_SECONDS
        ? `;w=${PERIOD_SECONDS[authorizer.limitPeriod as keyof typeof PERIOD_SECONDS]}`
        : ''
    }`,
    state: `"default";r=${remaining}${window}`,
  };
}

function burstPolicy(authorizer: Readonly<Record<string, unknown>>) {
  const { throttleLimit, throttleRemaining, throttleReset } = authorizer;
  if (throttleLimit === undefined || throttleLimit === null || throttleRemaining === undefined)
    return undefined;
  return {
    policy: `"burst";q=${throttleLimit};w=1`,
    state: `"burst";r=${throttleRemaining};t=${throttleReset}`,
  };
}

/** The window of each fixed period in seconds (month and year: their longest). */
const PERIOD_SECONDS = {
  minute: 60,
  hour: 3600,
  day: 86_400,
  week: 604_800,
  month: 2_678_400,
  year: 31_622_400,
} as const;

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
