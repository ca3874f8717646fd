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

/** The core's neutral request (with the client's address, `sourceAddress`, when the framework knows it). */
export type AccessRequest = GatewayRequest;

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

/** Values by lower-case name, in an object without a prototype: a header named __proto__ stays a header. */
type HeaderValues = Record<string, string[]>;

function addHeader(values: HeaderValues, name: string, value: string): void {
  const key = name.toLowerCase();
  const known = values[key];
  if (known === undefined) values[key] = [value];
  else known.push(value);
}

function headerValues(headers: HeaderInput): HeaderValues {
  const values: HeaderValues = Object.create(null);
  if (typeof headers.forEach === 'function' && !Array.isArray(headers)) {
    (headers as { forEach(callback: (value: string, name: string) => void): void }).forEach((value, name) => {
      addHeader(values, name, value);
    });
    return values;
  }
  const record = headers as Readonly<Record<string, unknown>>;
  for (const name of Object.keys(record)) {
    const value = record[name];
    if (value === undefined) continue;
    if (Array.isArray(value)) for (const each of value) addHeader(values, name, String(each));
    else addHeader(values, name, String(value));
  }
  return values;
}

/** The bytes of values by name, as a header block or a query string counts them (`separator`: per value). */
function parameterBytes(parameters: Readonly<Record<string, readonly string[]>>, separator: number): number {
  let bytes = 0;
  for (const name of Object.keys(parameters)) {
    for (const value of parameters[name] as readonly string[])
      bytes += name.length + value.length + separator;
  }
  return bytes;
}

/** Visible ASCII only: a raw space, control character or non-ASCII byte is no path a client sends. */
const PATH_CHARACTERS = /^\/[\x21-\x7e]*$/;

/** Whether the path is one a client sends: visible ASCII from `/`, every percent escape decodable. */
export function isReadablePath(path: string): boolean {
  if (!PATH_CHARACTERS.test(path)) return false;
  // Without a `%` there is no escape to decode (nearly every path).
  if (!path.includes('%')) return true;
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
  if (parameterBytes(request.headers, 4) > MAX_HEADER_BYTES) return 'headers_too_large';
  if (parameterBytes(request.query, 2) > MAX_QUERY_STRING_BYTES) return 'query_too_long';
  return undefined;
}

/** A scheme and authority: `http://host:port`. */
const ABSOLUTE_URL_START = /^[a-z][a-z0-9+.-]*:\/\/[^/?#]*/i;

/** The path and raw query of a request target; an absolute URL (a proxy's request line) gives its path. */
function splitTarget(url: string): { readonly path: string; readonly query: string } {
  // A target that starts with `/` (an origin-form, as Node hands it over) names no scheme.
  const absolute = url.startsWith('/') ? null : ABSOLUTE_URL_START.exec(url);
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
  const method = raw.method.toUpperCase();
  const parameters = parsedQueryString(query);
  const headers = headerValues(raw.headers);
  const request: AccessRequest = raw.clientAddress
    ? { method, path, query: parameters, headers, sourceAddress: raw.clientAddress }
    : { method, path, query: parameters, headers };
  const problem = problemOf(request);
  return problem === undefined ? { ok: true, request } : { ok: false, problem };
}
