/**
 * The settings table: every setting of the authorizer and reporter, once, with its environment variable,
 * its check, its default and where a provider may give it. The Lambda environment reader and writer
 * (config.ts), the local stack file (local/stack-file.ts), the CDK context (lib/access-context.ts) and the
 * construct's props (lib/api-access-authorizer-props.ts) are all derived from it, so a new setting is one
 * entry here and the compiler points at every place that must offer it.
 */

import { type Throttles, validateThrottles } from '../budget/throttles';
import {
  ConfigError,
  emailAddress,
  headerName,
  httpUrl,
  integer,
  knownFields,
  nonEmpty,
  oneOf,
} from './validation';

export const DEFAULT_PLATFORM_URL = 'https://su1.3scale.net';

/** The longest a built-in issuer's access token may live: a day. */
export const MAX_TOKEN_TTL_SECONDS = 86_400;

/** SQS caps the delivery delay, and so the report window, at 15 minutes. */
export const MAX_REPORT_WINDOW_SECONDS = 900;

export const CREDENTIAL_MODES = ['user_key', 'app_id', 'oauth'] as const;
export type CredentialMode = (typeof CREDENTIAL_MODES)[number];
export const FAILURE_MODES = ['strict', 'resilient', 'allow'] as const;
export type FailureMode = (typeof FAILURE_MODES)[number];
export const LIMIT_MODES = ['hard', 'soft'] as const;
export type LimitMode = (typeof LIMIT_MODES)[number];
export const PLATFORM_AUTH_KINDS = ['provider_key', 'service_token'] as const;
export type PlatformAuthKind = (typeof PLATFORM_AUTH_KINDS)[number];
/** Where user_key and app_id credentials travel: request headers (API Gateway's habit) or the query string. */
export const CREDENTIAL_LOCATIONS = ['header', 'query'] as const;
export type CredentialLocation = (typeof CREDENTIAL_LOCATIONS)[number];
/** The claim of an access token that names the client (the platform application). */
export const TOKEN_CLIENT_ID_CLAIMS = ['client_id', 'azp'] as const;
export type TokenClientIdClaim = (typeof TOKEN_CLIENT_ID_CLAIMS)[number];
/**
 * Where the mapping rules come from: `given` (the `mappingRules` setting) or `platform` (the service's proxy
 * configuration on the platform, read with the admin access token and refreshed, as APIcast reads it).
 */
export const MAPPING_RULES_SOURCES = ['given', 'platform'] as const;
export type MappingRulesSource = (typeof MAPPING_RULES_SOURCES)[number];
/** The proxy configuration environments (porta's `staging`, stored as `sandbox`, and `production`). */
export const PROXY_ENVIRONMENTS = ['staging', 'production'] as const;
export type ProxyEnvironment = (typeof PROXY_ENVIRONMENTS)[number];
/** mappingRulesSource platform: APIcast's own default environment (THREESCALE_DEPLOYMENT_ENV). */
export const DEFAULT_PROXY_ENVIRONMENT: ProxyEnvironment = 'production';
/** mappingRulesSource platform: how old the rules may get before they are read again (5 minutes). */
export const DEFAULT_RULES_REFRESH_SECONDS = 300;
export const RULES_REFRESH_BOUNDS = { min: 1, max: 86_400 } as const;
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

/** The usage percentages the platform lets a service alert at (apisonator's ALERT_BINS, without 0). */
export const ALERT_LEVELS = [50, 80, 90, 100, 120, 150, 200, 300] as const;
export type AlertLevel = (typeof ALERT_LEVELS)[number];

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

export interface MappingRule {
  /** HTTP method, upper case, or `ANY`. */
  readonly method: string;
  /** Path pattern: `{param}` wildcards, optional trailing `$` anchor, optional query part. */
  readonly pattern: string;
  /** Metric or method system name. */
  readonly metric: string;
  /** Usage added per match; a non-negative integer. */
  readonly delta: number;
  /** When it matches, the rules after it are not tried (APIcast's `last`). */
  readonly last?: boolean;
}

/**
 * Where a provider may give a setting besides the Lambda environment: `stackFile` (a gateway of the local
 * stack file) and `cdk` (a `-c` context key of the stack and a prop of the construct, same name).
 */
export type SettingSource = 'stackFile' | 'cdk';

export interface Setting<T> {
  /** The environment variable the CDK writes and the Lambdas read. */
  readonly env: string;
  readonly sources: readonly SettingSource[];
  /** Applies the default to an absent value and checks the result; throws a ConfigError naming `setting`. */
  parse(setting: string, value: unknown): T;
  /** A value as an environment variable or `-c` context carries it, before `parse`. */
  fromText(setting: string, text: string): unknown;
  /** The environment variable's text of a parsed value; undefined leaves the variable out. */
  toText(value: T): string | undefined;
}

interface Entry {
  readonly env: string;
  readonly sources?: readonly SettingSource[];
}

/** A setting whose sources are known to the compiler, so each source's list of names is a type. */
type Sourced<T, E extends Entry> = Setting<T> & {
  readonly sources: E['sources'] extends readonly SettingSource[] ? E['sources'] : readonly [];
};

const asString = (_setting: string, text: string): unknown => text;

function numberText(name: string, text: string): unknown {
  const value = Number(text);
  if (text.trim() === '' || !Number.isFinite(value)) {
    throw new ConfigError(name, `must be a number (got ${JSON.stringify(text)})`);
  }
  return value;
}

function setting<T, const E extends Entry>(
  entry: E,
  parse: Setting<T>['parse'],
  fromText: Setting<T>['fromText'] = asString,
  toText: Setting<T>['toText'] = (value) => (value === undefined ? undefined : String(value)),
): Sourced<T, E> {
  return { sources: [], ...entry, parse, fromText, toText } as unknown as Sourced<T, E>;
}

function required<const E extends Entry>(entry: E): Sourced<string, E> {
  return setting(entry, nonEmpty);
}

function optional<const E extends Entry>(entry: E): Sourced<string | undefined, E> {
  return setting(entry, (name, value) => (value === undefined ? undefined : nonEmpty(name, value)));
}

function choice<T extends string, const E extends Entry>(
  entry: E,
  allowed: readonly T[],
  fallback: T,
): Sourced<T, E> {
  return setting(entry, (name, value) => oneOf(name, value ?? fallback, allowed));
}

function wholeNumber<const E extends Entry>(
  entry: E,
  bounds: { min: number; max: number },
  fallback: number,
): Sourced<number, E> {
  return setting(
    entry,
    (name, value) => integer(name, value ?? fallback, bounds.min, bounds.max),
    numberText,
  );
}

function header<const E extends Entry>(entry: E, fallback: string): Sourced<string, E> {
  return setting(entry, (name, value) => headerName(name, value ?? fallback));
}

function baseUrl<const E extends Entry>(entry: E, fallback: string): Sourced<string, E> {
  return setting(entry, (name, value) => {
    httpUrl(name, value ?? fallback);
    return String(value ?? fallback).replace(/\/+$/, '');
  });
}

function json<T, const E extends Entry>(entry: E, parse: Setting<T>['parse']): Sourced<T, E> {
  return setting(
    entry,
    parse,
    (name, text) => {
      try {
        return JSON.parse(text);
      } catch {
        throw new ConfigError(name, 'must be valid JSON');
      }
    },
    (value) => JSON.stringify(value),
  );
}

function optionalChoice<T extends string, const E extends Entry>(
  entry: E,
  allowed: readonly T[],
): Sourced<T | undefined, E> {
  return setting(entry, (name, value) => (value === undefined ? undefined : oneOf(name, value, allowed)));
}

function optionalWholeNumber<const E extends Entry>(
  entry: E,
  bounds: { min: number; max: number },
): Sourced<number | undefined, E> {
  return setting(
    entry,
    (name, value) => (value === undefined ? undefined : integer(name, value, bounds.min, bounds.max)),
    numberText,
  );
}

function optionalUrl<const E extends Entry>(entry: E): Sourced<string | undefined, E> {
  return setting(entry, (name, value) => {
    if (value === undefined) return undefined;
    httpUrl(name, value);
    return String(value).replace(/\/+$/, '');
  });
}

/** A non-empty list of allowed values, written as `a,b` in the environment and in `-c` context. */
function list<T extends string, const E extends Entry>(
  entry: E,
  allowed: readonly T[],
  fallback: readonly T[],
): Sourced<readonly T[], E> {
  return setting(
    entry,
    (name, value) => {
      const given = value ?? fallback;
      if (!Array.isArray(given) || given.length === 0) {
        throw new ConfigError(name, `must list at least one of ${allowed.join(', ')}`);
      }
      return [...new Set(given.map((item, i) => oneOf(`${name}[${i}]`, item, allowed)))];
    },
    (_name, text) => text.split(',').map((item) => item.trim()),
    (value) => value.join(','),
  );
}

/** E-mail addresses, possibly none, written as `a@example.com,b@example.com`; each once. */
function emailList<const E extends Entry>(entry: E): Sourced<readonly string[], E> {
  return setting(
    entry,
    (name, value) => {
      const given = value ?? [];
      if (!Array.isArray(given)) throw new ConfigError(name, 'must be a list of email addresses');
      return [...new Set(given.map((item, i) => emailAddress(`${name}[${i}]`, item)))];
    },
    (_name, text) => text.split(',').map((item) => item.trim()),
    (value) => (value.length === 0 ? undefined : value.join(',')),
  );
}

const HTTP_METHODS = new Set(['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD', 'OPTIONS', 'ANY']);

export function validateMappingRules(rules: unknown, setting = 'mappingRules'): MappingRule[] {
  if (!Array.isArray(rules)) throw new ConfigError(setting, 'must be an array of mapping rules');
  return rules.map((value: unknown, i) => {
    const at = `${setting}[${i}]`;
    const rule: Partial<MappingRule> = knownFields(at, value, [
      'method',
      'pattern',
      'metric',
      'delta',
      'last',
    ]);
    const method = nonEmpty(`${at}.method`, rule.method).toUpperCase();
    if (!HTTP_METHODS.has(method)) {
      throw new ConfigError(`${at}.method`, `must be an HTTP method or ANY (got ${rule.method})`);
    }
    const pattern = nonEmpty(`${at}.pattern`, rule.pattern);
    if (!pattern.startsWith('/'))
      throw new ConfigError(`${at}.pattern`, `must start with / (got ${pattern})`);
    const metric = nonEmpty(`${at}.metric`, rule.metric);
    const delta = integer(`${at}.delta`, rule.delta ?? 1, 0, 1_000_000);
    if (rule.last !== undefined && typeof rule.last !== 'boolean') {
      throw new ConfigError(`${at}.last`, `must be true or false (got ${JSON.stringify(rule.last)})`);
    }
    return { method, pattern, metric, delta, ...(rule.last === true && { last: true }) };
  });
}

const EVERYWHERE = ['stackFile', 'cdk'] as const;

export const SETTINGS = {
  /** The platform's service id. */
  serviceId: required({ env: 'SERVICE_ID', sources: EVERYWHERE }),
  /** Base URL of the platform's Service Management API. */
  platformUrl: baseUrl({ env: 'PLATFORM_URL', sources: EVERYWHERE }, DEFAULT_PLATFORM_URL),
  /** What the platform credential is: a provider key or a service token. */
  platformAuthKind: choice(
    { env: 'PLATFORM_AUTH_KIND', sources: ['cdk'] },
    PLATFORM_AUTH_KINDS,
    'provider_key',
  ),
  /** Secrets Manager ARN holding the provider key or service token as its SecretString (AWS). */
  platformCredentialSecretArn: optional({ env: 'PLATFORM_CREDENTIAL_SECRET_ARN' }),
  /**
   * The `instance` dimension of every metric, `<service id>/<instanceName or stack name>` (set by the
   * construct; AWS).
   */
  metricsInstance: optional({ env: 'METRICS_INSTANCE' }),
  /** How consumers identify: a user key, or an application's id and key. */
  credentialMode: choice({ env: 'CREDENTIAL_MODE', sources: EVERYWHERE }, CREDENTIAL_MODES, 'user_key'),
  /** The header carrying the user key; matched case-insensitively. */
  credentialHeader: header({ env: 'CREDENTIAL_HEADER', sources: EVERYWHERE }, 'apikey'),
  /** The header carrying the app id. */
  appIdHeader: header({ env: 'APP_ID_HEADER', sources: EVERYWHERE }, 'app_id'),
  /** The header carrying the app key. */
  appKeyHeader: header({ env: 'APP_KEY_HEADER', sources: EVERYWHERE }, 'app_key'),
  /**
   * Where user_key and app_id credentials travel: headers, or the query string as the platform gateway reads
   * them.
   */
  credentialLocation: choice(
    { env: 'CREDENTIAL_LOCATION', sources: EVERYWHERE },
    CREDENTIAL_LOCATIONS,
    'header',
  ),
  /** Oauth mode: the tokens' issuer (`iss`); without oidcJwksUrl, the built-in issuer at this URL. */
  oidcIssuer: optionalUrl({ env: 'OIDC_ISSUER', sources: EVERYWHERE }),
  /** Oauth mode: an external OpenID provider's JWKS; default the built-in issuer's. */
  oidcJwksUrl: optionalUrl({ env: 'OIDC_JWKS_URL', sources: EVERYWHERE }),
  /** Oauth mode: the `aud` a token must carry; default the issuer URL. */
  oidcAudience: optional({ env: 'OIDC_AUDIENCE', sources: EVERYWHERE }),
  /** Oauth mode: signature algorithms accepted (asymmetric only). */
  oidcAlgorithms: list({ env: 'OIDC_ALGORITHMS', sources: EVERYWHERE }, TOKEN_ALGORITHMS, ['ES256', 'RS256']),
  /** Oauth mode: the claim naming the client; default client_id, then azp. */
  oidcClientIdClaim: optionalChoice(
    { env: 'OIDC_CLIENT_ID_CLAIM', sources: EVERYWHERE },
    TOKEN_CLIENT_ID_CLAIMS,
  ),
  /** Lifetime of the built-in issuer's access tokens. */
  tokenTtlSeconds: wholeNumber(
    { env: 'TOKEN_TTL_SECONDS', sources: EVERYWHERE },
    { min: 60, max: MAX_TOKEN_TTL_SECONDS },
    3600,
  ),
  /** Built-in issuer: the window in which a client's and an address's failed checks count. */
  tokenGuessWindowSeconds: wholeNumber(
    { env: 'TOKEN_GUESS_WINDOW_SECONDS', sources: EVERYWHERE },
    { min: 10, max: 86_400 },
    300,
  ),
  /** Built-in issuer: failed client checks from one source address per window, then 429. */
  tokenGuessesPerAddress: wholeNumber(
    { env: 'TOKEN_GUESSES_PER_ADDRESS', sources: EVERYWHERE },
    { min: 1, max: 10_000 },
    10,
  ),
  /** Built-in issuer: failed checks of one client id per window, then 429; above the per-address bound. */
  tokenGuessesPerClient: wholeNumber(
    { env: 'TOKEN_GUESSES_PER_CLIENT', sources: EVERYWHERE },
    { min: 2, max: 100_000 },
    100,
  ),
  /** The KMS key the built-in issuer signs with (AWS). */
  tokenSigningKeyId: optional({ env: 'TOKEN_SIGNING_KEY_ID' }),
  /** Which calls count on which metric; none: every call counts 1 hit. */
  mappingRules: json({ env: 'MAPPING_RULES', sources: EVERYWHERE }, (name, value): readonly MappingRule[] =>
    validateMappingRules(value ?? [], name),
  ),
  /**
   * `given`: the `mappingRules` setting; `platform`: the service's proxy configuration on the platform, read
   * with the admin access token (`adminApiUrl`, `adminTokenSecretArn`), kept in Redis and refreshed
   * (docs/deploy.md).
   */
  mappingRulesSource: choice(
    { env: 'MAPPING_RULES_SOURCE', sources: ['stackFile'] },
    MAPPING_RULES_SOURCES,
    'given',
  ),
  /**
   * MappingRulesSource platform: the proxy configuration read, \`staging\` or \`production\`; default
   * ${DEFAULT_PROXY_ENVIRONMENT}.
   */
  mappingRulesEnvironment: optionalChoice(
    { env: 'MAPPING_RULES_ENVIRONMENT', sources: ['stackFile'] },
    PROXY_ENVIRONMENTS,
  ),
  /**
   * MappingRulesSource platform: how old the rules may get before one instance reads them again (a promotion
   * takes effect within it); default ${DEFAULT_RULES_REFRESH_SECONDS}.
   */
  mappingRulesRefreshSeconds: optionalWholeNumber(
    { env: 'MAPPING_RULES_REFRESH_SECONDS', sources: ['stackFile'] },
    RULES_REFRESH_BOUNDS,
  ),
  /** What happens while the platform is unreachable. */
  failureMode: choice({ env: 'FAILURE_MODE', sources: EVERYWHERE }, FAILURE_MODES, 'strict'),
  /**
   * FailureMode strict: how long a budget's cached answer allows calls after the platform last confirmed it.
   */
  strictTrustSeconds: wholeNumber(
    { env: 'STRICT_TRUST_SECONDS', sources: EVERYWHERE },
    { min: 1, max: 86_400 },
    60,
  ),
  /** `hard` refuses calls over a limit; `soft` lets them through and counts them. */
  limitMode: choice({ env: 'LIMIT_MODE', sources: EVERYWHERE }, LIMIT_MODES, 'hard'),
  /** At most one usage message per budget per window; also the queue delay; 0 reports every call. */
  reportWindowSeconds: wholeNumber(
    { env: 'REPORT_WINDOW_SECONDS', sources: EVERYWHERE },
    { min: 0, max: MAX_REPORT_WINDOW_SECONDS },
    10,
  ),
  /** How long an unknown or invalid credential stays refused from the cache. */
  negativeCacheTtlSeconds: wholeNumber(
    { env: 'NEGATIVE_CACHE_TTL_SECONDS', sources: EVERYWHERE },
    { min: 1, max: 86_400 },
    60,
  ),
  /** Deadline of the authorize and authrep calls on the request path. */
  platformTimeoutMs: wholeNumber(
    { env: 'PLATFORM_TIMEOUT_MS', sources: ['stackFile'] },
    { min: 50, max: 5000 },
    1000,
  ),
  /**
   * How long an authorizer instance refuses from memory a call over a limit (no longer than the limit's
   * reset), over a throttle (no longer than the throttle lets it wait) or a credential the platform refused;
   * 0 turns it off.
   */
  refusalMemoryMs: wholeNumber(
    { env: 'REFUSAL_MEMORY_MS', sources: ['stackFile'] },
    { min: 0, max: 10_000 },
    1000,
  ),
  /**
   * How often at most a Lambda instance writes its counts of calls (Allowed, Denied, CacheHit,
   * ReportPublished and the other ordinary outcomes) as one EMF log line; errors and what the alarms read
   * are written at once; 0 writes them after every invocation.
   */
  metricsFlushSeconds: wholeNumber(
    { env: 'METRICS_FLUSH_SECONDS', sources: ['stackFile'] },
    { min: 0, max: 900 },
    60,
  ),
  /**
   * Platform calls per second, across all instances, for credentials the cache has never seen; past it such
   * first calls are refused (platform_busy).
   */
  unseenCredentialCallsPerSecond: wholeNumber(
    { env: 'UNSEEN_CREDENTIAL_CALLS_PER_SECOND', sources: ['stackFile'] },
    { min: 1, max: 100_000 },
    100,
  ),
  /** Deadline of the reporter's platform calls, off the request path. */
  reportTimeoutMs: wholeNumber(
    { env: 'REPORT_TIMEOUT_MS', sources: ['stackFile'] },
    { min: 50, max: 60_000 },
    5000,
  ),
  /** The SNS topic usage messages go to (AWS). */
  topicArn: optional({ env: 'TOPIC_ARN' }),
  /**
   * Per plan: { "rate": calls per second, "burst": calls at once }, optionally per metric
   * (docs/throttling.md); none: no throttle.
   */
  throttles: json(
    { env: 'THROTTLES', sources: EVERYWHERE },
    (name, value): Throttles => validateThrottles(value ?? {}, name),
  ),
  /** Usage alerts at these percentages of a limit; [] turns alerts off. */
  alertLevels: json({ env: 'ALERT_LEVELS', sources: EVERYWHERE }, (name, value): readonly AlertLevel[] =>
    validateAlertLevels(value ?? [80, 100], name),
  ),
  /** E-mail addresses the CDK subscribes to the alerts topic (each confirms first). */
  alertEmails: emailList({ env: 'ALERT_EMAILS', sources: ['cdk'] }),
  /** The SNS topic usage alerts go to; without it the reporter sends none (AWS). */
  alertsTopicArn: optional({ env: 'ALERTS_TOPIC_ARN' }),
  /**
   * The admin portal's origin (Account Management API): with an admin token, usage alerts name user_key
   * applications (docs/alerts.md).
   */
  adminApiUrl: optionalUrl({ env: 'ADMIN_API_URL', sources: EVERYWHERE }),
  /**
   * Secrets Manager ARN holding an Account Management API access token (read) as its SecretString: the
   * reporter names user_key applications in alerts (AWS).
   */
  adminTokenSecretArn: optional({ env: 'ADMIN_TOKEN_SECRET_ARN', sources: ['cdk'] }),
} as const;

type Table = typeof SETTINGS;
export type SettingName = keyof Table;
type ValueOf<S> = S extends Setting<infer T> ? T : never;
type OptionalName = { [K in SettingName]: undefined extends ValueOf<Table[K]> ? K : never }[SettingName];

/** The parsed settings: optional ones (no default) may be absent. */
export type SettingValues = {
  readonly [K in Exclude<SettingName, OptionalName>]: ValueOf<Table[K]>;
} & { readonly [K in OptionalName]?: Exclude<ValueOf<Table[K]>, undefined> };

/** The settings a source offers. */
export type SettingNameIn<S extends SettingSource> = {
  [K in SettingName]: Table[K]['sources'] extends readonly (infer U)[] ? (S extends U ? K : never) : never;
}[SettingName];

export const SETTING_NAMES = Object.keys(SETTINGS) as SettingName[];

export function settingNamesIn<S extends SettingSource>(source: S): SettingNameIn<S>[] {
  return SETTING_NAMES.filter((name) => SETTINGS[name].sources.includes(source)) as SettingNameIn<S>[];
}

/** Environment variable names of the settings: the CDK writes them, the handlers read them. */
export const SETTING_ENV = Object.fromEntries(SETTING_NAMES.map((name) => [name, SETTINGS[name].env])) as {
  readonly [K in SettingName]: Table[K]['env'];
};

/** The value a setting takes when nobody gives it. */
export function defaultOf<K extends Exclude<SettingName, OptionalName | 'serviceId'>>(
  name: K,
): ValueOf<Table[K]> {
  return SETTINGS[name].parse(name, undefined) as ValueOf<Table[K]>;
}
