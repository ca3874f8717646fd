/**
 * The request the plugin decides: the core's neutral request (method, path, query, headers) plus the
 * client's address, built from what a framework hands over. Bounded before anything else runs: a path,
 * query or header block too large, or a path that cannot be read, is refused with a 4xx before any
 * Redis or platform call. Every check is linear in its input.
 */
import { type GatewayRequest, MAX_QUERY_STRING_BYTES, parsedQueryString } from '../core/decision/request';
import type { RequestProblem } from './answers';

/** Longest path read (API Gateway's own request line bound is 8 KiB too). */
export const MAX_PATH_BYTES = 8 * 1024;
/** Largest header block read, names and values (Node's own default bound, 16 KiB). */
export const MAX_HEADER_BYTES = 16 * 1024;

/** The core's neutral request, with the address of the client when the framework knows it. */
export interface AccessRequest extends GatewayRequest {
  readonly clientAddress?: string;
}

/** Header values as Node (`IncomingHttpHeaders`) or a Fetch `Headers` carries them. */
export type HeaderInput =
  | Readonly<Record<string, string | readonly string[] | number | undefined>>
  | { forEach(callback: (value: string, name: string) => void): void };

/** What a framework hands over: the method, the request target (path and query) and the headers. */
export interface RawRequest {
  readonly method: string;
  /** The request target as received: `/v1/words/hello?lang=en` (an absolute URL is read too). */
  readonly url: string;
  readonly headers: HeaderInput;
  readonly clientAddress?: string;
}

export type ReadRequest =
  | { readonly ok: true; readonly request: AccessRequest }
  | { readonly ok: false; readonly problem: RequestProblem };

function headerValues(headers: HeaderInput): Record<string, string[]> {
  const values = new Map<string, string[]>();
  const add = (name: string, value: string) => {
    const key = name.toLowerCase();
    const known = values.get(key);
    if (known === undefined) values.set(key, [value]);
    else known.push(value);
  };
  if (typeof headers.forEach === 'function' && !Array.isArray(headers)) {
    (headers as { forEach(callback: (value: string, name: string) => void): void }).forEach((value, name) => {
      add(name, value);
    });
  } else {
    for (const [name, value] of Object.entries(headers as Record<string, unknown>)) {
      if (value === undefined) continue;
      if (Array.isArray(value)) for (const each of value) add(name, String(each));
      else add(name, String(value));
    }
  }
  return Object.fromEntries(values);
}

function headerBytes(headers: Readonly<Record<string, readonly string[]>>): number {
  let bytes = 0;
  for (const [name, values] of Object.entries(headers)) {
    for (const value of values) bytes += name.length + value.length + 4;
  }
  return bytes;
}

/** Visible ASCII only: a raw space, control character or non-ASCII byte is no path a client sends. */
const PATH_CHARACTERS = /^\/[\x21-\x7e]*$/;

/** Whether the path is one a client sends: visible ASCII from `/`, every percent escape decodable. */
export function isReadablePath(path: string): boolean {
  if (!PATH_CHARACTERS.test(path)) return false;
  try {
    decodeURIComponent(path);
    return true;
  } catch {
    return false;
  }
}

/** The problem of a neutral request the plugin refuses to read, or undefined when it reads it. */
export function problemOf(request: GatewayRequest): RequestProblem | undefined {
  if (request.path.length > MAX_PATH_BYTES) return 'path_too_long';
  if (!isReadablePath(request.path)) return 'unreadable_path';
  if (headerBytes(request.headers) > MAX_HEADER_BYTES) return 'headers_too_large';
  let queryBytes = 0;
  for (const [name, values] of Object.entries(request.query)) {
    for (const value of values) queryBytes += name.length + value.length + 2;
  }
  if (queryBytes > MAX_QUERY_STRING_BYTES) return 'query_too_long';
  return undefined;
}

/** The path and raw query of a request target; an absolute URL (a proxy's request line) gives its path. */
function splitTarget(url: string): { readonly path: string; readonly query: string } {
  const absolute = /^[a-z][a-z0-9+.-]*:\/\/[^/?#]*/i.exec(url);
  const target = absolute ? url.slice(absolute[0].length) || '/' : url;
  const hash = target.indexOf('#');
  const withoutHash = hash === -1 ? target : target.slice(0, hash);
  const mark = withoutHash.indexOf('?');
  return mark === -1
    ? { path: withoutHash, query: '' }
    : { path: withoutHash.slice(0, mark), query: withoutHash.slice(mark + 1) };
}

/** The neutral request of what a framework handed over, or the problem that refuses it. */
export function readRequest(raw: RawRequest): ReadRequest {
  const { path, query } = splitTarget(raw.url);
  if (path.length > MAX_PATH_BYTES) return { ok: false, problem: 'path_too_long' };
  if (query.length > MAX_QUERY_STRING_BYTES) return { ok: false, problem: 'query_too_long' };
  const request: AccessRequest = {
    method: raw.method.toUpperCase(),
    path,
    query: parsedQueryString(query),
    headers: headerValues(raw.headers),
    ...(raw.clientAddress !== undefined && { clientAddress: raw.clientAddress }),
  };
  const problem = problemOf(request);
  return problem === undefined ? { ok: true, request } : { ok: false, problem };
}
