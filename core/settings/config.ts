/**
 * The configuration of the authorizer and reporter: the settings table's values (settings.ts) plus the
 * Redis endpoint and, in local runs, the raw platform credential. Validated once at start-up; a bad value
 * throws a ConfigError that names the setting.
 */

import { checkThrottlesAgainstRules } from '../budget/throttles';
import { SETTING_ENV, SETTING_NAMES, SETTINGS, type Setting, type SettingValues } from './settings';
import { ConfigError, integer, nonEmpty, oneOf } from './validation';

export {
  ALERT_LEVELS,
  type AlertLevel,
  CREDENTIAL_LOCATIONS,
  CREDENTIAL_MODES,
  type CredentialLocation,
  type CredentialMode,
  DEFAULT_PLATFORM_URL,
  DEFAULT_PROXY_ENVIRONMENT,
  DEFAULT_RULES_REFRESH_SECONDS,
  type FailureMode,
  type LimitMode,
  MAX_REPORT_WINDOW_SECONDS,
  type MappingRule,
  type MappingRulesSource,
  type PlatformAuthKind,
  type ProxyEnvironment,
  TOKEN_ALGORITHMS,
  type TokenAlgorithm,
  type TokenClientIdClaim,
  validateAlertLevels,
  validateMappingRules,
} from './settings';
export {
  ConfigError,
  emailAddress,
  httpUrl,
  integer,
  knownFields,
  nonEmpty,
  oneOf,
  optionalNonEmpty,
} from './validation';

export const DEFAULT_REDIS_PORT = 6379;

/**
 * How the client reaches Redis. `standalone`: one primary endpoint (a replication group without
 * cluster mode, a single redis-server). `cluster`: Redis Cluster (ElastiCache with cluster mode
 * enabled, ElastiCache Serverless, a local cluster): host:port is the configuration endpoint or any
 * node, and the client finds every primary and its slots from there.
 */
export type RedisMode = 'standalone' | 'cluster';
export const REDIS_MODES: readonly RedisMode[] = ['standalone', 'cluster'];

export interface RedisNode {
  readonly host: string;
  readonly port: number;
}

export interface RedisSettings {
  /** Default standalone; parseConfig always sets it. */
  readonly mode?: RedisMode;
  readonly host: string;
  readonly port: number;
  /** Cluster mode only: more startup nodes, tried when host:port does not answer. */
  readonly seeds?: readonly RedisNode[];
  readonly tls: boolean;
  /** AUTH token given directly (local runs). */
  readonly password?: string;
  /** Secrets Manager ARN of the AUTH token (AWS). */
  readonly authSecretArn?: string;
}

export type AccessConfig = SettingValues & {
  /** The provider key or service token given directly (local runs); never logged. */
  readonly platformCredential?: string;
  /** The Account Management API access token, given directly (local runs) or read from its secret; never logged. */
  readonly adminAccessToken?: string;
  readonly redis?: RedisSettings;
};

/** What callers may give; everything but serviceId has a default. */
/** What callers may give; everything but serviceId has a default, and values are checked by parseConfig. */
export type AccessConfigInput = Partial<SettingValues> & {
  readonly serviceId: string;
  readonly platformCredential?: string;
  readonly adminAccessToken?: string;
  readonly redis?: Partial<RedisSettings> & { readonly host: string };
};

/** A `host:port` text (a Redis node, a cluster seed). */
export function hostPort(setting: string, value: unknown): RedisNode {
  const text = nonEmpty(setting, value);
  const match = /^\[?([^\]]+?)\]?:(\d+)$/.exec(text.trim());
  if (!match) throw new ConfigError(setting, `must be host:port (got ${JSON.stringify(text)})`);
  return {
    host: match[1] as string,
    port: integer(setting, Number(match[2]), 1, 65535),
  };
}

function redisSeeds(mode: RedisMode | undefined, seeds: readonly RedisNode[]): RedisNode[] {
  if (mode !== 'cluster') throw new ConfigError('redis.seeds', 'are for redis.mode cluster only');
  if (!Array.isArray(seeds)) throw new ConfigError('redis.seeds', 'must be a list of nodes');
  return seeds.map((seed, i) => ({
    host: nonEmpty(`redis.seeds[${i}].host`, seed?.host),
    port: integer(`redis.seeds[${i}].port`, seed?.port, 1, 65535),
  }));
}

function parseRedis(input: AccessConfigInput['redis']): RedisSettings | undefined {
  if (input === undefined) return undefined;
  return {
    mode: oneOf('redis.mode', input.mode ?? 'standalone', REDIS_MODES),
    host: nonEmpty('redis.host', input.host),
    port: integer('redis.port', input.port ?? DEFAULT_REDIS_PORT, 1, 65535),
    ...(input.seeds !== undefined && { seeds: redisSeeds(input.mode, input.seeds) }),
    tls: input.tls ?? false,
    ...(input.password !== undefined && { password: nonEmpty('redis.password', input.password) }),
    ...(input.authSecretArn !== undefined && {
      authSecretArn: nonEmpty('redis.authSecretArn', input.authSecretArn),
    }),
  };
}

/** An external OpenID provider issues the tokens when its keys URL is given; else the built-in issuer. */
export function externalIssuer(config: Pick<AccessConfig, 'oidcJwksUrl'>): boolean {
  return config.oidcJwksUrl !== undefined;
}

/** Where the issuer's signing keys are: the external provider's JWKS, or the built-in issuer's. */
export function jwksUrlOf(config: Pick<AccessConfig, 'oidcIssuer' | 'oidcJwksUrl'>): string | undefined {
  return config.oidcJwksUrl ?? (config.oidcIssuer && `${config.oidcIssuer}/.well-known/jwks.json`);
}

/** Every setting of the table with its default applied and checked; absent optional ones left out. */
function parseSettings(input: Readonly<Record<string, unknown>>): SettingValues {
  const entries = SETTING_NAMES.map((name) => [name, SETTINGS[name].parse(name, input[name])] as const);
  return Object.fromEntries(entries.filter(([, value]) => value !== undefined)) as SettingValues;
}

/**
 * The settings the mapping rules' source makes apply or not: rules given beside rules read from the
 * platform would be one of them silently ignored, and the platform's rules need its admin origin and token.
 */
function checkMappingRulesSource(input: AccessConfigInput, settings: SettingValues): void {
  if (settings.mappingRulesSource === 'given') {
    for (const name of ['mappingRulesEnvironment', 'mappingRulesRefreshSeconds'] as const) {
      if (settings[name] !== undefined) {
        throw new ConfigError(name, 'applies to mappingRulesSource platform only');
      }
    }
    return;
  }
  if (settings.mappingRules.length > 0) {
    throw new ConfigError(
      'mappingRules',
      'cannot be given with mappingRulesSource platform: the rules are read from the platform',
    );
  }
  if (settings.adminApiUrl === undefined) {
    throw new ConfigError(
      'adminApiUrl',
      "is required with mappingRulesSource platform: the admin portal's origin serves the proxy configuration",
    );
  }
  if (settings.adminTokenSecretArn === undefined && input.adminAccessToken === undefined) {
    throw new ConfigError(
      'adminTokenSecretArn',
      'is required with mappingRulesSource platform: an Account Management API access token reads the proxy configuration',
    );
  }
}

/** Applies defaults and validates; throws ConfigError naming the first bad setting. */
export function parseConfig(input: AccessConfigInput): AccessConfig {
  const redis = parseRedis(input.redis);
  const settings = parseSettings(input);
  if (settings.credentialMode === 'oauth' && settings.oidcIssuer === undefined) {
    throw new ConfigError(
      'oidcIssuer',
      'is required in oauth mode (the issuer whose tokens the API accepts)',
    );
  }
  if (settings.tokenGuessesPerAddress >= settings.tokenGuessesPerClient) {
    // Else one address could spend every attempt of a client and lock it out for everyone.
    throw new ConfigError(
      'tokenGuessesPerAddress',
      `must be lower than tokenGuessesPerClient (${settings.tokenGuessesPerAddress} >= ${settings.tokenGuessesPerClient})`,
    );
  }
  checkThrottlesAgainstRules(settings.throttles, settings.mappingRules);
  checkMappingRulesSource(input, settings);
  return {
    ...settings,
    ...(input.platformCredential !== undefined && {
      platformCredential: nonEmpty('platformCredential', input.platformCredential),
    }),
    ...(input.adminAccessToken !== undefined && {
      adminAccessToken: nonEmpty('adminAccessToken', input.adminAccessToken),
    }),
    ...(redis && { redis }),
  };
}

/** Environment variable names: the CDK writes them, the handlers read them. */
export const ENV = {
  ...SETTING_ENV,
  redisMode: 'REDIS_MODE',
  redisHost: 'REDIS_HOST',
  redisPort: 'REDIS_PORT',
  /** Cluster mode: more startup nodes, `host:port` comma-separated. */
  redisSeeds: 'REDIS_SEEDS',
  redisTls: 'REDIS_TLS',
  redisAuthSecretArn: 'REDIS_AUTH_SECRET_ARN',
} as const;

/** Local runs only: the raw provider key, service token and Redis password come from these. */
export const LOCAL_SECRET_ENV = {
  providerKey: 'THREESCALE_PROVIDER_KEY',
  serviceToken: 'THREESCALE_SERVICE_TOKEN',
  adminAccessToken: 'THREESCALE_ADMIN_ACCESS_TOKEN',
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

export function envBoolean(env: Env, name: string): boolean | undefined {
  const raw = env[name];
  if (raw === undefined || raw === '') return undefined;
  if (raw === 'true' || raw === '1') return true;
  if (raw === 'false' || raw === '0') return false;
  throw new ConfigError(name, `must be true or false (got ${JSON.stringify(raw)})`);
}

function envNodes(env: Env, name: string): RedisNode[] | undefined {
  const raw = env[name];
  if (raw === undefined || raw === '') return undefined;
  return raw.split(',').map((text) => hostPort(name, text));
}

function defined<T extends object>(value: T): T {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as T;
}

/** The table's settings as an environment carries them, before parsing; empty variables count as unset. */
function settingsFromEnv(env: Env): Record<string, unknown> {
  return Object.fromEntries(
    SETTING_NAMES.flatMap((name) => {
      const { env: variable, fromText } = SETTINGS[name];
      const text = env[variable];
      return text === undefined || text === '' ? [] : [[name, fromText(variable, text)]];
    }),
  );
}

/** Reads the configuration from a Lambda (or local) environment. */
export function configFromEnv(env: Env = process.env): AccessConfig {
  const settings = settingsFromEnv(env);
  const localCredential =
    settings.platformAuthKind === 'service_token'
      ? env[LOCAL_SECRET_ENV.serviceToken]
      : env[LOCAL_SECRET_ENV.providerKey];
  const redisHost = env[ENV.redisHost];
  return parseConfig({
    ...settings,
    serviceId: (settings.serviceId as string | undefined) ?? '',
    ...(localCredential && { platformCredential: localCredential }),
    ...(env[LOCAL_SECRET_ENV.adminAccessToken] && {
      adminAccessToken: env[LOCAL_SECRET_ENV.adminAccessToken],
    }),
    ...(redisHost && {
      redis: defined({
        mode: (env[ENV.redisMode] || undefined) as RedisMode | undefined,
        host: redisHost,
        port: envInteger(env, ENV.redisPort),
        seeds: envNodes(env, ENV.redisSeeds),
        tls: envBoolean(env, ENV.redisTls),
        password: env[LOCAL_SECRET_ENV.redisPassword] || undefined,
        authSecretArn: env[ENV.redisAuthSecretArn] || undefined,
      }),
    }),
  } as AccessConfigInput);
}

/**
 * The Lambda environment for a configuration (CDK side). Raw credentials are never put in the
 * environment: the stack passes secret ARNs instead.
 */
export function configToEnv(config: AccessConfig): Record<string, string> {
  const settings = SETTING_NAMES.map((name) => {
    const { env, toText } = SETTINGS[name] as Setting<unknown>;
    return [env, config[name] === undefined ? undefined : toText(config[name])] as const;
  });
  return defined({
    ...Object.fromEntries(settings),
    [ENV.redisMode]: config.redis?.mode,
    [ENV.redisHost]: config.redis?.host,
    [ENV.redisSeeds]: config.redis?.seeds?.map((seed) => `${seed.host}:${seed.port}`).join(','),
    [ENV.redisPort]: config.redis ? String(config.redis.port) : undefined,
    [ENV.redisTls]: config.redis ? String(config.redis.tls) : undefined,
    [ENV.redisAuthSecretArn]: config.redis?.authSecretArn,
  }) as Record<string, string>;
}
