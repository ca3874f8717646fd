/**
 * A call's headers and query string in the REST shape API Gateway hands REST authorizers and proxy
 * integrations: single-value maps (the last value of a repeated name wins) beside multi-value maps.
 */
import type { IdentitySource } from '../core/credentials';

export interface RestHeaders {
  readonly headers: Record<string, string>;
  readonly multiValueHeaders: Record<string, string[]>;
}

export interface RestQuery {
  readonly queryStringParameters: Record<string, string> | null;
  readonly multiValueQueryStringParameters: Record<string, string[]> | null;
}

/** Header names keep the client's first spelling of each name. */
export function restHeaders(lines: readonly (readonly [string, string])[]): RestHeaders {
  const headers: Record<string, string> = {};
  const multiValueHeaders: Record<string, string[]> = {};
  const spelling = new Map<string, string>();
  for (const [name, value] of lines) {
    const key = spelling.get(name.toLowerCase()) ?? name;
    spelling.set(name.toLowerCase(), key);
    headers[key] = value;
    multiValueHeaders[key] = [...(multiValueHeaders[key] ?? []), value];
  }
  return { headers, multiValueHeaders };
}

export function restQuery(rawQueryString: string): RestQuery {
  const single: Record<string, string> = {};
  const multi: Record<string, string[]> = {};
  for (const [name, value] of new URLSearchParams(rawQueryString)) {
    single[name] = value;
    multi[name] = [...(multi[name] ?? []), value];
  }
  const any = Object.keys(single).length > 0;
  return { queryStringParameters: any ? single : null, multiValueQueryStringParameters: any ? multi : null };
}

/** API Gateway refuses a call whose identity source is missing or empty before invoking the authorizer. */
export function hasIdentitySource(
  lines: readonly (readonly [string, string])[],
  rawQueryString: string,
  source: IdentitySource,
): boolean {
  if (source.location === 'query') {
    // The single-value map's value: the last one.
    const value = new URLSearchParams(rawQueryString).getAll(source.name).at(-1);
    return value !== undefined && value.trim() !== '';
  }
  const wanted = source.name.toLowerCase();
  return lines.some(([name, value]) => name.toLowerCase() === wanted && value.trim() !== '');
}
