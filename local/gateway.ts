/**
 * A local stand-in for an API Gateway REST API with a Lambda REQUEST authorizer. Each method has its own
 * authorization and integration: for a method behind the authorizer it builds the REQUEST authorizer event
 * API Gateway sends, invokes the authorizer in-process and enforces the returned policy against the
 * methodArn; open methods (CORS preflights, the documentation) skip that. Allowed calls reach the method's
 * integration as an APIGatewayProxyEvent. Several APIs can share one server, each under its own base
 * path (like the base path mappings of a custom domain name); the base path is not part of the path the
 * API sees.
 */

import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type {
  APIGatewayAuthorizerResult,
  APIGatewayProxyEvent,
  APIGatewayProxyResult,
  APIGatewayRequestAuthorizerEvent,
} from 'aws-lambda';
import { isProtectedMethod } from '../contract/gateway-responses';
import { findRoute, parseRoute, type Route } from '../contract/routes';
import type { IdentitySource } from '../lambdas/core/credentials';
import { requestAuthorizerEvent } from './authorizer-event';
import {
  DEFAULT_GATEWAY_RESPONSES,
  type GatewayResponses,
  type GatewayResponseType,
  renderTemplate,
} from './gateway-responses';
import { BodyTooLargeError, closeServer, listenOnLoopback, readBody } from './http-server';
import { evaluateAuthorizerResult } from './policy';

export type AuthorizerFunction = (
  event: APIGatewayRequestAuthorizerEvent,
) => Promise<APIGatewayAuthorizerResult>;
export type BackendFunction = (
  event: APIGatewayProxyEvent,
) => Promise<APIGatewayProxyResult> | APIGatewayProxyResult;

/**
 * One method of the API, as API Gateway has it: a resource and HTTP method, its authorization (`CUSTOM`:
 * behind the API's authorizer; `NONE`: open, like a CORS preflight or the documentation) and its integration.
 */
export interface ApiMethod {
  readonly route: Route;
  readonly authorization: 'CUSTOM' | 'NONE';
  /** A Lambda proxy integration, or what a MOCK integration answers. */
  readonly integration: BackendFunction;
}

export interface GatewayApi {
  /** '' or a path like '/appid' the API is mounted under. */
  readonly basePath: string;
  readonly apiId: string;
  readonly stage: string;
  readonly methods: readonly ApiMethod[];
  /** Header names of the authorizer's identity sources: a call missing one gets 401 without an invocation. */
  readonly identitySources: readonly IdentitySource[];
  readonly authorizer: AuthorizerFunction;
  readonly responses?: GatewayResponses;
}

/** Methods open to anyone (`METHOD /resource` routes), like the documentation or a token endpoint. */
export function openMethods(routes: readonly string[], integration: BackendFunction): ApiMethod[] {
  return routes.map((text, i) => ({
    route: parseRoute(text, `open routes[${i}]`),
    authorization: 'NONE',
    integration,
  }));
}

/** The routes behind the authorizer, as ApiAccessAuthorizer.protect() leaves them (OPTIONS stays open). */
export function protectedMethods(routes: readonly Route[], integration: BackendFunction): ApiMethod[] {
  return routes.map((route) => ({
    route,
    authorization: isProtectedMethod(route.method) ? 'CUSTOM' : 'NONE',
    integration,
  }));
}

export interface GatewayOptions {
  readonly apis: readonly GatewayApi[];
  /** 0 (default): a free port. */
  readonly port?: number;
  /** The authorizer Lambda's timeout; exceeding it is an authorizer failure (500). */
  readonly authorizerTimeoutMs?: number;
  /** API Gateway's integration timeout (29 s); exceeding it answers 504. */
  readonly integrationTimeoutMs?: number;
  /** One line per answered call: method, path (no query string), status and the API's base path. */
  readonly onResponse?: (line: AccessLogEntry) => void;
}

export interface AccessLogEntry {
  readonly method: string;
  readonly path: string;
  readonly status: number;
  readonly basePath: string | undefined;
  readonly errorType?: string;
}

export interface GatewayStats {
  readonly requests: number;
  readonly byStatus: Readonly<Record<number, number>>;
  readonly authorizerInvocations: number;
  readonly backendInvocations: number;
}

export interface LocalGateway {
  readonly url: string;
  readonly port: number;
  readonly server: Server;
  stats(): GatewayStats;
  stop(): Promise<void>;
}

/** API Gateway's payload limit. */
const MAX_PAYLOAD_BYTES = 10 * 1024 * 1024;
const DEFAULT_AUTHORIZER_TIMEOUT_MS = 10_000;
const DEFAULT_INTEGRATION_TIMEOUT_MS = 29_000;

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

class TimeoutError extends Error {}

async function withTimeout<T>(work: () => Promise<T> | T, timeoutMs: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new TimeoutError(`${what} timed out after ${timeoutMs} ms`)), timeoutMs);
  });
  try {
    return await Promise.race([Promise.resolve().then(work), timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/** What crosses a Lambda boundary is JSON: functions, undefined and class instances do not survive it. */
function throughJson<T>(value: T): T {
  return value === undefined ? value : JSON.parse(JSON.stringify(value));
}

interface RequestHeaders {
  readonly headers: Record<string, string>;
  readonly multiValueHeaders: Record<string, string[]>;
}

/** Header names keep the client's spelling; for `headers` the last value of a repeated header wins. */
function requestHeaders(request: IncomingMessage, sourceIp: string, port: number): RequestHeaders {
  const headers: Record<string, string> = {};
  const multiValueHeaders: Record<string, string[]> = {};
  const spelling = new Map<string, string>();
  const raw = request.rawHeaders;
  for (let i = 0; i + 1 < raw.length; i += 2) {
    const name = raw[i] as string;
    const value = raw[i + 1] as string;
    const key = spelling.get(name.toLowerCase()) ?? name;
    spelling.set(name.toLowerCase(), key);
    headers[key] = value;
    multiValueHeaders[key] = [...(multiValueHeaders[key] ?? []), value];
  }
  const set = (name: string, value: string) => {
    const key = spelling.get(name.toLowerCase()) ?? name;
    headers[key] = value;
    multiValueHeaders[key] = [value];
  };
  const forwardedFor = headers[spelling.get('x-forwarded-for') ?? ''];
  set('X-Forwarded-For', forwardedFor ? `${forwardedFor}, ${sourceIp}` : sourceIp);
  set('X-Forwarded-Port', String(port));
  set('X-Forwarded-Proto', 'http');
  set(
    'X-Amzn-Trace-Id',
    `Root=1-${Math.floor(Date.now() / 1000).toString(16)}-${randomBytes(12).toString('hex')}`,
  );
  return { headers, multiValueHeaders };
}

function queryParameters(search: URLSearchParams) {
  const single: Record<string, string> = {};
  const multi: Record<string, string[]> = {};
  for (const [name, value] of search) {
    single[name] = value;
    multi[name] = [...(multi[name] ?? []), value];
  }
  const any = Object.keys(single).length > 0;
  return { queryStringParameters: any ? single : null, multiValueQueryStringParameters: any ? multi : null };
}

/** API Gateway refuses a call whose identity source is missing or empty before invoking the authorizer. */
function hasIdentitySource(
  headers: RequestHeaders,
  query: ReturnType<typeof queryParameters>,
  source: IdentitySource,
): boolean {
  if (source.location === 'query') {
    const value = query.queryStringParameters?.[source.name];
    return value !== undefined && value.trim() !== '';
  }
  const wanted = source.name.toLowerCase();
  return Object.entries(headers.headers).some(
    ([key, value]) => key.toLowerCase() === wanted && value.trim() !== '',
  );
}

/** CLF time as API Gateway's requestContext.requestTime: 21/Nov/2026:05:01:02 +0000. */
function requestTime(epochMs: number): string {
  const date = new Date(epochMs);
  const month = date.toLocaleString('en-US', { month: 'short', timeZone: 'UTC' });
  const pad = (n: number) => String(n).padStart(2, '0');
  return (
    `${pad(date.getUTCDate())}/${month}/${date.getUTCFullYear()}:` +
    `${pad(date.getUTCHours())}:${pad(date.getUTCMinutes())}:${pad(date.getUTCSeconds())} +0000`
  );
}

function validProxyResult(result: unknown): result is APIGatewayProxyResult {
  if (typeof result !== 'object' || result === null) return false;
  const value = result as Record<string, unknown>;
  const stringMap = (map: unknown, ofArrays: boolean) =>
    map === undefined ||
    (typeof map === 'object' &&
      map !== null &&
      Object.values(map).every((item) =>
        ofArrays
          ? Array.isArray(item) && item.every((v) => ['string', 'number', 'boolean'].includes(typeof v))
          : ['string', 'number', 'boolean'].includes(typeof item),
      ));
  return (
    typeof value.statusCode === 'number' &&
    Number.isInteger(value.statusCode) &&
    value.statusCode >= 100 &&
    value.statusCode <= 599 &&
    (value.body === undefined || value.body === null || typeof value.body === 'string') &&
    (value.isBase64Encoded === undefined || typeof value.isBase64Encoded === 'boolean') &&
    stringMap(value.headers, false) &&
    stringMap(value.multiValueHeaders, true)
  );
}

function rawPathOf(target: string): string {
  const path = target.split('?', 1)[0] ?? '';
  return path.startsWith('/') ? path : `/${path}`;
}

function mountedApi(apis: readonly GatewayApi[], path: string): GatewayApi | undefined {
  let best: GatewayApi | undefined;
  for (const api of apis) {
    const mounted = api.basePath === '' || path === api.basePath || path.startsWith(`${api.basePath}/`);
    if (mounted && (best === undefined || api.basePath.length > best.basePath.length)) best = api;
  }
  return best;
}

export async function startGateway(options: GatewayOptions): Promise<LocalGateway> {
  const authorizerTimeoutMs = options.authorizerTimeoutMs ?? DEFAULT_AUTHORIZER_TIMEOUT_MS;
  const integrationTimeoutMs = options.integrationTimeoutMs ?? DEFAULT_INTEGRATION_TIMEOUT_MS;
  const byStatus: Record<number, number> = {};
  let requests = 0;
  let authorizerInvocations = 0;
  let backendInvocations = 0;
  let port = 0;

  async function handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const requestId = randomUUID();
    const receivedAt = Date.now();
    const method = (request.method ?? 'GET').toUpperCase();
    const url = new URL(request.url ?? '/', 'http://localhost');
    // The path as the client sent it: API Gateway hands REST integrations and authorizers the path still
    // percent-encoded, with its dot segments and repeated slashes (URL parsing would resolve them).
    const fullPath = rawPathOf(request.url ?? '/');
    const api = mountedApi(options.apis, fullPath);
    const commonHeaders = {
      'x-amzn-RequestId': requestId,
      'x-amz-apigw-id': randomBytes(6).toString('base64url'),
    };
    const finish = (
      status: number,
      headers: Record<string, string | string[]>,
      body: Buffer | string,
      errorType?: string,
    ) => {
      requests++;
      byStatus[status] = (byStatus[status] ?? 0) + 1;
      response.writeHead(status, { ...commonHeaders, ...headers, 'content-length': Buffer.byteLength(body) });
      response.end(method === 'HEAD' ? undefined : body);
      options.onResponse?.({
        method,
        path: fullPath,
        status,
        basePath: api?.basePath,
        ...(errorType && { errorType }),
      });
    };
    const gatewayResponse = (
      type: GatewayResponseType,
      variables: Record<string, unknown> = {},
      message: string | null = DEFAULT_MESSAGES[type],
    ): undefined => {
      const definition = (api?.responses ?? DEFAULT_GATEWAY_RESPONSES)[type];
      const body = renderTemplate(definition.template, {
        requestId,
        ...variables,
        error: { message, messageString: JSON.stringify(message), responseType: type },
      });
      finish(
        definition.statusCode,
        {
          ...definition.headers,
          'content-type': 'application/json',
          'x-amzn-ErrorType': definition.errorType,
        },
        body,
        definition.errorType,
      );
      return undefined;
    };

    if (api === undefined) return gatewayResponse('MISSING_AUTHENTICATION_TOKEN');
    const path = fullPath.slice(api.basePath.length) || '/';
    const match = findRoute(
      api.methods.map((entry) => entry.route),
      method,
      path,
    );
    const apiMethod = api.methods.find((entry) => entry.route === match?.route);
    if (match === undefined || apiMethod === undefined)
      return gatewayResponse('MISSING_AUTHENTICATION_TOKEN');

    let body: Buffer;
    try {
      body = await readBody(request, MAX_PAYLOAD_BYTES);
    } catch (error) {
      if (error instanceof BodyTooLargeError) return gatewayResponse('REQUEST_TOO_LARGE');
      throw error;
    }

    const sourceIp = request.socket.remoteAddress?.replace(/^::ffff:/, '') ?? '127.0.0.1';
    const headers = requestHeaders(request, sourceIp, port);
    const query = queryParameters(url.searchParams);
    const resourcePath = match.route.resource;
    const authorizerEvent = requestAuthorizerEvent({
      apiId: api.apiId,
      stage: api.stage,
      method,
      resource: resourcePath,
      path,
      ...headers,
      ...query,
      pathParameters: match.pathParameters,
      requestId,
      requestTimeEpoch: receivedAt,
      resourceId: createHash('sha256').update(resourcePath).digest('hex').slice(0, 6),
      sourceIp,
      userAgent: request.headers['user-agent'] ?? null,
      protocol: `HTTP/${request.httpVersion}`,
      connection: {
        domainName: `127.0.0.1:${port}`,
        domainPrefix: '127',
        extendedRequestId: commonHeaders['x-amz-apigw-id'],
        requestTime: requestTime(receivedAt),
      },
    });

    /** The authorizer's context for the backend, or undefined once the call has been answered. */
    const authorize = async (): Promise<Record<string, unknown> | undefined> => {
      if (!api.identitySources.every((source) => hasIdentitySource(headers, query, source)))
        return gatewayResponse('UNAUTHORIZED');
      let verdict: ReturnType<typeof evaluateAuthorizerResult>;
      const authorizerStartedAt = Date.now();
      try {
        authorizerInvocations++;
        const result = await withTimeout(
          () => api.authorizer(throughJson(authorizerEvent)),
          authorizerTimeoutMs,
          'the authorizer',
        );
        verdict = evaluateAuthorizerResult(throughJson(result), authorizerEvent.methodArn);
      } catch (error) {
        // The Lambda runtime turns a thrown Error('Unauthorized') into the error API Gateway answers 401.
        if (error instanceof Error && error.message === 'Unauthorized')
          return gatewayResponse('UNAUTHORIZED');
        return gatewayResponse(
          error instanceof TimeoutError ? 'AUTHORIZER_FAILURE' : 'AUTHORIZER_CONFIGURATION_ERROR',
        );
      }
      const context = {
        ...Object.fromEntries(Object.entries(verdict.context).map(([key, value]) => [key, String(value)])),
        principalId: verdict.principalId,
        integrationLatency: Date.now() - authorizerStartedAt,
      };
      if (verdict.decision === 'explicit_deny')
        return gatewayResponse('ACCESS_DENIED', { authorizer: context });
      if (verdict.decision === 'implicit_deny') {
        return gatewayResponse(
          'ACCESS_DENIED',
          { authorizer: context },
          'User is not authorized to access this resource',
        );
      }
      return context;
    };
    let authorizer: Record<string, unknown> | undefined;
    if (apiMethod.authorization === 'CUSTOM') {
      authorizer = await authorize();
      if (authorizer === undefined) return;
    }

    const isText = body.length === 0 || !body.includes(0);
    const proxyEvent: APIGatewayProxyEvent = {
      resource: resourcePath,
      path,
      httpMethod: method,
      ...headers,
      ...query,
      pathParameters: match.pathParameters,
      stageVariables: null,
      requestContext: { ...authorizerEvent.requestContext, authorizer },
      body: body.length === 0 ? null : isText ? body.toString('utf8') : body.toString('base64'),
      isBase64Encoded: !isText,
    };
    let result: unknown;
    try {
      backendInvocations++;
      result = throughJson(
        await withTimeout(
          () => apiMethod.integration(throughJson(proxyEvent)),
          integrationTimeoutMs,
          'the integration',
        ),
      );
    } catch (error) {
      return gatewayResponse(error instanceof TimeoutError ? 'INTEGRATION_TIMEOUT' : 'INTEGRATION_FAILURE');
    }
    if (!validProxyResult(result)) return gatewayResponse('INTEGRATION_FAILURE');
    const responseHeaders: Record<string, string | string[]> = {};
    for (const [name, values] of Object.entries(result.multiValueHeaders ?? {})) {
      responseHeaders[name.toLowerCase()] = values.map(String);
    }
    for (const [name, value] of Object.entries(result.headers ?? {}))
      responseHeaders[name.toLowerCase()] = String(value);
    responseHeaders['content-type'] ??= 'application/json';
    const responseBody = result.body ?? '';
    finish(
      result.statusCode,
      responseHeaders,
      result.isBase64Encoded ? Buffer.from(responseBody, 'base64') : responseBody,
    );
  }

  const server = createServer((request, response) => {
    handle(request, response).catch(() => {
      if (!response.headersSent) response.writeHead(500, { 'content-type': 'application/json' });
      response.end('{"message":"Internal server error"}');
    });
  });
  port = await listenOnLoopback(server, options.port ?? 0);
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    server,
    stats: () => ({ requests, byStatus: { ...byStatus }, authorizerInvocations, backendInvocations }),
    stop: () => closeServer(server),
  };
}
