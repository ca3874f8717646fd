/**
 * One configuration schema for the Lambda environment, the CDK props and the local stack file.
 * Validated once at start-up; a bad value throws a ConfigError that names the setting.
 */

export const DEFAULT_PLATFORM_URL = 'https://su1.3scale.net';

export type CredentialMode = 'user_key' | 'app_id';
export type FailureMode = 'strict' | 'resilient' | 'allow';
export type LimitMode = 'hard' | 'soft';
export type PlatformAuthKind = 'provider_key' | 'service_token';

/** The usage percentages the platform lets a service alert at (apisonator's ALERT_BINS, without 0). */
export const ALERT_LEVELS = [50, 80, 90, 100, 120, 150, 200, 300] as const;
export type AlertLevel = (typeof ALERT_LEVELS)[number];

export interface MappingRule {
  /** HTTP method, upper case, or `ANY`. */
  readonly method: string;
  /** Path pattern: `{param}` wildcards, optional trailing `$` anchor, optional query part. */
  readonly pattern: string;
  /** Metric or method system name. */
  readonly metric: string;
  /** Usage added per match; a non-negative integer. */
  readonly delta: number;
}

export interface RedisSettings {
  readonly host: string;
  readonly port: number;
  readonly tls: boolean;
  /** AUTH token given directly (local runs). */
  readonly password?: string;
  /** Secrets Manager ARN of the AUTH token (AWS). */
  readonly authSecretArn?: string;
}

export interface AccessConfig {
  readonly serviceId: string;
  readonly platformUrl: string;
  readonly platformAuthKind: PlatformAuthKind;
  /** The provider key or service token given directly (local runs); never logged. */
  readonly platformCredential?: string;
  /** Secrets Manager ARN holding the provider key or service token as its SecretString (AWS). */
  readonly platformCredentialSecretArn?: string;
  readonly credentialMode: CredentialMode;
  /** Header carrying the user key; matched case-insensitively. */
  readonly credentialHeader: string;
  readonly appIdHeader: string;
  readonly appKeyHeader: string;
  /** Empty: every request counts 1 hit. */
  readonly mappingRules: readonly MappingRule[];
  readonly failureMode: FailureMode;
  readonly limitMode: LimitMode;
  /** At most one SNS message per credential per window; 0 means one per call. SQS delay = window. */
  readonly reportWindowSeconds: number;
  readonly negativeCacheTtlSeconds: number;
  /** Timeout of authorize and authrep calls. */
  readonly platformTimeoutMs: number;
  /** Timeout of report calls. */
  readonly reportTimeoutMs: number;
  readonly redis?: RedisSettings;
  readonly topicArn?: string;
  /** Usage alerts fire at these percentages of a limit, ascending; empty turns alerts off. */
  readonly alertLevels: readonly AlertLevel[];
  /** The SNS topic usage alerts are published to; without it the reporter sends none. */
  readonly alertsTopicArn?: string;
}

/** What callers may give; everything but serviceId has a default. */
export type AccessConfigInput = Partial<Omit<AccessConfig, 'redis' | 'mappingRules' | 'alertLevels'>> & {
  readonly serviceId: string;
  readonly mappingRules?: readonly MappingRule[];
  /** Validated against ALERT_LEVELS. */
  readonly alertLevels?: readonly number[];
  readonly redis?: Partial<RedisSettings> & { readonly host: string };
};

export class ConfigError extends Error {
  constructor(
    readonly setting: string,
    problem: string,
  ) {
    super(`Invalid configuration: ${setting} ${problem}`);
    this.name = 'ConfigError';
  }
}

export const DEFAULTS = {
  platformUrl: DEFAULT_PLATFORM_URL,
  platformAuthKind: 'provider_key',
  credentialMode: 'user_key',
  credentialHeader: 'apikey',
  appIdHeader: 'app_id',
  appKeyHeader: 'app_key',
  failureMode: 'strict',
  limitMode: 'hard',
  reportWindowSeconds: 10,
  negativeCacheTtlSeconds: 60,
  platformTimeoutMs: 1000,
  reportTimeoutMs: 5000,
  redisPort: 6379,
  alertLevels: [80, 100],
} as const;

/** SQS caps the delivery delay, and so the report window, at 15 minutes. */
export const MAX_REPORT_WINDOW_SECONDS = 900;

const HTTP_METHODS = new Set(['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD', 'OPTIONS', 'ANY']);
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

export function oneOf<T extends string>(setting: string, value: unknown, allowed: readonly T[]): T {
  if (typeof value !== 'string' || !allowed.includes(value as T)) {
    throw new ConfigError(setting, `must be one of ${allowed.join(', ')} (got ${JSON.stringify(value)})`);
  }
  return value as T;
}

export function integer(setting: string, value: unknown, min: number, max: number): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) {
    throw new ConfigError(setting, `must be an integer from ${min} to ${max} (got ${JSON.stringify(value)})`);
  }
  return value;
}

export function nonEmpty(setting: string, value: unknown): string {
  if (typeof value !== 'string' || value.trim() === '') {
    throw new ConfigError(setting, 'is required and must be a non-empty string');
  }
  return value;
}

export function optionalNonEmpty(setting: string, value: unknown): string | undefined {
  return value === undefined ? undefined : nonEmpty(setting, value);
}

/** A settings object whose keys must all be known, so a misspelt setting stops start-up too. */
export function knownFields(
  setting: string,
  value: unknown,
  known: readonly string[],
): Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new ConfigError(setting, 'must be an object');
  }
  for (const key of Object.keys(value)) {
    if (!known.includes(key)) {
      throw new ConfigError(`${setting}.${key}`, `is not a known setting (known: ${known.join(', ')})`);
    }
  }
  return value as Record<string, unknown>;
}

function headerName(setting: string, value: unknown): string {
  const name = nonEmpty(setting, value);
  if (!HEADER_NAME.test(name)) throw new ConfigError(setting, `is not a valid HTTP header name: ${name}`);
  return name.toLowerCase();
}

/** An http or https URL; throws a ConfigError naming the setting otherwise. */
export function httpUrl(setting: string, value: unknown): URL {
  const text = nonEmpty(setting, value);
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new ConfigError(setting, `is not a URL: ${text}`);
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') {
    throw new ConfigError(setting, `must use http or https (got ${url.protocol})`);
  }
  return url;
}

function platformUrl(value: unknown): string {
  httpUrl('platformUrl', value);
  return (value as string).replace(/\/+$/, '');
}

export function validateMappingRules(rules: unknown, setting = 'mappingRules'): MappingRule[] {
  if (!Array.isArray(rules)) throw new ConfigError(setting, 'must be an array of mapping rules');
  return rules.map((value: unknown, i) => {
    const at = `${setting}[${i}]`;
    const rule: Partial<MappingRule> = knownFields(at, value, ['method', 'pattern', 'metric', 'delta']);
    const method = nonEmpty(`${at}.method`, rule.method).toUpperCase();
    if (!HTTP_METHODS.has(method)) {
      throw new ConfigError(`${at}.method`, `must be an HTTP method or ANY (got ${rule.method})`);
    }
    const pattern = nonEmpty(`${at}.pattern`, rule.pattern);
    if (!pattern.startsWith('/'))
      throw new ConfigError(`${at}.pattern`, `must start with / (got ${pattern})`);
    const metric = nonEmpty(`${at}.metric`, rule.metric);
    const delta = integer(`${at}.delta`, rule.delta ?? 1, 0, 1_000_000);
    return { method, pattern, metric, delta };
  });
}

/** Alert levels from ALERT_LEVELS, each once, sorted ascending; an empty list turns alerts off. */
export function validateAlertLevels(levels: unknown, setting = 'alertLevels'): AlertLevel[] {
  if (!Array.isArray(levels)) {
    throw new ConfigError(setting, `must be an array of percentages from ${ALERT_LEVELS.join(', ')}`);
  }
  const valid = levels.map((level: unknown, i) => {
    if (!ALERT_LEVELS.includes(level as AlertLevel)) {
      throw new ConfigError(
        `${setting}[${i}]`,
        `must be one of ${ALERT_LEVELS.join(', ')} (got ${JSON.stringify(level)})`,
      );
    }
    return level as AlertLevel;
  });
  return [...new Set(valid)].sort((a, b) => a - b);
}

/** Applies defaults and validates; throws ConfigError naming the first bad setting. */
export function parseConfig(input: AccessConfigInput): AccessConfig {
  const serviceId = nonEmpty('serviceId', input.serviceId);
  const platformCredential = input.platformCredential;
  const platformCredentialSecretArn = input.platformCredentialSecretArn;
  if (platformCredential !== undefined) nonEmpty('platformCredential', platformCredential);
  if (platformCredentialSecretArn !== undefined)
    nonEmpty('platformCredentialSecretArn', platformCredentialSecretArn);
  const redis = input.redis
    ? {
        host: nonEmpty('redis.host', input.redis.host),
        port: integer('redis.port', input.redis.port ?? DEFAULTS.redisPort, 1, 65535),
        tls: input.redis.tls ?? false,
        ...(input.redis.password !== undefined && {
          password: nonEmpty('redis.password', input.redis.password),
        }),
        ...(input.redis.authSecretArn !== undefined && {
          authSecretArn: nonEmpty('redis.authSecretArn', input.redis.authSecretArn),
        }),
      }
    : undefined;
  return {
    serviceId,
    platformUrl: platformUrl(input.platformUrl ?? DEFAULTS.platformUrl),
    platformAuthKind: oneOf('platformAuthKind', input.platformAuthKind ?? DEFAULTS.platformAuthKind, [
      'provider_key',
      'service_token',
    ]),
    ...(platformCredential !== undefined && { platformCredential }),
    ...(platformCredentialSecretArn !== undefined && { platformCredentialSecretArn }),
    credentialMode: oneOf('credentialMode', input.credentialMode ?? DEFAULTS.credentialMode, [
      'user_key',
      'app_id',
    ]),
    credentialHeader: headerName('credentialHeader', input.credentialHeader ?? DEFAULTS.credentialHeader),
    appIdHeader: headerName('appIdHeader', input.appIdHeader ?? DEFAULTS.appIdHeader),
    appKeyHeader: headerName('appKeyHeader', input.appKeyHeader ?? DEFAULTS.appKeyHeader),
    mappingRules: validateMappingRules(input.mappingRules ?? []),
    failureMode: oneOf('failureMode', input.failureMode ?? DEFAULTS.failureMode, [
      'strict',
      'resilient',
      'allow',
    ]),
    limitMode: oneOf('limitMode', input.limitMode ?? DEFAULTS.limitMode, ['hard', 'soft']),
    reportWindowSeconds: integer(
      'reportWindowSeconds',
      input.reportWindowSeconds ?? DEFAULTS.reportWindowSeconds,
      0,
      MAX_REPORT_WINDOW_SECONDS,
    ),
    negativeCacheTtlSeconds: integer(
      'negativeCacheTtlSeconds',
      input.negativeCacheTtlSeconds ?? DEFAULTS.negativeCacheTtlSeconds,
      1,
      86_400,
    ),
    platformTimeoutMs: integer(
      'platformTimeoutMs',
      input.platformTimeoutMs ?? DEFAULTS.platformTimeoutMs,
      50,
      5000,
    ),
    reportTimeoutMs: integer(
      'reportTimeoutMs',
      input.reportTimeoutMs ?? DEFAULTS.reportTimeoutMs,
      50,
      60_000,
    ),
    ...(redis && { redis }),
    ...(input.topicArn !== undefined && { topicArn: nonEmpty('topicArn', input.topicArn) }),
    alertLevels: validateAlertLevels(input.alertLevels ?? DEFAULTS.alertLevels),
    ...(input.alertsTopicArn !== undefined && {
      alertsTopicArn: nonEmpty('alertsTopicArn', input.alertsTopicArn),
    }),
  };
}

/** Environment variable names: the CDK writes them, the handlers read them. */
export const ENV = {
  serviceId: 'SERVICE_ID',
  platformUrl: 'PLATFORM_URL',
  platformAuthKind: 'PLATFORM_AUTH_KIND',
  platformCredentialSecretArn: 'PLATFORM_CREDENTIAL_SECRET_ARN',
  credentialMode: 'CREDENTIAL_MODE',
  credentialHeader: 'CREDENTIAL_HEADER',
  appIdHeader: 'APP_ID_HEADER',
  appKeyHeader: 'APP_KEY_HEADER',
  mappingRules: 'MAPPING_RULES',
  failureMode: 'FAILURE_MODE',
  limitMode: 'LIMIT_MODE',
  reportWindowSeconds: 'REPORT_WINDOW_SECONDS',
  negativeCacheTtlSeconds: 'NEGATIVE_CACHE_TTL_SECONDS',
  platformTimeoutMs: 'PLATFORM_TIMEOUT_MS',
  reportTimeoutMs: 'REPORT_TIMEOUT_MS',
  redisHost: 'REDIS_HOST',
  redisPort: 'REDIS_PORT',
  redisTls: 'REDIS_TLS',
  redisAuthSecretArn: 'REDIS_AUTH_SECRET_ARN',
  topicArn: 'TOPIC_ARN',
  alertLevels: 'ALERT_LEVELS',
  alertsTopicArn: 'ALERTS_TOPIC_ARN',
} as const;

/** Local runs only: the raw provider key, service token and Redis password come from these. */
export const LOCAL_SECRET_ENV = {
  providerKey: 'THREESCALE_PROVIDER_KEY',
  serviceToken: 'THREESCALE_SERVICE_TOKEN',
  redisPassword: 'REDIS_PASSWORD',
} as const;

type Env = Readonly<Record<string, string | undefined>>;

export function envInteger(env: Env, name: string): number | undefined {
  const raw = env[name];
  if (raw === undefined || raw === '') return undefined;
  const value = Number(raw);
  if (!Number.isFinite(value)) throw new ConfigError(name, `must be a number (got ${JSON.stringify(raw)})`);
  return value;
}

function envBoolean(env: Env, name: string): boolean | undefined {
  const raw = env[name];
  if (raw === undefined || raw === '') return undefined;
  if (raw === 'true' || raw === '1') return true;
  if (raw === 'false' || raw === '0') return false;
  throw new ConfigError(name, `must be true or false (got ${JSON.stringify(raw)})`);
}

function envJson(env: Env, name: string): unknown {
  const raw = env[name];
  if (raw === undefined || raw === '') return undefined;
  try {
    return JSON.parse(raw);
  } catch {
    throw new ConfigError(name, 'must be valid JSON');
  }
}

function defined<T extends object>(value: T): T {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as T;
}

/** Reads the configuration from a Lambda (or local) environment. */
export function configFromEnv(env: Env = process.env): AccessConfig {
  const authKind = env[ENV.platformAuthKind] as PlatformAuthKind | undefined;
  const localCredential =
    authKind === 'service_token' ? env[LOCAL_SECRET_ENV.serviceToken] : env[LOCAL_SECRET_ENV.providerKey];
  const redisHost = env[ENV.redisHost];
  return parseConfig(
    defined({
      serviceId: env[ENV.serviceId] ?? '',
      platformUrl: env[ENV.platformUrl] || undefined,
      platformAuthKind: authKind || undefined,
      platformCredential: localCredential || undefined,
      platformCredentialSecretArn: env[ENV.platformCredentialSecretArn] || undefined,
      credentialMode: (env[ENV.credentialMode] || undefined) as CredentialMode | undefined,
      credentialHeader: env[ENV.credentialHeader] || undefined,
      appIdHeader: env[ENV.appIdHeader] || undefined,
      appKeyHeader: env[ENV.appKeyHeader] || undefined,
      mappingRules: envJson(env, ENV.mappingRules) as MappingRule[] | undefined,
      failureMode: (env[ENV.failureMode] || undefined) as FailureMode | undefined,
      limitMode: (env[ENV.limitMode] || undefined) as LimitMode | undefined,
      reportWindowSeconds: envInteger(env, ENV.reportWindowSeconds),
      negativeCacheTtlSeconds: envInteger(env, ENV.negativeCacheTtlSeconds),
      platformTimeoutMs: envInteger(env, ENV.platformTimeoutMs),
      reportTimeoutMs: envInteger(env, ENV.reportTimeoutMs),
      redis: redisHost
        ? defined({
            host: redisHost,
            port: envInteger(env, ENV.redisPort),
            tls: envBoolean(env, ENV.redisTls),
            password: env[LOCAL_SECRET_ENV.redisPassword] || undefined,
            authSecretArn: env[ENV.redisAuthSecretArn] || undefined,
          })
        : undefined,
      topicArn: env[ENV.topicArn] || undefined,
      alertLevels: envJson(env, ENV.alertLevels) as number[] | undefined,
      alertsTopicArn: env[ENV.alertsTopicArn] || undefined,
    }),
  );
}

/**
 * The Lambda environment for a configuration (CDK side). Raw credentials are never put in the
 * environment: the stack passes secret ARNs instead.
 */
export function configToEnv(config: AccessConfig): Record<string, string> {
  const env: Record<string, string | undefined> = {
    [ENV.serviceId]: config.serviceId,
    [ENV.platformUrl]: config.platformUrl,
    [ENV.platformAuthKind]: config.platformAuthKind,
    [ENV.platformCredentialSecretArn]: config.platformCredentialSecretArn,
    [ENV.credentialMode]: config.credentialMode,
    [ENV.credentialHeader]: config.credentialHeader,
    [ENV.appIdHeader]: config.appIdHeader,
    [ENV.appKeyHeader]: config.appKeyHeader,
    [ENV.mappingRules]: JSON.stringify(config.mappingRules),
    [ENV.failureMode]: config.failureMode,
    [ENV.limitMode]: config.limitMode,
    [ENV.reportWindowSeconds]: String(config.reportWindowSeconds),
    [ENV.negativeCacheTtlSeconds]: String(config.negativeCacheTtlSeconds),
    [ENV.platformTimeoutMs]: String(config.platformTimeoutMs),
    [ENV.reportTimeoutMs]: String(config.reportTimeoutMs),
    [ENV.redisHost]: config.redis?.host,
    [ENV.redisPort]: config.redis ? String(config.redis.port) : undefined,
    [ENV.redisTls]: config.redis ? String(config.redis.tls) : undefined,
    [ENV.redisAuthSecretArn]: config.redis?.authSecretArn,
    [ENV.topicArn]: config.topicArn,
    [ENV.alertLevels]: JSON.stringify(config.alertLevels),
    [ENV.alertsTopicArn]: config.alertsTopicArn,
  };
  return defined(env) as Record<string, string>;
}
