/**
 * The developer portal behind API Gateway (a Lambda proxy integration of payload 1.0 on REST and HTTP
 * APIs alike): `GET /portal` and `ANY /portal/{proxy+}` on the protected API's own origin, outside the
 * authorizer. The event becomes the core's PortalRequest; Swagger UI's files and the document under
 * `/portal/docs/` come from the docs site handler, so the portal's docs need no other route.
 */
import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import { errorMessage, type LogPort } from '../../core/observability/observability';
import { CREDENTIALS_FILE } from '../../core/portal/docs-routes';
import type { PortalRequest, PortalResponse } from '../../core/portal/http';
import type { PortalHandler } from '../../core/portal/portal';
import type { DocsHandler } from '../docs/handler';
import { PORTAL_PATH } from './env';

/** The portal's methods, as `METHOD /resource` routes of the API. */
export const PORTAL_ROUTES: readonly string[] = [`GET ${PORTAL_PATH}`, `ANY ${PORTAL_PATH}/{proxy+}`];

export interface PortalHandlerOptions {
  readonly portal: () => Promise<PortalHandler>;
  /** Serves Swagger UI's files and `swagger.json` under `/portal/docs/`. */
  readonly docs: () => DocsHandler;
  readonly logger: LogPort;
  /**
   * The portal's path as the browser sees it; default: taken from the event (`requestContext.path`, the
   * stage or a custom domain's base path included).
   */
  readonly base?: string;
}

function lowerCaseHeaders(event: APIGatewayProxyEvent): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(event.headers ?? {})) {
    if (value !== undefined) headers[name.toLowerCase()] = value;
  }
  return headers;
}

export function portalRequest(event: APIGatewayProxyEvent, base?: string): PortalRequest {
  const path = event.path.startsWith(PORTAL_PATH) ? event.path.slice(PORTAL_PATH.length) : event.path;
  const fullPath = event.requestContext?.path ?? event.path;
  const raw = event.body ?? '';
  const query: Record<string, string> = {};
  for (const [name, value] of Object.entries(event.queryStringParameters ?? {})) {
    if (value !== undefined) query[name] = value;
  }
  return {
    method: event.httpMethod,
    base: base ?? (fullPath.endsWith(path) ? fullPath.slice(0, fullPath.length - path.length) : PORTAL_PATH),
    path,
    query,
    headers: lowerCaseHeaders(event),
    body: event.isBase64Encoded ? Buffer.from(raw, 'base64').toString('utf8') : raw,
    sourceAddress: event.requestContext?.identity?.sourceIp ?? '',
  };
}

export function proxyResult(response: PortalResponse): APIGatewayProxyResult {
  return {
    statusCode: response.status,
    headers: response.headers,
    ...(response.cookies.length > 0 && { multiValueHeaders: { 'Set-Cookie': [...response.cookies] } }),
    body: response.body,
  };
}

const DOCS_PREFIX = `${PORTAL_PATH}/docs/`;

export function createPortalHandler(options: PortalHandlerOptions) {
  return async (event: APIGatewayProxyEvent): Promise<APIGatewayProxyResult> => {
    if (event.httpMethod === 'GET' && event.path.startsWith(DOCS_PREFIX)) {
      const file = event.path.slice(DOCS_PREFIX.length);
      if (file !== CREDENTIALS_FILE) return options.docs()({ ...event, pathParameters: { file } });
    }
    try {
      return proxyResult(await (await options.portal())(portalRequest(event, options.base)));
    } catch (error) {
      options.logger.error('portal failed', { error: errorMessage(error) });
      return {
        statusCode: 503,
        headers: { 'content-type': 'application/json', 'cache-control': 'no-store' },
        body: JSON.stringify({ message: 'The portal is unavailable; try again later.' }),
      };
    }
  };
}
