/**
 * A local stand-in for API Gateway: REST APIs and HTTP APIs with a Lambda REQUEST authorizer, over one
 * shared router. Each method has its own authorization and integration: for a method behind the
 * authorizer, the API's kind (rest-api.ts, http-api.ts) builds the authorizer event its gateway sends,
 * invokes the authorizer in-process and enforces its answer; open methods (CORS preflights, the
 * documentation) skip that. Allowed calls reach the method's integration as an APIGatewayProxyEvent.
 * Several APIs can share one server, each under its own base path (like the base path mappings of a
 * custom domain name) and stage path; neither is part of the path the API's routes see.
 */

import { randomBytes, randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import { isProtectedMethod } from '../contract/gateway-responses';
import { findRoute, parseRoute, type Route } from '../contract/routes';
import {
  type ApiKind,
  AuthorizerTimeoutError,
  type GatewayAnswer,
  type GatewayCall,
  type InvokeAuthorizer,
} from './api-kind';
import { type HttpApiSettings, httpApi } from './http-api';
import { BodyTooLargeError, closeServer, listenOnLoopback, readBody } from './http-server';
import { restHeaders, restQuery } from './request-maps';
import { type RestApiSettings, restApi, restAuthorizerEvent, restRefusal } from './rest-api';

export type { HttpAuthorizerFunction } from './http-api';
export type { AuthorizerFunction } from './rest-api';

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

interface MountedApi {
  /** '' or a path like '/appid' the API is mounted under. */
  readonly basePath: string;
  /** '' (default) or '/<stage>': the stage's part of the invoke URL, after the base path. */
  readonly stagePath?: string;
  readonly methods: readonly ApiMethod[];
}

/** A REST API (the default kind). */
export type RestGatewayApi = MountedApi & RestApiSettings & { readonly apiType?: 'rest' };

/** An HTTP API: payload 2.0, simple responses, no gateway responses. */
export type HttpGatewayApi = MountedApi & HttpApiSettings & { readonly apiType: 'http' };

export type GatewayApi = RestGatewayApi | HttpGatewayApi;

function kindOf(api: GatewayApi): ApiKind {
  return api.apiType === 'http' ? httpApi(api) : restApi(api);
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

/** A call's own timeout, as the Lambda service and API Gateway enforce them. */
async function withTimeout<T>(
  work: () => Promise<T> | T,
  timeoutMs: number,
  timedOut: () => Error,
): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(timedOut()), timeoutMs);
  });
  try {
    return await Promise.race([Promise.resolve().then(work), timeout]);
  } finally {
    clearTimeout(timer);
  }
}

class IntegrationTimeoutError extends Error {}

/** What crosses a Lambda boundary is JSON: functions, undefined and class instances do not survive it. */
function throughJson<T>(value: T): T {
  return value === undefined ? value : JSON.parse(JSON.stringify(value));
}

/** Names API Gateway sets itself on the way in, replacing what the client sent. */
const FORWARDING_HEADERS = ['X-Forwarded-For', 'X-Forwarded-Port', 'X-Forwarded-Proto', 'X-Amzn-Trace-Id'];

/** The client's header lines, with the forwarding headers API Gateway adds (in the client's spelling). */
function headerLinesOf(request: IncomingMessage, sourceIp: string, port: number): [string, string][] {
  const lines: [string, string][] = [];
  const forwarded = new Map<string, [string, string]>();
  const raw = request.rawHeaders;
  for (let i = 0; i + 1 < raw.length; i += 2) {
    const line: [string, string] = [raw[i] as string, raw[i + 1] as string];
    const canonical = FORWARDING_HEADERS.find((name) => name.toLowerCase() === line[0].toLowerCase());
    if (canonical === undefined) lines.push(line);
    else forwarded.set(canonical, line);
  }
  const set = (name: string, value: string) => lines.push([forwarded.get(name)?.[0] ?? name, value]);
  const forwardedFor = forwarded.get('X-Forwarded-For')?.[1];
  set('X-Forwarded-For', forwardedFor ? `${forwardedFor}, ${sourceIp}` : sourceIp);
  set('X-Forwarded-Port', String(port));
  set('X-Forwarded-Proto', 'http');
  set(
    'X-Amzn-Trace-Id',
    `Root=1-${Math.floor(Date.now() / 1000).toString(16)}-${randomBytes(12).toString('hex')}`,
  );
  return lines;
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

/** Where an API is mounted: its base path, then its stage's path. */
function mountOf(api: GatewayApi): string {
  return `${api.basePath}${api.stagePath ?? ''}`;
}

interface RunningApi {
  readonly api: GatewayApi;
  readonly mount: string;
  readonly kind: ApiKind;
  readonly routes: readonly Route[];
}

function mountedApi(apis: readonly RunningApi[], path: string): RunningApi | undefined {
  let best: RunningApi | undefined;
  for (const entry of apis) {
    const { mount } = entry;
    const mounted = mount === '' || path === mount || path.startsWith(`${mount}/`);
    if (mounted && (best === undefined || mount.length > best.mount.length)) best = entry;
  }
  return best;
}

/** The proxy integration event (payload 1.0 on either kind of API) of an allowed call. */
function proxyEvent(
  running: RunningApi,
  call: GatewayCall,
  body: Buffer,
  authorizer: Record<string, unknown> | undefined,
): APIGatewayProxyEvent {
  const { api } = running;
  const isText = body.length === 0 || !body.includes(0);
  // Payload 1.0's requestContext is the REST authorizer event's.
  const { requestContext } = restAuthorizerEvent(api, call);
  return {
    resource: call.match.route.resource,
    path: call.path,
    httpMethod: call.method,
    ...restHeaders(call.headerLines),
    ...restQuery(call.rawQueryString),
    pathParameters: call.match.pathParameters,
    stageVariables: null,
    requestContext: { ...requestContext, authorizer },
    body: body.length === 0 ? null : isText ? body.toString('utf8') : body.toString('base64'),
    isBase64Encoded: !isText,
  };
}

/** The integration's answer as API Gateway sends it on, or undefined when it is no proxy result. */
function integrationAnswer(
  result: unknown,
): (GatewayAnswer & { readonly bytes: Buffer | string }) | undefined {
  if (!validProxyResult(result)) return undefined;
  const headers: Record<string, string | string[]> = {};
  for (const [name, values] of Object.entries(result.multiValueHeaders ?? {})) {
    headers[name.toLowerCase()] = values.map(String);
  }
  for (const [name, value] of Object.entries(result.headers ?? {}))
    headers[name.toLowerCase()] = String(value);
  headers['content-type'] ??= 'application/json';
  const body = result.body ?? '';
  return {
    status: result.statusCode,
    headers: headers as Record<string, string>,
    body,
    bytes: result.isBase64Encoded ? Buffer.from(body, 'base64') : body,
  };
}

export async function startGateway(options: GatewayOptions): Promise<LocalGateway> {
  const authorizerTimeoutMs = options.authorizerTimeoutMs ?? DEFAULT_AUTHORIZER_TIMEOUT_MS;
  const integrationTimeoutMs = options.integrationTimeoutMs ?? DEFAULT_INTEGRATION_TIMEOUT_MS;
  const byStatus: Record<number, number> = {};
  let requests = 0;
  let authorizerInvocations = 0;
  let backendInvocations = 0;
  let port = 0;
  const apis: RunningApi[] = options.apis.map((api) => ({
    api,
    mount: mountOf(api),
    kind: kindOf(api),
    routes: api.methods.map((entry) => entry.route),
  }));

  const invokeAuthorizer: InvokeAuthorizer = async (authorizer, event) => {
    authorizerInvocations++;
    const answer = await withTimeout(
      () => authorizer(throughJson(event)),
      authorizerTimeoutMs,
      () => new AuthorizerTimeoutError(authorizerTimeoutMs),
    );
    return throughJson(answer);
  };

  async function handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const requestId = randomUUID();
    const receivedAt = Date.now();
    const method = (request.method ?? 'GET').toUpperCase();
    // The path as the client sent it: API Gateway hands integrations and authorizers the path still
    // percent-encoded, with its dot segments and repeated slashes (URL parsing would resolve them).
    const target = request.url ?? '/';
    const fullPath = rawPathOf(target);
    const queryAt = target.indexOf('?');
    const rawQueryString = queryAt < 0 ? '' : target.slice(queryAt + 1);
    const running = mountedApi(apis, fullPath);
    const extendedRequestId = randomBytes(6).toString('base64url');
    const commonHeaders = { 'x-amzn-RequestId': requestId, 'x-amz-apigw-id': extendedRequestId };
    const finish = (answer: GatewayAnswer, bytes: Buffer | string = answer.body) => {
      requests++;
      byStatus[answer.status] = (byStatus[answer.status] ?? 0) + 1;
      response.writeHead(answer.status, {
        ...commonHeaders,
        ...answer.headers,
        'content-length': Buffer.byteLength(bytes),
      });
      response.end(method === 'HEAD' ? undefined : bytes);
      options.onResponse?.({
        method,
        path: fullPath,
        status: answer.status,
        basePath: running?.api.basePath,
        ...(answer.errorType && { errorType: answer.errorType }),
      });
    };

    // Outside every API: a REST API's answer, as a custom domain without a matching mapping gives.
    if (running === undefined) return finish(restRefusal('NO_ROUTE', requestId));
    const { api, kind } = running;
    const stagePath = fullPath.slice(api.basePath.length) || '/';
    const path = fullPath.slice(running.mount.length) || '/';
    const match = findRoute(running.routes, method, path);
    const apiMethod = api.methods.find((entry) => entry.route === match?.route);
    if (match === undefined || apiMethod === undefined) return finish(kind.refusal('NO_ROUTE', requestId));

    let body: Buffer;
    try {
      body = await readBody(request, MAX_PAYLOAD_BYTES);
    } catch (error) {
      if (error instanceof BodyTooLargeError) return finish(kind.refusal('REQUEST_TOO_LARGE', requestId));
      throw error;
    }

    const sourceIp = request.socket.remoteAddress?.replace(/^::ffff:/, '') ?? '127.0.0.1';
    const call: GatewayCall = {
      requestId,
      receivedAt,
      method,
      path,
      stagePath,
      rawQueryString,
      match,
      headerLines: headerLinesOf(request, sourceIp, port),
      sourceIp,
      userAgent: request.headers['user-agent'] ?? null,
      protocol: `HTTP/${request.httpVersion}`,
      domainName: `127.0.0.1:${port}`,
      extendedRequestId,
      requestTime: requestTime(receivedAt),
    };
    let authorizer: Record<string, unknown> | undefined;
    if (apiMethod.authorization === 'CUSTOM') {
      const authorization = await kind.authorize(call, invokeAuthorizer);
      if (!authorization.ok) return finish(authorization.answer);
      authorizer = authorization.context;
    }

    let result: unknown;
    try {
      backendInvocations++;
      const event = proxyEvent(running, call, body, authorizer);
      result = throughJson(
        await withTimeout(
          () => apiMethod.integration(throughJson(event)),
          integrationTimeoutMs,
          () => new IntegrationTimeoutError(`the integration timed out after ${integrationTimeoutMs} ms`),
        ),
      );
    } catch (error) {
      return finish(
        kind.refusal(
          error instanceof IntegrationTimeoutError ? 'INTEGRATION_TIMEOUT' : 'INTEGRATION_FAILURE',
          requestId,
        ),
      );
    }
    const answer = integrationAnswer(result);
    if (answer === undefined) return finish(kind.refusal('INTEGRATION_FAILURE', requestId));
    finish(answer, answer.bytes);
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
