/**
 * Cross-origin (CORS) settings of a protected REST API, and the headers that follow from them.
 *
 * API Gateway gives a REST API no CORS of its own: a preflight is an OPTIONS method with a MOCK integration
 * (what `defaultCorsPreflightOptions` creates), a Lambda proxy integration sets the headers on its own
 * answers, and the gateway's own answers (401, 403, 5xx) carry only the static headers their gateway
 * responses name. This module is the data all three need; it imports nothing from aws-cdk-lib.
 */

import type { HeaderMap } from '../credentials';
import { ConfigError, knownFields, nonEmpty } from './config';

export const ANY_ORIGIN = '*';

export interface CorsSettings {
  /** `["*"]`, or the exact origins (`scheme://host[:port]`) a browser page may call the API from. */
  readonly allowOrigins: readonly string[];
}

/** What a preflight answers, in the shape of aws-cdk-lib's `CorsOptions`. */
export interface CorsPreflightOptions {
  readonly allowOrigins: readonly string[];
  readonly allowHeaders: readonly string[];
  readonly allowMethods: readonly string[];
}

/** aws-cdk-lib's `Cors.DEFAULT_HEADERS`: what a preflight allows when the API names nothing else. */
const DEFAULT_ALLOW_HEADERS = [
  'Content-Type',
  'X-Amz-Date',
  'Authorization',
  'X-Api-Key',
  'X-Amz-Security-Token',
  'X-Amz-User-Agent',
];

/** aws-cdk-lib's `Cors.ALL_METHODS`. */
const ALL_METHODS = ['OPTIONS', 'GET', 'PUT', 'POST', 'DELETE', 'PATCH', 'HEAD'];

function origin(setting: string, value: unknown): string {
  const text = nonEmpty(setting, value);
  if (text === ANY_ORIGIN) return text;
  let url: URL | undefined;
  try {
    url = new URL(text);
  } catch {
    url = undefined;
  }
  // A browser sends the origin as URL.origin spells it: lower-case host, no path, no trailing slash.
  if (url === undefined || !['http:', 'https:'].includes(url.protocol) || url.origin !== text) {
    throw new ConfigError(
      setting,
      `must be "*" or an origin exactly as browsers send it, like https://portal.example.com (got ${JSON.stringify(text)})`,
    );
  }
  return text;
}

/** Validates a `cors` setting; undefined (the default) means the API answers no cross-origin call. */
export function parseCors(setting: string, value: unknown): CorsSettings | undefined {
  if (value === undefined) return undefined;
  const fields = knownFields(setting, value, ['allowOrigins']);
  const origins = fields.allowOrigins;
  if (!Array.isArray(origins) || origins.length === 0) {
    throw new ConfigError(
      `${setting}.allowOrigins`,
      'must list at least one origin, like ["https://portal.example.com"], or be ["*"]',
    );
  }
  const allowOrigins = origins.map((entry, i) => origin(`${setting}.allowOrigins[${i}]`, entry));
  if (allowOrigins.includes(ANY_ORIGIN) && allowOrigins.length > 1) {
    throw new ConfigError(`${setting}.allowOrigins`, 'cannot mix "*" with specific origins');
  }
  return { allowOrigins };
}

/**
 * The preflight of an API whose credentials travel in `credentialHeaders`: a browser must be allowed to
 * send them, on top of API Gateway's default list.
 */
export function corsPreflightOptions(
  cors: CorsSettings,
  credentialHeaders: readonly string[],
): CorsPreflightOptions {
  const allowHeaders = [...DEFAULT_ALLOW_HEADERS];
  for (const name of credentialHeaders) {
    if (!allowHeaders.some((known) => known.toLowerCase() === name.toLowerCase())) allowHeaders.push(name);
  }
  return { allowOrigins: cors.allowOrigins, allowHeaders, allowMethods: ALL_METHODS };
}

/** The Origin header of a request, its name matched case-insensitively. */
export function requestOrigin(headers: HeaderMap): string | undefined {
  const entry = Object.entries(headers ?? {}).find(([name]) => name.toLowerCase() === 'origin');
  return entry?.[1];
}

/**
 * The headers a backend puts on its answer to a request: the caller's origin when it is allowed (or `*`),
 * with `Vary: Origin` whenever the answer depends on it. Nothing when CORS is off.
 */
export function corsResponseHeaders(
  cors: CorsSettings | undefined,
  requestHeaders: HeaderMap,
): Record<string, string> {
  if (cors === undefined) return {};
  if (cors.allowOrigins.includes(ANY_ORIGIN)) return { 'access-control-allow-origin': ANY_ORIGIN };
  const caller = requestOrigin(requestHeaders);
  return caller !== undefined && cors.allowOrigins.includes(caller)
    ? { 'access-control-allow-origin': caller, vary: 'Origin' }
    : { vary: 'Origin' };
}

/**
 * The headers of the gateway's own answers (401, 403, 404, 5xx). A gateway response can only carry static
 * values, so with several origins only the first can read a refusal; `*` or a single origin avoids that.
 */
export function gatewayResponseCorsHeaders(cors: CorsSettings | undefined): Record<string, string> {
  if (cors === undefined) return {};
  const first = cors.allowOrigins[0] as string;
  return first === ANY_ORIGIN
    ? { 'access-control-allow-origin': ANY_ORIGIN }
    : { 'access-control-allow-origin': first, vary: 'Origin' };
}
