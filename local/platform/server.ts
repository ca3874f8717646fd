/** The HTTP face of the local platform: routes, parameter reading, and the platform's common headers. */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { BodyTooLargeError, readBody } from '../http-server';
import { ADMIN_PREFIX, type ApplicationChangeListener, adminEndpoint } from './admin';
import type { PlatformModel } from './model';
import {
  addParam,
  emptyParamHash,
  MalformedParamsError,
  type ParamHash,
  type Params,
  parseUrlEncoded,
} from './params';
import {
  type Answer,
  ApiError,
  type AuthKind,
  authorizeCall,
  checkReportContentType,
  type Extensions,
  parseExtensions,
  type ReportError,
  reportCall,
} from './transactor';
import { XML_CONTENT_TYPE } from './xml';

/** Requests per endpoint, every answer counted; `transactions` counts those accepted with a 202. */
export interface PlatformStats {
  authorize: number;
  authrep: number;
  report: number;
  transactions: number;
}

export interface PlatformState {
  readonly model: PlatformModel;
  readonly now: () => number;
  readonly stats: PlatformStats;
  readonly reportErrors: ReportError[];
  /** What GET /status answers. */
  readonly statusJson: string;
  /** Hears each application change made through the Account Management API. */
  readonly onApplicationChange: ApplicationChangeListener;
}

/** 1000 transactions with long keys stay far below this. */
const MAX_BODY_BYTES = 8 * 1024 * 1024;
const COMMON_HEADERS = {
  'Access-Control-Allow-Origin': '*',
  'Access-Control-Expose-Headers': 'ETag, Link, 3scale-rejection-reason',
  'X-Content-Type-Options': 'nosniff',
};
const PREFLIGHT_HEADERS = {
  'Access-Control-Max-Age': '86400',
  'Access-Control-Allow-Methods': 'GET, POST, PATCH, PUT, DELETE',
  'Access-Control-Allow-Headers':
    'Authorization, Accept-Encoding, Content-Type, Cache-Control, Accept, If-Match, If-Modified-Since, ' +
    'If-None-Match, If-Unmodified-Since, X-Requested-With, X-HTTP-Method-Override, 3scale-options',
};
const NO_EXTENSIONS: Extensions = {
  noBody: false,
  rejectionReasonHeader: false,
  limitHeaders: false,
  hierarchy: false,
};

function send(response: ServerResponse, answer: Answer, contentType = XML_CONTENT_TYPE): void {
  response.writeHead(answer.status, {
    ...COMMON_HEADERS,
    'Content-Type': contentType,
    'Content-Length': Buffer.byteLength(answer.body),
    ...answer.headers,
  });
  response.end(answer.body);
}

/** Node keeps the raw bytes of the request target as latin1 characters. */
function queryBytes(url: string): Buffer {
  const start = url.indexOf('?');
  return Buffer.from(start < 0 ? '' : url.slice(start + 1), 'latin1');
}

function optionsHeader(request: IncomingMessage): Params | undefined {
  const header = request.headers['3scale-options'];
  if (typeof header !== 'string') return undefined;
  try {
    return parseUrlEncoded(Buffer.from(header, 'latin1'));
  } catch (error) {
    if (error instanceof MalformedParamsError) return undefined;
    throw error;
  }
}

async function formBody(
  request: IncomingMessage,
  kind: 'multipart' | 'urlencoded',
  into: ParamHash,
): Promise<Params> {
  const body = await readBody(request, MAX_BODY_BYTES);
  if (kind === 'urlencoded') return parseUrlEncoded(body, into);
  let form: FormData;
  try {
    form = await new Response(body, {
      headers: { 'content-type': request.headers['content-type'] ?? '' },
    }).formData();
  } catch {
    throw new MalformedParamsError();
  }
  for (const [name, value] of form)
    addParam(into, name, typeof value === 'string' ? value : await value.text());
  return { values: into, validUtf8: true };
}

function authorizeEndpoint(state: PlatformState, kind: AuthKind, request: IncomingMessage): Answer {
  state.stats[kind] += 1;
  const params = parseUrlEncoded(queryBytes(request.url ?? ''));
  const extensions = parseExtensions(optionsHeader(request), params.values);
  try {
    return authorizeCall(state.model, kind, params, extensions, state.now());
  } catch (error) {
    if (error instanceof ApiError) return error.answer(extensions);
    throw error;
  }
}

async function reportEndpoint(state: PlatformState, request: IncomingMessage): Promise<Answer> {
  state.stats.report += 1;
  const extensions = parseExtensions(optionsHeader(request), emptyParamHash());
  try {
    const kind = checkReportContentType(request.headers['content-type']);
    const query = parseUrlEncoded(queryBytes(request.url ?? ''));
    const params = await formBody(request, kind, query.values);
    const merged = { values: params.values, validUtf8: query.validUtf8 && params.validUtf8 };
    const result = reportCall(state.model, merged, state.now());
    state.stats.transactions += result.accepted;
    if (result.error !== undefined) state.reportErrors.push(result.error);
    return result.answer;
  } catch (error) {
    if (error instanceof ApiError) return error.answer(extensions);
    throw error;
  }
}

async function route(
  state: PlatformState,
  request: IncomingMessage,
  response: ServerResponse,
): Promise<void> {
  const path = (request.url ?? '').split('?', 1)[0];
  const method = request.method;
  if (method === 'OPTIONS') {
    send(response, { status: 204, headers: PREFLIGHT_HEADERS, body: '' });
  } else if (method === 'GET' && path === '/transactions/authorize.xml') {
    send(response, authorizeEndpoint(state, 'authorize', request));
  } else if (method === 'GET' && path === '/transactions/authrep.xml') {
    send(response, authorizeEndpoint(state, 'authrep', request));
  } else if (method === 'POST' && path === '/transactions.xml') {
    send(response, await reportEndpoint(state, request));
  } else if (path.startsWith(ADMIN_PREFIX)) {
    send(
      response,
      await adminEndpoint(state.model, request, state.onApplicationChange, state.now),
      'application/xml',
    );
  } else if (method === 'GET' && path === '/status') {
    send(response, { status: 200, headers: {}, body: state.statusJson }, 'application/json');
  } else {
    send(response, { status: 404, headers: {}, body: '' });
  }
}

/** The request listener. Unreadable parameters answer 400 bad_request, an oversized body 413. */
export function platformListener(state: PlatformState) {
  return (request: IncomingMessage, response: ServerResponse): void => {
    route(state, request, response).catch((error: unknown) => {
      if (error instanceof MalformedParamsError) {
        send(response, new ApiError(400, 'bad_request', error.message).answer(NO_EXTENSIONS));
      } else if (error instanceof BodyTooLargeError) {
        send(response, { status: 413, headers: { Connection: 'close' }, body: '' });
      } else {
        console.error('local platform: unexpected error', error);
        send(response, { status: 500, headers: {}, body: '' });
      }
    });
  };
}
