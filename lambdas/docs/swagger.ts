/**
 * The Swagger 2.0 document of a protected API, built from what the project already knows: its routes
 * (API Gateway resources and methods), its mapping rules (which metric each operation counts, found with
 * the authorizer's own rule matcher), its credential scheme and the refusals the gateway answers. A
 * provider's Swagger fragment is deep-merged over it, for descriptions and response schemas.
 *
 * Build-time code: the local stack and the CDK generate the document once; the docs handler serves it.
 */
import {
  type AccessGatewayResponse,
  type AccessGatewayResponseType,
  accessGatewayResponses,
  isProtectedMethod,
} from '../../contract/gateway-responses';
import { findRoute, type Route } from '../../contract/routes';
import type { CredentialSettings } from '../../core/credentials';
import { credentialPromptOf } from '../../core/credentials';
import { appIdPartNames } from '../../core/credentials/app-id';
import { userKeyName } from '../../core/credentials/user-key';
import type { DenyReason } from '../../core/decision/decision';
import { compileMappingRules, type QueryParameters, type UsageMapper } from '../../core/decision/mapping';
import type { Usage } from '../../core/platform/types';
import {
  type AccessConfig,
  ConfigError,
  type CredentialMode,
  externalIssuer,
  knownFields,
  nonEmpty,
} from '../../core/settings/config';
import { countedMetrics, throttleNote } from './throttle-note';

export const DEFAULT_DOCS_VERSION = 'v1';

/** The value put into path parameters to make a concrete request (also npm start's curl examples). */
export const SAMPLE_PARAMETER = 'hello';

export interface DocsSettings {
  /** `info.title`; default "API of service <id>". */
  readonly title?: string;
  /** `info.description`; default a paragraph on credentials and metrics. */
  readonly description?: string;
  /** `info.version`. */
  readonly version: string;
  /** A Swagger 2.0 fragment the provider writes (descriptions, response schemas), deep-merged last. */
  readonly merge?: Readonly<Record<string, unknown>>;
}

type DocumentedConfig = Pick<AccessConfig, 'serviceId' | 'credentialMode' | 'mappingRules' | 'oidcJwksUrl'> &
  Partial<Pick<AccessConfig, 'throttles'>> &
  CredentialSettings;

export interface DocumentedApi {
  /** Where consumers reach the API's paths: '' or '/appid' locally, '/prod' on an execute-api URL. */
  readonly basePath: string;
  readonly routes: readonly Route[];
  readonly config: DocumentedConfig;
  readonly settings: DocsSettings;
}

export type SwaggerDocument = Record<string, unknown> & { readonly swagger: '2.0' };

/** What some paths of an operation count: their usage, or null when no mapping rule matches (refused). */
export interface CountedPath {
  /** The pattern of the mapping rule these paths match; absent for the route's other paths. */
  readonly rule?: string;
  readonly metrics: Usage | null;
}

type SecurityScheme =
  | {
      readonly type: 'apiKey';
      readonly in: 'header' | 'query';
      readonly name: string;
      readonly description: string;
    }
  | {
      readonly type: 'oauth2';
      readonly flow: 'application';
      readonly tokenUrl: string;
      readonly scopes: Readonly<Record<string, string>>;
      readonly description: string;
    };

type SecuritySettings = CredentialSettings & Pick<AccessConfig, 'oidcJwksUrl'>;

/** The built-in issuer's token endpoint, under its issuer URL (lambdas/token). */
export function tokenUrlOf(issuer: string): string {
  return `${issuer}/oauth/token`;
}

/**
 * How each credential mode appears in `securityDefinitions`; every definition of a mode is required
 * together. A new mode is one more entry (OAuth: an `oauth2` definition, flow `application`, its tokenUrl).
 */
const SECURITY_DEFINITIONS: {
  readonly [mode in CredentialMode]: (settings: SecuritySettings) => Record<string, SecurityScheme>;
} = {
  user_key: (settings) => ({
    user_key: {
      type: 'apiKey',
      in: settings.credentialLocation,
      name: userKeyName(settings),
      description: "The application's user key.",
    },
  }),
  app_id: (settings) => ({
    app_id: {
      type: 'apiKey',
      in: settings.credentialLocation,
      name: appIdPartNames(settings).appId,
      description: "The application's id.",
    },
    app_key: {
      type: 'apiKey',
      in: settings.credentialLocation,
      name: appIdPartNames(settings).appKey,
      description: 'One of the application keys.',
    },
  }),
  oauth: (settings): Record<string, SecurityScheme> =>
    externalIssuer(settings) || settings.oidcIssuer === undefined
      ? {
          bearer: {
            type: 'apiKey',
            in: 'header',
            name: 'Authorization',
            description: `Bearer followed by an access token of ${settings.oidcIssuer ?? 'the identity provider'}.`,
          },
        }
      : {
          oauth2: {
            type: 'oauth2',
            flow: 'application',
            tokenUrl: tokenUrlOf(settings.oidcIssuer),
            scopes: {},
            description:
              'An access token for the application (client credentials: its id and one of its keys); sent as Authorization: Bearer.',
          },
        },
};

/** What a consumer reads about each 403 reason. */
const DENY_REASONS: Readonly<Record<DenyReason, string>> = {
  limits_exceeded: "a usage limit of the application's plan is reached",
  application_not_active: 'the application is suspended or not yet accepted',
  application_key_invalid: 'the application key is not one of the application',
  service_not_active: 'the service is not active',
  referrer_not_allowed: 'the referrer is not allowed for the application',
  no_mapping_rule: 'no mapping rule of the service matches the method and path',
  platform_unavailable: 'the access-management platform cannot be reached; try again later',
  platform_misconfigured: "the gateway's platform settings are wrong (the provider must fix them)",
  rate_limited:
    "too many calls at once for the application's plan; `reset` says in how many seconds to retry",
  platform_busy: 'too many calls with credentials never seen before; try again in a second',
};

/** Each refusal's name under `responses` and what it means; answers with the same body share a name. */
const REFUSALS: Readonly<Record<AccessGatewayResponseType, { name: string; description: string }>> = {
  UNAUTHORIZED: {
    name: 'Unauthorized',
    description: 'The credential is missing, malformed, or unknown to the platform.',
  },
  ACCESS_DENIED: { name: 'AccessDenied', description: 'The call is refused; `reason` says why.' },
  AUTHORIZER_FAILURE: {
    name: 'AccessCheckUnavailable',
    description: 'The access check itself failed; try again later.',
  },
  AUTHORIZER_CONFIGURATION_ERROR: {
    name: 'AccessCheckUnavailable',
    description: 'The access check itself failed; try again later.',
  },
};

/** The gateway response variable the 403 body takes its reason from. */
const REASON_VARIABLE = '$context.authorizer.reason';
const REASON_MARKER = 'deny-reason-from-the-authorizer';

/** Swagger 2.0 has no ANY: a method of its own on the resource wins, ANY documents the others. */
const ANY_METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD'];
const BODY_METHODS = new Set(['POST', 'PUT', 'PATCH']);

const PATH_PARAMETER = /\{([A-Za-z0-9_-]+)(\+)?\}/g;
const QUERY_PLACEHOLDER = /^\{[-\w]+\}$/;

export interface SampleRequest {
  readonly path: string;
  readonly query: QueryParameters;
}

/** A request a mapping rule's pattern matches: placeholders filled in, the `$` anchor dropped, its query kept. */
export function ruleSample(pattern: string): SampleRequest {
  const at = pattern.indexOf('?');
  const pathPattern = at < 0 ? pattern : pattern.slice(0, at);
  const query: Record<string, string[]> = {};
  for (const [name, value] of new URLSearchParams(at < 0 ? '' : pattern.slice(at + 1))) {
    query[name] = [...(query[name] ?? []), QUERY_PLACEHOLDER.test(value) ? SAMPLE_PARAMETER : value];
  }
  return { path: pathPattern.replace(/\$$/, '').replace(/\{[^}]+\}/g, SAMPLE_PARAMETER), query };
}

/** A concrete path of a resource template: `{name}` and a greedy `{name+}` filled in. */
export function resourceSample(resource: string): string {
  return resource.replace(PATH_PARAMETER, SAMPLE_PARAMETER);
}

/**
 * What calls of `method` on `route` count: for each mapping rule whose paths this route serves, the usage
 * the authorizer reports for them, then the route's other paths (counted by a prefix rule, or refused).
 */
function countedPaths(
  routes: readonly Route[],
  route: Route,
  method: string,
  rules: DocumentedConfig['mappingRules'],
  mapper: UsageMapper,
): CountedPath[] {
  const served = (sample: SampleRequest) => findRoute(routes, method, sample.path)?.route === route;
  const counted: CountedPath[] = [];
  const seen = new Set<string>();
  for (const rule of rules) {
    if (rule.method !== method && rule.method !== 'ANY') continue;
    const sample = ruleSample(rule.pattern);
    if (!served(sample) || seen.has(rule.pattern)) continue;
    seen.add(rule.pattern);
    seen.add(sample.path);
    counted.push({ rule: rule.pattern, metrics: mapper.usageOf({ method, ...sample }) ?? null });
  }
  const other = { path: resourceSample(route.resource), query: {} };
  if (!seen.has(other.path)) counted.push({ metrics: mapper.usageOf({ method, ...other }) ?? null });
  return counted;
}

function metricsText(metrics: Usage): string {
  return Object.entries(metrics)
    .map(([metric, delta]) => `\`${metric}\` +${delta}`)
    .join(', ');
}

function usageDescription(method: string, counted: readonly CountedPath[]): string {
  const byRule = counted.some(({ rule }) => rule !== undefined);
  return counted
    .map(({ rule, metrics }) => {
      const which = rule !== undefined ? `\`${method} ${rule}\`` : byRule ? 'Other paths' : 'Every call';
      if (metrics === null)
        return `- ${which}: no mapping rule matches, refused with 403 \`no_mapping_rule\`.`;
      return `- ${which} ${which === 'Other paths' ? 'count' : 'counts'} ${metricsText(metrics)}.`;
    })
    .join('\n');
}

function parametersOf(route: Route, method: string): Record<string, unknown>[] {
  const parameters: Record<string, unknown>[] = [...route.resource.matchAll(PATH_PARAMETER)].map(
    ([, name, greedy]) => ({
      name,
      in: 'path',
      required: true,
      type: 'string',
      ...(greedy && { description: 'The rest of the path: one or more segments.' }),
    }),
  );
  if (BODY_METHODS.has(method)) {
    parameters.push({ name: 'body', in: 'body', required: false, schema: {} });
  }
  return parameters;
}

function operationIds(): (method: string, resource: string) => string {
  const taken = new Set<string>();
  return (method, resource) => {
    const base = `${method.toLowerCase()}${resource.replace(/[^A-Za-z0-9]+/g, '_').replace(/_$/, '')}`;
    let id = base;
    for (let n = 2; taken.has(id); n++) id = `${base}_${n}`;
    taken.add(id);
    return id;
  };
}

/** Each route's documented methods: its own, or for ANY every method the resource has no route of. */
function documentedMethods(routes: readonly Route[]): { route: Route; method: string }[] {
  const own = new Set(routes.filter((r) => r.method !== 'ANY').map((r) => `${r.method} ${r.resource}`));
  return routes.flatMap((route) =>
    route.method === 'ANY'
      ? ANY_METHODS.filter((method) => !own.has(`${method} ${route.resource}`)).map((method) => ({
          route,
          method,
        }))
      : [{ route, method: route.method }],
  );
}

function refusalResponse(response: AccessGatewayResponse, description: string): Record<string, unknown> {
  const body = JSON.parse(response.template.replaceAll(REASON_VARIABLE, REASON_MARKER)) as Record<
    string,
    string
  >;
  const reasons = Object.keys(DENY_REASONS) as DenyReason[];
  const fromReason = (value: string) => value === REASON_MARKER;
  const hasReason = Object.values(body).some(fromReason);
  return {
    description: hasReason
      ? `${description}\n\n${reasons.map((reason) => `- \`${reason}\`: ${DENY_REASONS[reason]}`).join('\n')}`
      : description,
    schema: {
      type: 'object',
      required: Object.keys(body),
      properties: Object.fromEntries(
        Object.entries(body).map(([name, value]) => [
          name,
          { type: 'string', enum: fromReason(value) ? reasons : [value] },
        ]),
      ),
    },
    examples: {
      'application/json': Object.fromEntries(
        Object.entries(body).map(([name, value]) => [name, fromReason(value) ? reasons[0] : value]),
      ),
    },
  };
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** A Swagger parameter's identity: where it is and its name. */
function parameterKey(value: unknown): string | undefined {
  return isObject(value) && typeof value.in === 'string' && typeof value.name === 'string'
    ? `${value.in} ${value.name}`
    : undefined;
}

/** Parameter lists merge parameter by parameter (same `in` and `name`), new ones last. */
function mergeParameters(base: readonly unknown[], overlay: readonly unknown[]): unknown[] {
  const merged = [...base];
  for (const parameter of overlay) {
    const at = merged.findIndex((known) => parameterKey(known) === parameterKey(parameter));
    if (at < 0) merged.push(parameter);
    else merged[at] = deepMerge(merged[at], parameter);
  }
  return merged;
}

/**
 * `overlay` over `base`: objects merge key by key, parameter lists parameter by parameter, and any other
 * value of the overlay replaces the base's.
 */
export function deepMerge(base: unknown, overlay: unknown): unknown {
  const isParameterList = (value: unknown): value is unknown[] =>
    Array.isArray(value) && value.every((item) => parameterKey(item) !== undefined);
  if (isParameterList(base) && isParameterList(overlay)) return mergeParameters(base, overlay);
  if (!isObject(base) || !isObject(overlay)) return overlay;
  const merged: Record<string, unknown> = { ...base };
  for (const [key, value] of Object.entries(overlay)) {
    if (key === '__proto__') continue;
    merged[key] = Object.hasOwn(base, key) ? deepMerge(base[key], value) : value;
  }
  return merged;
}

interface Refusals {
  /** The document's `responses`: each refusal once, by name. */
  readonly responses: Record<string, unknown>;
  /** What a protected operation lists: status code -> reference to its refusal. */
  readonly references: Record<string, { $ref: string }>;
}

function refusalsOf(config: DocumentedConfig): Refusals {
  const responses: Record<string, unknown> = {};
  const references: Record<string, { $ref: string }> = {};
  for (const response of accessGatewayResponses(credentialPromptOf(config))) {
    const { name, description } = REFUSALS[response.type];
    if (Object.hasOwn(responses, name)) continue;
    responses[name] = refusalResponse(response, description);
    references[String(response.statusCode)] = { $ref: `#/responses/${name}` };
  }
  return { responses, references };
}

function summaryOf(counted: readonly CountedPath[]): string {
  const metrics = countedMetrics(counted);
  return metrics.length > 0 ? `Counts ${metrics.join(', ')}` : 'Refused: no mapping rule matches';
}

/** The Swagger operation of `method` on `route`; open routes need no credential and count nothing. */
function operationOf(
  api: DocumentedApi,
  route: Route,
  method: string,
  context: { readonly mapper: UsageMapper; readonly refusals: Refusals; readonly operationId: string },
): Record<string, unknown> {
  const common = {
    operationId: context.operationId,
    parameters: parametersOf(route, method),
  };
  const answer = { '200': { description: "The backend's answer." } };
  if (!isProtectedMethod(route.method)) {
    return {
      ...common,
      summary: 'Open: no credential needed, not counted',
      responses: answer,
      security: [],
    };
  }
  const { mappingRules } = api.config;
  const counted = countedPaths(api.routes, route, method, mappingRules, context.mapper);
  return {
    ...common,
    summary: summaryOf(counted),
    description: `${usageDescription(method, counted)}${throttleNote(api.config.throttles, countedMetrics(counted))}`,
    responses: { ...answer, ...context.refusals.references },
    'x-metrics': counted,
  };
}

export function swaggerDocument(api: DocumentedApi): SwaggerDocument {
  const { config, settings } = api;
  const definitions = SECURITY_DEFINITIONS[config.credentialMode](config);
  const refusals = refusalsOf(config);
  const mapper = compileMappingRules(config.mappingRules);
  const operationId = operationIds();
  const paths: Record<string, Record<string, unknown>> = {};
  for (const { route, method } of documentedMethods(api.routes)) {
    const key = route.resource.replace(PATH_PARAMETER, '{$1}');
    paths[key] = {
      ...paths[key],
      [method.toLowerCase()]: operationOf(api, route, method, {
        mapper,
        refusals,
        operationId: operationId(method, route.resource),
      }),
    };
  }
  const document = {
    swagger: '2.0',
    info: {
      title: settings.title ?? `API of service ${config.serviceId}`,
      description:
        settings.description ??
        'Authorize with your application\'s credentials, then "Try it out". Each operation says which ' +
          "metrics of your application's plan a call counts.",
      version: settings.version,
    },
    basePath: api.basePath === '' ? '/' : api.basePath,
    consumes: ['application/json'],
    produces: ['application/json'],
    securityDefinitions: definitions,
    security: [Object.fromEntries(Object.keys(definitions).map((name) => [name, []]))],
    paths,
    responses: refusals.responses,
  };
  return deepMerge(document, settings.merge ?? {}) as SwaggerDocument;
}

/** Validates a `docs` setting (all optional). */
export function parseDocsSettings(setting: string, value: unknown): DocsSettings {
  const fields = knownFields(setting, value ?? {}, ['title', 'description', 'version', 'merge']);
  const text = (name: string) =>
    fields[name] === undefined ? undefined : nonEmpty(`${setting}.${name}`, fields[name]);
  const merge = fields.merge;
  if (merge !== undefined) {
    if (!isObject(merge))
      throw new ConfigError(`${setting}.merge`, 'must be a Swagger 2.0 object to merge in');
    if (merge.swagger !== undefined && merge.swagger !== '2.0') {
      throw new ConfigError(
        `${setting}.merge.swagger`,
        `must be "2.0" (got ${JSON.stringify(merge.swagger)})`,
      );
    }
  }
  const title = text('title');
  const description = text('description');
  return {
    ...(title !== undefined && { title }),
    ...(description !== undefined && { description }),
    version: text('version') ?? DEFAULT_DOCS_VERSION,
    ...(merge !== undefined && { merge: merge as Record<string, unknown> }),
  };
}
