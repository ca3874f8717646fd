/**
 * One configuration schema for the Lambda environment, the CDK props and the local stack file.
 * Validated once at start-up; a bad value throws a ConfigError that names the setting.
 */

export const DEFAULT_PLATFORM_URL = 'https://su1.3scale.net';

export type CredentialMode = 'user_key' | 'app_id' | 'oauth';
/** Where user_key and app_id credentials travel: request headers (API Gateway's habit) or the query string. */
export type CredentialLocation = 'header' | 'query';
/** The claim of an access token that names the client (the platform application): one, or both in turn. */
export type TokenClientIdClaim = 'client_id' | 'azp';
export type FailureMode = 'strict' | 'resilient' | 'allow';
export type LimitMode = 'hard' | 'soft';
export type PlatformAuthKind = 'provider_key' | 'service_token';

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
  /** Where user_key and app_id credentials travel (oauth mode takes a token from either place). */
  readonly credentialLocation: CredentialLocation;
  /**
   * oauth mode: the token issuer's URL (the `iss` claim). With no `oidcJwksUrl` it is the built-in
   * issuer, whose token endpoint and keys live under this URL.
   */
  readonly oidcIssuer?: string;
  /** oauth mode: where the issuer's signing keys are published; default `<oidcIssuer>/.well-known/jwks.json`. */
  readonly oidcJwksUrl?: string;
  /** oauth mode: true when `oidcJwksUrl` was given: an external OpenID provider issues the tokens. */
  readonly oidcExternalIssuer: boolean;
  /** oauth mode: the `aud` a token must carry; default the issuer URL. */
  readonly oidcAudience?: string;
  /** oauth mode: signature algorithms accepted (asymmetric only; never `none` or HS*). */
  readonly oidcAlgorithms: readonly TokenAlgorithm[];
  /** oauth mode: the claim naming the client; undefined tries `client_id`, then `azp`. */
  readonly oidcClientIdClaim?: TokenClientIdClaim;
  /** Lifetime of the built-in issuer's access tokens. */
  readonly tokenTtlSeconds: number;
  /** The KMS key (id, ARN or alias) the built-in issuer signs with in AWS. */
  readonly tokenSigningKeyId?: string;
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
}

/** What callers may give; everything but serviceId has a default. */
export type AccessConfigInput = Partial<
  Omit<AccessConfig, 'redis' | 'mappingRules' | 'oidcAlgorithms' | 'oidcExternalIssuer'>
> & {
  readonly serviceId: string;
  readonly mappingRules?: readonly MappingRule[];
  readonly redis?: Partial<RedisSettings> & { readonly host: string };
  readonly oidcAlgorithms?: readonly string[];
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
  credentialLocation: 'header',
  oidcAlgorithms: ['ES256', 'RS256'],
  tokenTtlSeconds: 3600,
  failureMode: 'strict',
  limitMode: 'hard',
  reportWindowSeconds: 10,
  negativeCacheTtlSeconds: 60,
  platformTimeoutMs: 1000,
  reportTimeoutMs: 5000,
  redisPort: 6379,
} as const;

/**
 * Signature algorithms an access token may use: asymmetric ones only. `none` would accept anything, and an
 * HMAC (HS*) key would have to be the issuer's public key, which anyone can fetch and sign with.
 */
export const TOKEN_ALGORITHMS = [
  'ES256',
  'ES384',
  'ES512',
  'RS256',
  'RS384',
  'RS512',
  'PS256',
  'PS384',
  'PS512',
  'EdDSA',
] as const;
export type TokenAlgorithm = (typeof TOKEN_ALGORITHMS)[number];

/** The built-in issuer's tokens live from one minute to one day. */
export const TOKEN_TTL_BOUNDS = { min: 60, max: 86_400 } as const;

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

function urlText(setting: string, value: unknown): string {
  httpUrl(setting, value);
  return (value as string).replace(/\/+$/, '');
}

function tokenAlgorithms(value: readonly string[] | undefined): TokenAlgorithm[] {
  const list = value ?? DEFAULTS.oidcAlgorithms;
  if (!Array.isArray(list) || list.length === 0) {
    throw new ConfigError('oidcAlgorithms', `must list at least one of ${TOKEN_ALGORITHMS.join(', ')}`);
  }
  return [...new Set(list.map((alg, i) => oneOf(`oidcAlgorithms[${i}]`, alg, TOKEN_ALGORITHMS)))];
}

type TokenSettings = Pick<
  AccessConfig,
  | 'oidcIssuer'
  | 'oidcJwksUrl'
  | 'oidcExternalIssuer'
  | 'oidcAudience'
  | 'oidcAlgorithms'
  | 'oidcClientIdClaim'
  | 'tokenTtlSeconds'
  | 'tokenSigningKeyId'
>;

/**
 * The token settings. oauth mode needs the issuer; its keys default to the built-in issuer's JWKS under
 * it, and its audience to the issuer itself. Other modes keep whatever was given, validated, unused.
 */
function tokenSettings(input: AccessConfigInput, mode: CredentialMode): TokenSettings {
  const issuer =
    input.oidcIssuer === undefined && mode !== 'oauth' ? undefined : urlText('oidcIssuer', input.oidcIssuer);
  const jwksUrl =
    input.oidcJwksUrl === undefined ? undefined : httpUrl('oidcJwksUrl', input.oidcJwksUrl).href;
  const audience = optionalNonEmpty('oidcAudience', input.oidcAudience) ?? issuer;
  return {
    ...(issuer !== undefined && {
      oidcIssuer: issuer,
      oidcJwksUrl: jwksUrl ?? `${issuer}/.well-known/jwks.json`,
    }),
    oidcExternalIssuer: jwksUrl !== undefined,
    ...(audience !== undefined && { oidcAudience: audience }),
    oidcAlgorithms: tokenAlgorithms(input.oidcAlgorithms),
    ...(input.oidcClientIdClaim !== undefined && {
      oidcClientIdClaim: oneOf<TokenClientIdClaim>('oidcClientIdClaim', input.oidcClientIdClaim, [
        'client_id',
        'azp',
      ]),
    }),
    tokenTtlSeconds: integer(
      'tokenTtlSeconds',
      input.tokenTtlSeconds ?? DEFAULTS.tokenTtlSeconds,
      TOKEN_TTL_BOUNDS.min,
      TOKEN_TTL_BOUNDS.max,
    ),
    ...(input.tokenSigningKeyId !== undefined && {
      tokenSigningKeyId: nonEmpty('tokenSigningKeyId', input.tokenSigningKeyId),
    }),
  };
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
  const credentialMode = oneOf('credentialMode', input.credentialMode ?? DEFAULTS.credentialMode, [
    'user_key',
    'app_id',
    'oauth',
  ]);
  return {
    serviceId,
    platformUrl: platformUrl(input.platformUrl ?? DEFAULTS.platformUrl),
    platformAuthKind: oneOf('platformAuthKind', input.platformAuthKind ?? DEFAULTS.platformAuthKind, [
      'provider_key',
      'service_token',
    ]),
    ...(platformCredential !== undefined && { platformCredential }),
    ...(platformCredentialSecretArn !== undefined && { platformCredentialSecretArn }),
    credentialMode,
    credentialHeader: headerName('credentialHeader', input.credentialHeader ?? DEFAULTS.credentialHeader),
    appIdHeader: headerName('appIdHeader', input.appIdHeader ?? DEFAULTS.appIdHeader),
    appKeyHeader: headerName('appKeyHeader', input.appKeyHeader ?? DEFAULTS.appKeyHeader),
    credentialLocation: oneOf('credentialLocation', input.credentialLocation ?? DEFAULTS.credentialLocation, [
      'header',
      'query',
    ]),
    ...tokenSettings(input, credentialMode),
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
  credentialLocation: 'CREDENTIAL_LOCATION',
  oidcIssuer: 'OIDC_ISSUER',
  oidcJwksUrl: 'OIDC_JWKS_URL',
  oidcAudience: 'OIDC_AUDIENCE',
  oidcAlgorithms: 'OIDC_ALGORITHMS',
  oidcClientIdClaim: 'OIDC_CLIENT_ID_CLAIM',
  tokenTtlSeconds: 'TOKEN_TTL_SECONDS',
  tokenSigningKeyId: 'TOKEN_SIGNING_KEY_ID',
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

/** A comma-separated list; undefined when unset or empty. */
function envList(env: Env, name: string): string[] | undefined {
  const raw = env[name];
  if (raw === undefined || raw.trim() === '') return undefined;
  return raw.split(',').map((item) => item.trim());
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
      credentialLocation: (env[ENV.credentialLocation] || undefined) as CredentialLocation | undefined,
      oidcIssuer: env[ENV.oidcIssuer] || undefined,
      oidcJwksUrl: env[ENV.oidcJwksUrl] || undefined,
      oidcAudience: env[ENV.oidcAudience] || undefined,
      oidcAlgorithms: envList(env, ENV.oidcAlgorithms),
      oidcClientIdClaim: (env[ENV.oidcClientIdClaim] || undefined) as TokenClientIdClaim | undefined,
      tokenTtlSeconds: envInteger(env, ENV.tokenTtlSeconds),
      tokenSigningKeyId: env[ENV.tokenSigningKeyId] || undefined,
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
    [ENV.credentialLocation]: config.credentialLocation,
    [ENV.oidcIssuer]: config.oidcIssuer,
    // Only an external issuer's keys URL: the built-in one follows the issuer.
    [ENV.oidcJwksUrl]: config.oidcExternalIssuer ? config.oidcJwksUrl : undefined,
    [ENV.oidcAudience]: config.oidcAudience,
    [ENV.oidcAlgorithms]: config.oidcAlgorithms.join(','),
    [ENV.oidcClientIdClaim]: config.oidcClientIdClaim,
    [ENV.tokenTtlSeconds]: String(config.tokenTtlSeconds),
    [ENV.tokenSigningKeyId]: config.tokenSigningKeyId,
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
  };
  return defined(env) as Record<string, string>;
}
