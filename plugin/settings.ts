/**
 * The plugin's settings: the settings table's names, checks and defaults (core/settings/settings.ts),
 * plus what only an application in its own process gives: Redis as a URL or a client, how usage is
 * reported, whether failed responses count, the refusal callback and tracing. Read from an object or
 * from the environment; a wrong value throws a ConfigError naming the setting when the plugin is built.
 */
import type { SnsClientSource } from '../adapters/sns/client-source';
import { type UnprotectedMethods, unprotectedMethods } from '../contract/gateway-responses';
import type { LogPort, MetricsPort } from '../core/observability/observability';
import {
  type AccessConfig,
  type AccessConfigInput,
  ConfigError,
  configFromEnv,
  envBoolean,
  LOCAL_SECRET_ENV,
  parseConfig,
  type RedisSettings,
} from '../core/settings/config';
import type { SettingValues } from '../core/settings/settings';
import type { RefusalHandler } from './answers';
import { type RedisInput, type RedisSource, redisSourceOf } from './redis';
import { REPORTING_MODE_NAMES, type ReportingModeName } from './reporting';

export type { RedisInput } from './redis';

/** Where the provider key or service token comes from when the settings do not give it. */
export const PLUGIN_ENV = {
  ...LOCAL_SECRET_ENV,
  /** A `redis://` or `rediss://` URL (TLS), the plugin's own connection. */
  redisUrl: 'REDIS_URL',
  /** `in-process` or `sns`. */
  reporting: 'ACCESS_REPORTING',
  /** `false` meters only calls whose handler succeeded. */
  countFailedResponses: 'ACCESS_COUNT_FAILED_RESPONSES',
  /** `true` records spans through @opentelemetry/api. */
  tracing: 'ACCESS_TRACING',
} as const;

export interface AccessControlSettings extends Partial<SettingValues> {
  readonly serviceId: string;
  /**
   * The provider key or service token (platformAuthKind). Default: the environment variable
   * THREESCALE_PROVIDER_KEY (or THREESCALE_SERVICE_TOKEN), else the Secrets Manager secret
   * `platformCredentialSecretArn`, read once on the first call. Never logged.
   */
  readonly platformCredential?: string;
  /**
   * The budget cache: a `redis://` / `rediss://` URL, an ioredis client (standalone or cluster; the
   * plugin opens its own connection with the same endpoint and options, without an offline queue),
   * or host/port settings. Absent: every call is an authrep (the slow path). A client's own command
   * timeout is kept; without one, the core's (300 ms) applies.
   */
  readonly redis?: RedisInput;
  /**
   * How pending usage reaches the platform. Default `sns` when `topicArn` is given, else `in-process`.
   */
  readonly reporting?: ReportingModeName;
  /**
   * SNS mode: the SDK client to publish with (a region, an endpoint or credentials of the application's
   * own). Default: one built on the first publish from the environment, as the authorizer builds it.
   */
  readonly snsClient?: SnsClientSource;
  /** Sweep of usage left by processes that died, in-process mode; default a report window, 0 turns it off. */
  readonly sweepIntervalMs?: number;
  /** False: an allowed call whose handler answers 5xx or throws gives its usage back. Default true. */
  readonly countFailedResponses?: boolean;
  /**
   * Calls the plugin lets through unchecked, as a protected API Gateway API leaves them open: an HTTP
   * method (or ANY) alone, or followed by a path (`GET /health`). Default `['OPTIONS']` (CORS preflights
   * carry no credential).
   */
  readonly unprotectedMethods?: readonly string[];
  /** Replaces the plugin's refusal answer (401, 403, 429, 503, 500). */
  readonly onRefusal?: RefusalHandler;
  /** Spans through @opentelemetry/api; default false. */
  readonly tracing?: boolean;
  /** Default: silent. */
  readonly logger?: LogPort;
  /** Default: none. */
  readonly metrics?: MetricsPort;
  /** Epoch ms; default Date.now (tests move it). */
  readonly now?: () => number;
}

/** The settings checked, with their defaults. */
export interface PluginConfig {
  readonly access: AccessConfig;
  readonly redis: RedisSource | undefined;
  readonly reporting: ReportingModeName;
  readonly sweepIntervalMs: number;
  readonly snsClient: SnsClientSource | undefined;
  readonly countFailedResponses: boolean;
  readonly unprotected: UnprotectedMethods;
  readonly onRefusal: RefusalHandler | undefined;
  readonly tracing: boolean;
}

type Env = Readonly<Record<string, string | undefined>>;

const PLUGIN_ONLY = [
  'platformCredential',
  'redis',
  'reporting',
  'sweepIntervalMs',
  'snsClient',
  'countFailedResponses',
  'unprotectedMethods',
  'onRefusal',
  'tracing',
  'logger',
  'metrics',
  'now',
] as const;

function tableSettings(settings: AccessControlSettings): AccessConfigInput {
  const table: Record<string, unknown> = { ...settings };
  for (const name of PLUGIN_ONLY) delete table[name];
  return table as unknown as AccessConfigInput;
}

function flag(setting: string, value: unknown, fallback: boolean): boolean {
  if (value === undefined) return fallback;
  if (typeof value !== 'boolean')
    throw new ConfigError(setting, `must be true or false (got ${JSON.stringify(value)})`);
  return value;
}

function reportingOf(settings: AccessControlSettings, access: AccessConfig): ReportingModeName {
  const mode = settings.reporting ?? (access.topicArn !== undefined ? 'sns' : 'in-process');
  if (!REPORTING_MODE_NAMES.includes(mode)) {
    throw new ConfigError(
      'reporting',
      `must be one of ${REPORTING_MODE_NAMES.join(', ')} (got ${JSON.stringify(mode)})`,
    );
  }
  if (mode === 'sns' && access.topicArn === undefined) {
    throw new ConfigError('topicArn', 'is required with reporting sns: report messages are published to it');
  }
  return mode;
}

function credentialOf(settings: AccessControlSettings, env: Env): string | undefined {
  if (settings.platformCredential !== undefined) return settings.platformCredential;
  const variable =
    settings.platformAuthKind === 'service_token' ? PLUGIN_ENV.serviceToken : PLUGIN_ENV.providerKey;
  return env[variable] || undefined;
}

/** Checks every setting and applies the defaults; throws ConfigError naming the first wrong one. */
export function pluginConfigOf(settings: AccessControlSettings, env: Env = process.env): PluginConfig {
  if (typeof settings !== 'object' || settings === null) {
    throw new ConfigError('settings', 'must be an object with at least serviceId');
  }
  const platformCredential = credentialOf(settings, env);
  const access = parseConfig({
    ...tableSettings(settings),
    ...(platformCredential !== undefined && { platformCredential }),
  });
  if (access.platformCredential === undefined && access.platformCredentialSecretArn === undefined) {
    throw new ConfigError(
      'platformCredential',
      `is required: give it, or set ${PLUGIN_ENV.providerKey} (${PLUGIN_ENV.serviceToken} with service_token), or platformCredentialSecretArn`,
    );
  }
  const sweepIntervalMs = settings.sweepIntervalMs ?? access.reportWindowSeconds * 1000;
  if (!Number.isSafeInteger(sweepIntervalMs) || sweepIntervalMs < 0) {
    throw new ConfigError(
      'sweepIntervalMs',
      `must be a whole number of milliseconds, 0 or more (got ${String(sweepIntervalMs)})`,
    );
  }
  if (settings.onRefusal !== undefined && typeof settings.onRefusal !== 'function') {
    throw new ConfigError('onRefusal', 'must be a function');
  }
  return {
    access,
    redis: settings.redis === undefined ? undefined : redisSourceOf(settings.redis),
    reporting: reportingOf(settings, access),
    sweepIntervalMs,
    snsClient: settings.snsClient,
    countFailedResponses: flag('countFailedResponses', settings.countFailedResponses, true),
    unprotected: unprotectedMethods(settings.unprotectedMethods),
    onRefusal: settings.onRefusal,
    tracing: flag('tracing', settings.tracing, false),
  };
}

function redisOfEnv(env: Env, configured: RedisSettings | undefined): RedisInput | undefined {
  const url = env[PLUGIN_ENV.redisUrl];
  if (url) return url;
  return configured;
}

/**
 * The settings an environment gives: every variable of the settings table (SERVICE_ID, FAILURE_MODE,
 * MAPPING_RULES...), REDIS_URL or REDIS_HOST/REDIS_PORT/REDIS_TLS/REDIS_MODE, the provider key variable,
 * and the plugin's own ACCESS_* variables. Spread it under the settings a program gives itself.
 */
export function settingsFromEnv(env: Env = process.env): AccessControlSettings {
  const { redis, ...config } = configFromEnv(env);
  const reporting = env[PLUGIN_ENV.reporting] || undefined;
  const countFailedResponses = envBoolean(env, PLUGIN_ENV.countFailedResponses);
  const tracing = envBoolean(env, PLUGIN_ENV.tracing);
  const redisInput = redisOfEnv(env, redis);
  return {
    ...config,
    ...(redisInput !== undefined && { redis: redisInput }),
    ...(reporting !== undefined && { reporting: reporting as ReportingModeName }),
    ...(countFailedResponses !== undefined && { countFailedResponses }),
    ...(tracing !== undefined && { tracing }),
  };
}
