/**
 * API Gateway resources and methods ("GET /v1/words/{word}.json", "ANY /{proxy+}") and how a request path
 * finds one: the most specific resource wins, segment by segment (literal, then a template with literal
 * text around its parameter, then a whole-segment parameter, then a greedy `{name+}`).
 */
import { ConfigError } from './config-error';

const METHODS = new Set(['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD', 'OPTIONS', 'ANY']);
const PARAMETER = /\{([A-Za-z0-9_-]+)\}/g;
const GREEDY = /^\{([A-Za-z0-9_-]+)\+\}$/;
const SEGMENT = /^[A-Za-z0-9._~!$&'()*+,;=:@{}-]+$/;

/** Literal beats partial template beats whole parameter beats greedy. */
enum Specificity {
  Greedy = 0,
  Parameter = 1,
  Template = 2,
  Literal = 3,
}

type Segment =
  | { readonly kind: Specificity.Literal; readonly text: string }
  | {
      readonly kind: Specificity.Parameter | Specificity.Template;
      readonly names: string[];
      readonly regex: RegExp;
    }
  | { readonly kind: Specificity.Greedy; readonly name: string };

export interface Route {
  readonly method: string;
  /** The resource template, as API Gateway's `resource` and `requestContext.resourcePath` carry it. */
  readonly resource: string;
  readonly segments: readonly Segment[];
}

export interface RouteMatch {
  readonly route: Route;
  /** Decoded path parameter values; null when the resource has none (as API Gateway sends it). */
  readonly pathParameters: Readonly<Record<string, string>> | null;
}

function escapeRegex(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

function parseSegment(text: string, setting: string, isLast: boolean): Segment {
  const greedy = GREEDY.exec(text);
  if (greedy) {
    if (!isLast) throw new ConfigError(setting, `may use a greedy {${greedy[1]}+} only as its last segment`);
    return { kind: Specificity.Greedy, name: greedy[1] as string };
  }
  if (!SEGMENT.test(text) || text.includes('+}')) {
    throw new ConfigError(setting, `has an invalid path segment "${text}"`);
  }
  const names = [...text.matchAll(PARAMETER)].map((match) => match[1] as string);
  const literalText = text.replace(PARAMETER, '');
  if (literalText.includes('{') || literalText.includes('}')) {
    throw new ConfigError(setting, `has unbalanced braces in "${text}"`);
  }
  if (names.length === 0) return { kind: Specificity.Literal, text };
  const source = text
    .split(PARAMETER)
    .map((part, i) => (i % 2 === 1 ? '([^/]+?)' : escapeRegex(part)))
    .join('');
  return {
    kind: names.length === 1 && literalText === '' ? Specificity.Parameter : Specificity.Template,
    names,
    regex: new RegExp(`^${source}$`),
  };
}

function decode(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}

function pathSegments(path: string): string[] {
  return path.split('/').filter((segment, i, all) => !(segment === '' && (i === 0 || i === all.length - 1)));
}

/** Parses "METHOD /resource"; `setting` names the entry in errors. */
export function parseRoute(text: unknown, setting: string): Route {
  if (typeof text !== 'string')
    throw new ConfigError(setting, 'must be a string like "GET /v1/words/{word}.json"');
  const [method, resource, ...rest] = text.trim().split(/\s+/);
  if (method === undefined || resource === undefined || rest.length > 0) {
    throw new ConfigError(setting, `must be "METHOD /resource" (got ${JSON.stringify(text)})`);
  }
  const upper = method.toUpperCase();
  if (!METHODS.has(upper)) throw new ConfigError(setting, `has an unknown HTTP method ${method}`);
  if (!resource.startsWith('/'))
    throw new ConfigError(setting, `resource must start with / (got ${resource})`);
  const parts = pathSegments(resource);
  const segments = parts.map((part, i) => parseSegment(part, setting, i === parts.length - 1));
  const names = segments.flatMap((segment) =>
    segment.kind === Specificity.Greedy
      ? [segment.name]
      : segment.kind === Specificity.Literal
        ? []
        : segment.names,
  );
  if (new Set(names).size !== names.length) throw new ConfigError(setting, 'repeats a path parameter name');
  return { method: upper, resource: parts.length === 0 ? '/' : `/${parts.join('/')}`, segments };
}

/** Why API Gateway would not accept the route as a resource, or undefined when it would. */
export function apiGatewayProblem(route: Route): string | undefined {
  return route.segments.some((segment) => segment.kind === Specificity.Template)
    ? `${route.method} ${route.resource}: API Gateway takes whole-segment path parameters only (like /v1/words/{word})`
    : undefined;
}

function matchSegments(route: Route, parts: readonly string[]): Record<string, string> | undefined {
  const parameters: Record<string, string> = {};
  for (let i = 0; i < route.segments.length; i++) {
    const segment = route.segments[i] as Segment;
    if (segment.kind === Specificity.Greedy) {
      if (i >= parts.length) return undefined;
      parameters[segment.name] = decode(parts.slice(i).join('/'));
      return parameters;
    }
    const part = parts[i];
    if (part === undefined) return undefined;
    if (segment.kind === Specificity.Literal) {
      if (decode(part) !== segment.text) return undefined;
      continue;
    }
    const match = segment.regex.exec(part);
    if (!match) return undefined;
    segment.names.forEach((name, n) => {
      parameters[name] = decode(match[n + 1] as string);
    });
  }
  return parts.length === route.segments.length ? parameters : undefined;
}

function moreSpecific(a: Route, b: Route): boolean {
  const length = Math.max(a.segments.length, b.segments.length);
  for (let i = 0; i < length; i++) {
    const kindA = a.segments[i]?.kind ?? -1;
    const kindB = b.segments[i]?.kind ?? -1;
    if (kindA !== kindB) return kindA > kindB;
  }
  // Same resource shape: a method of its own beats ANY.
  return a.method !== 'ANY' && b.method === 'ANY';
}

/** The most specific route for the request, or undefined (API Gateway's missing-resource answer). */
export function findRoute(routes: readonly Route[], method: string, path: string): RouteMatch | undefined {
  const parts = pathSegments(path);
  let best: { route: Route; parameters: Record<string, string> } | undefined;
  for (const route of routes) {
    if (route.method !== method && route.method !== 'ANY') continue;
    const parameters = matchSegments(route, parts);
    if (parameters && (best === undefined || moreSpecific(route, best.route))) best = { route, parameters };
  }
  if (!best) return undefined;
  return {
    route: best.route,
    pathParameters: Object.keys(best.parameters).length > 0 ? best.parameters : null,
  };
}
