/**
 * The local stack file: a `platform` section for the local platform, one gateway (or an array of them)
 * whose keys are the settings table's `stackFile` entries (docs/settings.md), and optional `local`
 * settings. Everything is validated before anything starts; a bad value throws a ConfigError naming the
 * setting.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { DOCS_PATH } from '../contract/docs';
import { findRoute, parseRoute, type Route } from '../contract/routes';
import { type PortalSettings, parsePortalSettings } from '../core/portal/settings';
import {
  type AccessConfig,
  type AccessConfigInput,
  ConfigError,
  hostPort,
  integer,
  knownFields,
  LOCAL_SECRET_ENV,
  type MappingRule,
  nonEmpty,
  optionalNonEmpty,
  parseConfig,
} from '../core/settings/config';
import { type CorsSettings, parseCors } from '../core/settings/cors';
import { settingNamesIn } from '../core/settings/settings';
import {
  DEFAULT_SOAP_PATH,
  parseSoapSettings,
  SOAP_ENV,
  SOAP_TUNING_SETTINGS,
  type SoapSettings,
} from '../core/soap/settings';
import { type DocsSettings, parseDocsSettings } from '../lambdas/docs/swagger';
import { parseJsonWithoutRepeatedKeys } from './json-file';
import {
  CREDENTIAL_MODE_OF,
  loadPlatformConfig,
  type PlatformConfig,
  type ServiceConfig,
} from './platform/config';
import type { RedisChoice } from './redis';
import { checkThrottlesAgree, checkThrottlesOnPlatform } from './stack-throttles';

/** What `npm start` runs without --config. */
export const DEMO_STACK_FILE = join(__dirname, 'demo.stack.json');

/** The local default: usage reaches the platform two seconds after a call, not after the AWS default. */
export const LOCAL_REPORT_WINDOW_SECONDS = 2;
export const LOCAL_DEFAULTS = {
  sweepIntervalSeconds: 10,
  visibilityTimeoutSeconds: 10,
  maxReceiveCount: 5,
} as const;

/** Where a gateway's AccessConfig points before the local platform has a port. */
const LOCAL_PLATFORM_PLACEHOLDER = 'http://127.0.0.1';

/** The kinds of API Gateway API a gateway entry can be. */
export const API_TYPES = ['rest', 'http'] as const;
export type ApiType = (typeof API_TYPES)[number];

export interface GatewayDefinition {
  /** The setting path of this gateway in the file: `gateway` or `gateway[i]`. */
  readonly setting: string;
  /** Default rest. */
  readonly apiType: ApiType;
  /**
   * A named stage the API is served under (`/<stage>`, as its invoke URL); undefined: a REST API at the
   * root as a custom domain serves it, an HTTP API on its `$default` stage.
   */
  readonly stage?: string;
  readonly basePath: string;
  readonly routes: readonly Route[];
  /** True when the file names a platformUrl: the gateway uses that platform, not the local one. */
  readonly externalPlatform: boolean;
  /** Everything of the AccessConfig but, for the local platform, its URL (known once it listens). */
  readonly configInput: AccessConfigInput;
  /** Undefined: the API answers no cross-origin call. */
  readonly cors?: CorsSettings;
  readonly docs: DocsSettings;
  /** The SOAP route, when the gateway has one. */
  readonly soap?: SoapRouteDefinition;
  /** The developer portal's settings, when the gateway serves one at `/portal` (docs/portal.md). */
  readonly portal?: PortalSettings;
}

/** A gateway's SOAP access proxy route (docs/soap.md). */
export interface SoapRouteDefinition {
  /** `POST <soapPath>`, open: the proxy does its own access check. */
  readonly route: Route;
  /** The proxy's settings but the backend URL, which the stack may still have to start. */
  readonly settings: Omit<SoapSettings, 'soapBackendUrl'>;
  /** Undefined: the stack starts the demo SOAP echo and sends allowed calls there. */
  readonly soapBackendUrl?: string;
}

export interface LocalSettings {
  readonly port?: number;
  readonly redis?: RedisChoice;
  readonly sweepIntervalSeconds: number;
  readonly visibilityTimeoutSeconds: number;
  readonly maxReceiveCount: number;
}

export interface StackDefinition {
  /** Present when a gateway needs the local platform. */
  readonly platform?: PlatformConfig;
  readonly gateways: readonly GatewayDefinition[];
  readonly local: LocalSettings;
}

type Env = Readonly<Record<string, string | undefined>>;
type Fields = Record<string, unknown>;

const TOP_LEVEL = ['platform', 'gateway', 'local'];
/** A gateway's own settings (and the SOAP proxy's); every other one comes from the settings table. */
const GATEWAY_ONLY_SETTINGS = [
  'apiType',
  'stage',
  'basePath',
  'routes',
  'providerKey',
  'serviceToken',
  'adminAccessToken',
  'cors',
  'docs',
  'portal',
  'soapPath',
  ...Object.keys(SOAP_ENV),
];
const TABLE_SETTINGS = settingNamesIn('stackFile');
const GATEWAY_SETTINGS = [...TABLE_SETTINGS, ...GATEWAY_ONLY_SETTINGS];
const LOCAL_SETTINGS = [
  'port',
  'redis',
  'sweepIntervalSeconds',
  'visibilityTimeoutSeconds',
  'maxReceiveCount',
];
const BASE_PATH = /^(\/[A-Za-z0-9._~-]+)*$/;

/** Re-throws a ConfigError of parseConfig with the gateway's path in front of the setting. */
function prefixed<T>(prefix: string, parse: () => T): T {
  try {
    return parse();
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    throw new ConfigError(`${prefix}.${error.setting}`, error.problem);
  }
}

function platformCredential(
  at: string,
  fields: Fields,
  service: ServiceConfig | undefined,
  env: Env,
): Pick<AccessConfigInput, 'platformAuthKind' | 'platformCredential'> {
  const providerKey = optionalNonEmpty(`${at}.providerKey`, fields.providerKey);
  const serviceToken = optionalNonEmpty(`${at}.serviceToken`, fields.serviceToken);
  if (providerKey !== undefined && serviceToken !== undefined) {
    throw new ConfigError(`${at}.serviceToken`, 'cannot be given together with providerKey: choose one');
  }
  const fromLocalPlatform = service && {
    providerKey: service.providerKey,
    serviceToken: service.providerKey === undefined ? service.serviceToken : undefined,
  };
  const fromEnv = {
    providerKey: env[LOCAL_SECRET_ENV.providerKey] || undefined,
    serviceToken: env[LOCAL_SECRET_ENV.providerKey]
      ? undefined
      : env[LOCAL_SECRET_ENV.serviceToken] || undefined,
  };
  const chosen =
    providerKey !== undefined || serviceToken !== undefined
      ? { providerKey, serviceToken }
      : (fromLocalPlatform ?? fromEnv);
  if (chosen.providerKey !== undefined) {
    return { platformAuthKind: 'provider_key', platformCredential: chosen.providerKey };
  }
  if (chosen.serviceToken !== undefined) {
    return { platformAuthKind: 'service_token', platformCredential: chosen.serviceToken };
  }
  throw new ConfigError(
    `${at}.providerKey`,
    `is required with platformUrl: set ${at}.providerKey or ${at}.serviceToken, ` +
      `or the environment variable ${LOCAL_SECRET_ENV.providerKey}`,
  );
}

/**
 * The Account Management API token that names applications in usage alerts: the gateway's key, else
 * the environment's, else, on the local platform (which takes the provider key as its access token),
 * the service's provider key, so `npm start` names applications out of the box.
 */
function adminAccessTokenOf(
  at: string,
  fields: Fields,
  service: ServiceConfig | undefined,
  env: Env,
): Pick<AccessConfigInput, 'adminAccessToken'> {
  const token =
    optionalNonEmpty(`${at}.adminAccessToken`, fields.adminAccessToken) ??
    (env[LOCAL_SECRET_ENV.adminAccessToken] || undefined) ??
    service?.providerKey;
  return token === undefined ? {} : { adminAccessToken: token };
}

function gateway(
  at: string,
  value: unknown,
  platform: PlatformConfig | undefined,
  env: Env,
): GatewayDefinition {
  const fields = knownFields(at, value, GATEWAY_SETTINGS);
  const serviceId = nonEmpty(`${at}.serviceId`, fields.serviceId);
  const externalPlatform = fields.platformUrl !== undefined;
  const service = externalPlatform
    ? undefined
    : platform?.services.find((candidate) => candidate.id === serviceId);
  if (!externalPlatform && service === undefined) {
    throw new ConfigError(
      `${at}.serviceId`,
      platform === undefined
        ? `needs the platform section (or ${at}.platformUrl to use a platform elsewhere)`
        : `names no service of the platform section (services: ${platform.services.map((s) => s.id).join(', ')})`,
    );
  }
  const basePath = fields.basePath === undefined ? '' : String(fields.basePath);
  if (
    typeof fields.basePath !== 'undefined' &&
    (typeof fields.basePath !== 'string' || !BASE_PATH.test(basePath))
  ) {
    throw new ConfigError(
      `${at}.basePath`,
      `must be "" or a path like "/appid" (got ${JSON.stringify(fields.basePath)})`,
    );
  }
  if (!Array.isArray(fields.routes) || fields.routes.length === 0) {
    throw new ConfigError(`${at}.routes`, 'must list the API\'s routes, like ["GET /v1/words/{word}.json"]');
  }
  const cors = parseCors(`${at}.cors`, fields.cors);
  const routes = fields.routes.map((text, i) => {
    const route = parseRoute(text, `${at}.routes[${i}]`);
    if (route.resource === DOCS_PATH || route.resource.startsWith(`${DOCS_PATH}/`)) {
      throw new ConfigError(
        `${at}.routes[${i}]`,
        `is under ${DOCS_PATH}, where the API serves its documentation`,
      );
    }
    if (cors !== undefined && route.method === 'OPTIONS') {
      throw new ConfigError(
        `${at}.routes[${i}]`,
        `is an OPTIONS method: with ${at}.cors the API answers preflights itself`,
      );
    }
    return route;
  });
  const configInput = {
    ...Object.fromEntries(
      TABLE_SETTINGS.flatMap((name) => (fields[name] === undefined ? [] : [[name, fields[name]]])),
    ),
    serviceId,
    platformUrl: externalPlatform ? fields.platformUrl : undefined,
    ...platformCredential(at, fields, service, env),
    ...adminAccessTokenOf(at, fields, service, env),
    credentialMode: fields.credentialMode ?? (service && CREDENTIAL_MODE_OF[service.authentication]),
    reportWindowSeconds: fields.reportWindowSeconds ?? LOCAL_REPORT_WINDOW_SECONDS,
  } as AccessConfigInput;
  const soap = soapRoute(at, fields, routes);
  const stage = stageOf(`${at}.stage`, fields.stage);
  const definition = {
    setting: at,
    apiType: apiTypeOf(`${at}.apiType`, fields.apiType),
    ...(stage !== undefined && { stage }),
    basePath,
    routes,
    externalPlatform,
    configInput,
    ...(cors !== undefined && { cors }),
    docs: parseDocsSettings(`${at}.docs`, fields.docs),
    ...(soap !== undefined && { soap }),
    ...(fields.portal !== undefined && { portal: parsePortalSettings(fields.portal, `${at}.portal`) }),
  };
  const { credentialMode, mappingRules } = gatewayConfig(definition, LOCAL_PLATFORM_PLACEHOLDER);
  if (service !== undefined) checkRuleMetrics(at, mappingRules, service);
  if (service !== undefined && CREDENTIAL_MODE_OF[service.authentication] !== credentialMode) {
    throw new ConfigError(
      `${at}.credentialMode`,
      `is ${String(fields.credentialMode)} but service ${serviceId} uses ${service.authentication}`,
    );
  }
  return definition;
}

/** The stage's part of the API's URL: '' or `/<stage>`. */
export function stagePathOf(gateway: Pick<GatewayDefinition, 'stage'>): string {
  return gateway.stage === undefined ? '' : `/${gateway.stage}`;
}

function apiTypeOf(setting: string, value: unknown): ApiType {
  if (value === undefined) return 'rest';
  if (API_TYPES.includes(value as ApiType)) return value as ApiType;
  throw new ConfigError(setting, `must be one of ${API_TYPES.join(', ')} (got ${JSON.stringify(value)})`);
}

/** API Gateway's stage names: letters, digits, hyphens and underscores, at most 128. */
const STAGE_NAME = /^[A-Za-z0-9_-]{1,128}$/;

function stageOf(setting: string, value: unknown): string | undefined {
  if (value === undefined || value === '$default') return undefined;
  if (typeof value === 'string' && STAGE_NAME.test(value)) return value;
  throw new ConfigError(
    setting,
    `must be a stage name of letters, digits, - and _ (or "$default"), got ${JSON.stringify(value)}`,
  );
}

/**
 * The SOAP route of a gateway that names `soapPath` or any SOAP setting: `POST <soapPath>`, a literal path
 * no REST route and not the documentation serve.
 */
function soapRoute(at: string, fields: Fields, routes: readonly Route[]): SoapRouteDefinition | undefined {
  const names = ['soapPath', ...Object.keys(SOAP_ENV)];
  if (names.every((name) => fields[name] === undefined)) return undefined;
  const path = fields.soapPath ?? DEFAULT_SOAP_PATH;
  const route = parseRoute(`POST ${typeof path === 'string' ? path : '?'}`, `${at}.soapPath`);
  if (route.segments.some((segment) => !('text' in segment))) {
    throw new ConfigError(
      `${at}.soapPath`,
      `must be a literal path like /soap (got ${JSON.stringify(path)})`,
    );
  }
  if (route.resource === DOCS_PATH || route.resource.startsWith(`${DOCS_PATH}/`)) {
    throw new ConfigError(`${at}.soapPath`, `is under ${DOCS_PATH}, where the API serves its documentation`);
  }
  if (findRoute(routes, 'POST', route.resource) !== undefined) {
    throw new ConfigError(`${at}.soapPath`, `is a path a route of ${at}.routes serves already`);
  }
  const soapBackendUrl = optionalNonEmpty(`${at}.soapBackendUrl`, fields.soapBackendUrl);
  const { soapBackendUrl: _placeholder, ...settings } = prefixed(at, () =>
    parseSoapSettings({
      soapBackendUrl: soapBackendUrl ?? LOCAL_PLATFORM_PLACEHOLDER,
      ...Object.fromEntries(
        SOAP_TUNING_SETTINGS.filter((name) => fields[name] !== undefined).map((name) => [name, fields[name]]),
      ),
    }),
  );
  return {
    route,
    settings,
    ...(soapBackendUrl !== undefined && { soapBackendUrl: new URL(soapBackendUrl).href }),
  };
}

function metricNames(metrics: ServiceConfig['metrics']): string[] {
  return metrics.flatMap((metric) => [metric.name, ...metricNames(metric.children)]);
}

/**
 * A rule naming a metric the platform does not have makes every report carrying it fail (the platform
 * drops a whole report batch for one unknown metric), so the local platform's metrics are checked here.
 */
function checkRuleMetrics(at: string, rules: readonly MappingRule[], service: ServiceConfig): void {
  const known = metricNames(service.metrics);
  rules.forEach((rule, i) => {
    if (!known.includes(rule.metric)) {
      throw new ConfigError(
        `${at}.mappingRules[${i}].metric`,
        `names a metric service ${service.id} does not have (${JSON.stringify(rule.metric)}; it has ${known.join(', ')})`,
      );
    }
  });
}

/**
 * The validated AccessConfig of a gateway; `localPlatformUrl` is used unless the file names a platform,
 * and in oauth mode without an issuer the API itself issues tokens: its URL (`localIssuerUrl`) is the issuer.
 */
export function gatewayConfig(
  gateway: GatewayDefinition,
  localPlatformUrl: string,
  localIssuerUrl = `${LOCAL_PLATFORM_PLACEHOLDER}${gateway.basePath}`,
): AccessConfig {
  const input = gateway.configInput;
  const builtInIssuer = input.credentialMode === 'oauth' && input.oidcIssuer === undefined;
  return prefixed(gateway.setting, () =>
    parseConfig({
      ...input,
      ...(!gateway.externalPlatform && { platformUrl: localPlatformUrl }),
      ...(!gateway.externalPlatform && input.adminApiUrl === undefined && { adminApiUrl: localPlatformUrl }),
      ...(builtInIssuer && { oidcIssuer: localIssuerUrl }),
    }),
  );
}

function redisChoice(value: unknown): RedisChoice | undefined {
  if (value === undefined) return undefined;
  if (value === 'auto' || value === 'in-memory' || value === 'cluster') return value;
  if (typeof value === 'string') {
    throw new ConfigError(
      'local.redis',
      `must be auto, in-memory, cluster or an object (got ${JSON.stringify(value)})`,
    );
  }
  if (typeof value === 'object' && value !== null && 'cluster' in value) {
    const { cluster } = knownFields('local.redis', value, ['cluster']);
    if (!Array.isArray(cluster) || cluster.length === 0) {
      throw new ConfigError('local.redis.cluster', 'must be a non-empty list of "host:port" seed nodes');
    }
    return { cluster: cluster.map((seed, i) => hostPort(`local.redis.cluster[${i}]`, seed)) };
  }
  const fields = knownFields('local.redis', value, ['host', 'port']);
  return {
    host: nonEmpty('local.redis.host', fields.host),
    port: integer('local.redis.port', fields.port, 1, 65535),
  };
}

function localSettings(value: unknown): LocalSettings {
  const fields = knownFields('local', value ?? {}, LOCAL_SETTINGS);
  const redis = redisChoice(fields.redis);
  return {
    ...(fields.port !== undefined && { port: integer('local.port', fields.port, 0, 65535) }),
    ...(redis !== undefined && { redis }),
    sweepIntervalSeconds: integer(
      'local.sweepIntervalSeconds',
      fields.sweepIntervalSeconds ?? LOCAL_DEFAULTS.sweepIntervalSeconds,
      1,
      3600,
    ),
    visibilityTimeoutSeconds: integer(
      'local.visibilityTimeoutSeconds',
      fields.visibilityTimeoutSeconds ?? LOCAL_DEFAULTS.visibilityTimeoutSeconds,
      0,
      43_200,
    ),
    maxReceiveCount: integer(
      'local.maxReceiveCount',
      fields.maxReceiveCount ?? LOCAL_DEFAULTS.maxReceiveCount,
      1,
      1000,
    ),
  };
}

/** Validates a parsed stack file. `env` supplies THREESCALE_PROVIDER_KEY for gateways with a platformUrl. */
export function parseStackFile(value: unknown, env: Env = process.env): StackDefinition {
  const fields = knownFields('the stack file', value, TOP_LEVEL);
  if (fields.gateway === undefined)
    throw new ConfigError('gateway', 'is required (an object, or an array of them)');
  const entries = Array.isArray(fields.gateway) ? fields.gateway : [fields.gateway];
  if (entries.length === 0) throw new ConfigError('gateway', 'must hold at least one gateway');
  const platform = fields.platform === undefined ? undefined : loadPlatformConfig(fields.platform);
  const gateways = entries.map((entry, i) =>
    gateway(Array.isArray(fields.gateway) ? `gateway[${i}]` : 'gateway', entry, platform, env),
  );
  const basePaths = new Set<string>();
  for (const definition of gateways) {
    if (basePaths.has(definition.basePath)) {
      throw new ConfigError(
        `${definition.setting}.basePath`,
        `repeats ${JSON.stringify(definition.basePath)}: each gateway needs its own base path`,
      );
    }
    basePaths.add(definition.basePath);
  }
  for (const definition of gateways) if (platform) checkThrottlesOnPlatform(definition, platform);
  checkThrottlesAgree(gateways);
  const needsLocalPlatform = gateways.some((definition) => !definition.externalPlatform);
  return {
    ...(needsLocalPlatform && platform !== undefined && { platform }),
    gateways,
    local: localSettings(fields.local),
  };
}

/** Reads and validates a stack file from disk. */
export function readStackFile(path: string, env: Env = process.env): StackDefinition {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    throw new ConfigError('--config', `cannot be read: ${(error as Error).message}`);
  }
  let value: unknown;
  try {
    value = parseJsonWithoutRepeatedKeys(text);
  } catch (error) {
    if (error instanceof ConfigError) throw error;
    throw new ConfigError('--config', `${path} is not valid JSON: ${(error as Error).message}`);
  }
  return parseStackFile(value, env);
}
