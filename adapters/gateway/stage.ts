/**
 * The API's own path of a call, as mapping rules match it: never the stage, never a custom domain's base
 * path. What API Gateway puts before the API's path (API Gateway Developer Guide, "Use API mappings to
 * connect API stages to a custom domain name for REST APIs" and "Map API stages to a custom domain name
 * for HTTP APIs"; docs/http-api.md, "What the path carries"):
 *
 * | Event                   | execute-api endpoint        | custom domain, mapping `orders` |
 * | ----------------------- | --------------------------- | ------------------------------- |
 * | REST `path`             | `/hats` (no stage)          | `/orders/hats` (base path)      |
 * | HTTP 1.0 `path`         | `/prod/hats` (named stage)  | `/orders/hats`                  |
 * | HTTP 2.0 `rawPath`      | `/prod/hats` (named stage)  | `/hats` (no mapping key)        |
 *
 * The stage is never in the path on a custom domain: the mapping names it. So a prefix is read off by
 * the route's template, which is the API's own path: the path's last segments, as many as the template
 * has (a greedy `{name+}` counting its value's), are the API's path, whatever came before them.
 */
export interface CallPath {
  /** The path as the event carries it (REST and 1.0 `path`, 2.0 `rawPath`). */
  readonly path: string;
  /** The resource or route key's path (`/words/{word}`, `/{proxy+}`); '' for the `$default` route. */
  readonly template: string;
  readonly stage?: string;
  /** `requestContext.domainName`: the execute-api host, or the custom domain the call came through. */
  readonly domainName?: string;
  readonly pathParameters?: Readonly<Record<string, string | undefined>> | null;
}

/** The default endpoint (public, or a private API's through its VPC endpoint), in every partition. */
const EXECUTE_API_HOST = /\.execute-api\.[a-z0-9-]+\.amazonaws\.com(\.cn)?$/;

/** A template's last segment that takes the rest of the path. */
const GREEDY = /^\{([^{}]+)\+\}$/;

export function apiPathOf(call: CallPath): string {
  const path = call.path.split('?')[0] || '/';
  const count = templateSegmentCount(call.template, call.pathParameters);
  if (count === undefined) return withoutStage(path, call.stage, call.domainName);
  if (count === 0) return '/';
  const segments = path.split('/');
  const start = startOfLast(segments, count);
  return start === undefined ? path : `/${segments.slice(start).join('/')}`;
}

/**
 * Where the path's last `count` segments start, counted as the mapping rules will read the path: empty
 * and `.` segments stand for nothing and a `..` takes the segment before it away (RFC 3986 5.2.4), so a
 * spelling such as `/v1//words` or `/v1/x/../words` keeps all of itself. One pass from the end; undefined
 * when the path has fewer.
 */
function startOfLast(segments: readonly string[], count: number): number | undefined {
  let found = 0;
  let removedByDotDot = 0;
  for (let index = segments.length - 1; index >= 1; index--) {
    const segment = segments[index];
    if (segment === '' || segment === '.') continue;
    if (segment === '..') removedByDotDot++;
    else if (removedByDotDot > 0) removedByDotDot--;
    else if (++found === count) return index;
  }
  return undefined;
}

/**
 * How many path segments the template stands for; undefined when that is unknown: the `$default` route
 * (no template), or a greedy parameter whose value the event lacks.
 */
function templateSegmentCount(template: string, parameters: CallPath['pathParameters']): number | undefined {
  if (template === '') return undefined;
  const segments = template.split('/').filter((segment) => segment !== '');
  const greedy = GREEDY.exec(segments.at(-1) ?? '')?.[1];
  if (greedy === undefined) return segments.length;
  const value = parameters?.[greedy];
  if (value === undefined) return undefined;
  return segments.length - 1 + value.split('/').filter((segment) => segment !== '').length;
}

/**
 * A call whose route has no template (the `$default` route): a named stage's prefix is removed on the
 * execute-api endpoint, where it is in the path; a custom domain's path never carries the stage.
 */
function withoutStage(path: string, stage: string | undefined, domainName: string | undefined): string {
  if (!stage || stage === '$default' || isCustomDomain(domainName)) return path;
  const prefix = `/${stage}`;
  if (path === prefix) return '/';
  return path.startsWith(`${prefix}/`) ? path.slice(prefix.length) : path;
}

/** A custom domain name: not execute-api's, and (unlike the local gateway's host) without a port. */
function isCustomDomain(domainName: string | undefined): boolean {
  return domainName !== undefined && !domainName.includes(':') && !EXECUTE_API_HOST.test(domainName);
}
