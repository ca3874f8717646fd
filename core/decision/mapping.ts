/**
 * Mapping rules evaluated as the 3scale gateway (APIcast, gateway/src/apicast/mapping_rule.lua) does:
 * - the pattern matches from the start of the request path; without a trailing `$` it is a prefix
 *   match (`/v1/words` also matches `/v1/words/x` and `/v1/wordsmith`);
 * - `{name}` matches one path segment: one or more of `[\w\-.~%!$&'()*+,;=@:]` (RFC 3986 pchar), so
 *   never a `/`;
 * - the path is the one the backend sees (normalizedPath): percent-decoded once, dot segments
 *   resolved, repeated slashes merged, as nginx normalizes `ngx.var.uri`, then re-escaped as APIcast
 *   does before matching, so `/v1/%70remium` is `/v1/premium` and no spelling evades a rule;
 * - repeated slashes in the pattern count as one too;
 * - a query part `?a=1&b={x}` must be matched too: a literal value equals one of the request's values
 *   (APIcast compares the last one only, so `?a=2&a=1` would evade a rule on `a=1`), a `{x}` value only
 *   needs the parameter to be present;
 * - method `ANY` matches every method;
 * - every matching rule adds its delta to its metric; a matching rule marked `last` ends the matching
 *   (APIcast's mapping_rules_matcher.lua).
 * One deliberate difference: APIcast escapes only `.` and leaves other regular-expression characters
 * of a pattern live; here every character but `{name}` and the trailing `$` is literal.
 */

import type { Usage } from '../platform/types';
import type { MappingRule } from '../settings/config';
import type { GatewayRequest, ParameterValues } from './request';

/** The usage of a request when no mapping rule is configured. */
export const DEFAULT_USAGE: Usage = { hits: 1 };

const SEGMENT = "[\\w\\-.~%!$&'()*+,;=@:]+";
const PLACEHOLDER = /\{[^}]+\}/g;
const QUERY_PLACEHOLDER = /^\{[-\w]+\}$/;

export type QueryParameters = ParameterValues;

/** What mapping rules read of a request. */
export type MappedRequest = Pick<GatewayRequest, 'method' | 'path' | 'query'>;

interface CompiledRule {
  readonly method: string;
  readonly path: RegExp;
  readonly query: readonly (readonly [name: string, expected: string])[];
  readonly metric: string;
  readonly delta: number;
  readonly last: boolean;
}

function escapeRegExp(text: string): string {
  return text.replace(/[\\^$.*+?()[\]{}|/]/g, '\\$&');
}

function mergeSlashes(path: string): string {
  return path.replace(/\/\/+/g, '/');
}

const HEX = /^[0-9A-Fa-f]{2}$/;
/** What decoding changes: a `%`, or a character beyond ASCII (its UTF-8 bytes). */
const DECODED_AWAY = /[%\u0080-\uffff]/;
/** What resolving changes: a repeated slash, or a `.` or `..` segment. */
const RESOLVED_AWAY = /\/\/|\/\.\.?(?:\/|$)/;
/** What escaping changes (escapedForMatching): a character beyond visible ASCII, `#`, `%` or `?`. */
const ESCAPED = /[^\x21-\x7e]|[#%?]/;

/**
 * The path percent-decoded once, as a latin1 string of its bytes. A path of ASCII without a `%` (nearly
 * every one) is its own decoding: no bytes to build.
 */
function percentDecoded(path: string): string {
  if (!DECODED_AWAY.test(path)) return path;
  return Buffer.from(percentDecodedBytes(path)).toString('latin1');
}

/** Percent-escapes decoded once into bytes; a `%` not followed by two hex digits stays a `%`. */
function percentDecodedBytes(path: string): number[] {
  const input = Buffer.from(path, 'utf8');
  const bytes: number[] = [];
  for (let i = 0; i < input.length; i++) {
    const hex = input.subarray(i + 1, i + 3).toString('latin1');
    if (input[i] === 0x25 && HEX.test(hex)) {
      bytes.push(Number.parseInt(hex, 16));
      i += 2;
    } else {
      bytes.push(input[i] as number);
    }
  }
  return bytes;
}

/** `.` and `..` segments resolved (a `..` above the root stays at the root), repeated slashes merged. */
function resolvedSegments(path: string): string {
  if (!RESOLVED_AWAY.test(path)) return path;
  const segments: string[] = [];
  const parts = path.split('/').filter((part, i) => i === 0 || part !== '');
  for (const part of parts.slice(1)) {
    if (part === '.') continue;
    if (part === '..') segments.pop();
    else segments.push(part);
  }
  const last = path.split('/').pop();
  const trailing = path.endsWith('/') || last === '.' || last === '..';
  return `/${segments.join('/')}${trailing && segments.length > 0 ? '/' : ''}`;
}

/** What nginx's ngx_escape_uri escapes in a URI (type 0): controls, space, `#`, `%`, `?` and non-ASCII. */
function escapedForMatching(latin1Path: string): string {
  if (!ESCAPED.test(latin1Path)) return latin1Path;
  let escaped = '';
  for (const char of latin1Path) {
    const byte = char.charCodeAt(0);
    escaped +=
      byte <= 0x20 || byte >= 0x7f || char === '#' || char === '%' || char === '?'
        ? `%${byte.toString(16).toUpperCase().padStart(2, '0')}`
        : char;
  }
  return escaped;
}

/**
 * The request path as the platform's gateway matches rules against it: nginx's `$uri` (percent-decoded
 * once, an encoded `/` included, so `/v1%2Fpremium` is `/v1/premium`; dot segments resolved; repeated
 * slashes merged), escaped again the way APIcast escapes it before matching (gateway/src/apicast/proxy.lua).
 * Decoding once matches what the backend decodes: API Gateway hands the authorizer the path as the client
 * sent it, still percent-encoded.
 */
export function normalizedPath(rawPath: string): string {
  const decoded = percentDecoded(rawPath);
  return escapedForMatching(resolvedSegments(decoded.startsWith('/') ? decoded : `/${decoded}`));
}

function compilePath(pattern: string): RegExp {
  const anchored = pattern.endsWith('$');
  const body = mergeSlashes(anchored ? pattern.slice(0, -1) : pattern);
  let source = '';
  let last = 0;
  for (const placeholder of body.matchAll(PLACEHOLDER)) {
    source += escapeRegExp(body.slice(last, placeholder.index)) + SEGMENT;
    last = placeholder.index + placeholder[0].length;
  }
  source += escapeRegExp(body.slice(last));
  return new RegExp(`^${source}${anchored ? '$' : ''}`);
}

function decodeQueryComponent(text: string): string {
  try {
    return decodeURIComponent(text.replace(/\+/g, ' '));
  } catch {
    return text;
  }
}

function compileQuery(queryPart: string): [string, string][] {
  return queryPart
    .split('&')
    .filter((pair) => pair !== '')
    .map((pair) => {
      const at = pair.indexOf('=');
      const name = at < 0 ? pair : pair.slice(0, at);
      const value = at < 0 ? '' : pair.slice(at + 1);
      return [decodeQueryComponent(name), decodeQueryComponent(value)];
    });
}

function compileRule(rule: MappingRule): CompiledRule {
  const at = rule.pattern.indexOf('?');
  const pathPattern = at < 0 ? rule.pattern : rule.pattern.slice(0, at);
  return {
    method: rule.method.toUpperCase(),
    path: compilePath(pathPattern),
    query: at < 0 ? [] : compileQuery(rule.pattern.slice(at + 1)),
    metric: rule.metric,
    delta: rule.delta,
    last: rule.last === true,
  };
}

function queryMatches(expected: CompiledRule['query'], query: QueryParameters): boolean {
  return expected.every(([name, value]) => {
    const given = query[name];
    if (QUERY_PLACEHOLDER.test(value)) return given !== undefined && given.length > 0;
    return given?.includes(value) === true;
  });
}

export interface UsageMapper {
  /** The usage the rules assign to the request; undefined when no rule matches. */
  usageOf(request: MappedRequest): Usage | undefined;
}

/** Compiles the rules once (at start-up); with no rules every request counts one hit. */
export function compileMappingRules(rules: readonly MappingRule[]): UsageMapper {
  const compiled = rules.map(compileRule);
  return {
    usageOf(request) {
      if (compiled.length === 0) return DEFAULT_USAGE;
      const method = request.method.toUpperCase();
      const path = normalizedPath(request.path);
      const usage: Record<string, number> = {};
      let matched = false;
      for (const rule of compiled) {
        if (rule.method !== 'ANY' && rule.method !== method) continue;
        if (!rule.path.test(path) || !queryMatches(rule.query, request.query)) continue;
        matched = true;
        usage[rule.metric] = (usage[rule.metric] ?? 0) + rule.delta;
        if (rule.last) break;
      }
      return matched ? usage : undefined;
    },
  };
}
