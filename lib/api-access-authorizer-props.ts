/**
 * ApiAccessAuthorizer's props, and the checks of those parseConfig does not know (the AWS resources).
 */

import type { Duration } from 'aws-cdk-lib';
import type { IVpc, SubnetSelection } from 'aws-cdk-lib/aws-ec2';
import type { Schedule } from 'aws-cdk-lib/aws-events';
import type { IKey } from 'aws-cdk-lib/aws-kms';
import type { RetentionDays } from 'aws-cdk-lib/aws-logs';
import type { ISecret } from 'aws-cdk-lib/aws-secretsmanager';
import type { ITopic } from 'aws-cdk-lib/aws-sns';
import type { Throttles } from '../core/budget/throttles';
import {
  type AccessConfig,
  type AccessConfigInput,
  type AlertLevel,
  ConfigError,
  type CredentialMode,
  type FailureMode,
  integer,
  knownFields,
  type LimitMode,
  type MappingRule,
  nonEmpty,
  oneOf,
  type PlatformAuthKind,
  REDIS_MODES,
} from '../core/settings/config';
import {
  DEFAULT_PLATFORM_URL,
  type SettingNameIn,
  type SettingValues,
  settingNamesIn,
} from '../core/settings/settings';
import type { ApiAccessAuthorizer } from './api-access-authorizer';
import { cacheNodeTypeProblem } from './cache-node-types';
import type { MappingRulesSettings, MappingRulesSource } from './mapping-rules-source';
import {
  CACHE_ENGINES,
  type CacheEngine,
  type ExistingRedisEndpoint,
  REDIS_PORT,
  SERVERLESS_LIMIT_BOUNDS,
  type ServerlessCacheLimits,
} from './parts/cache';
import { VPC_AZS } from './parts/network';
import type { PortalSettings } from './parts/portal';
import type { SoapRouteSettings } from './parts/soap';

/**
 * Settings of the table (core/settings/settings.ts) that the construct takes in seconds as a Duration prop,
 * as CDK constructs do; every other `cdk` setting of the table is a prop of the same name.
 */
export const DURATION_PROPS = {
  reportWindowSeconds: 'reportWindow',
  negativeCacheTtlSeconds: 'negativeCacheTtl',
  strictTrustSeconds: 'strictTrust',
  tokenGuessWindowSeconds: 'tokenGuessWindow',
} as const satisfies Partial<Record<SettingNameIn<'cdk'>, string>>;

type SettingProps = Partial<Pick<SettingValues, Exclude<SettingNameIn<'cdk'>, keyof typeof DURATION_PROPS>>>;
type DurationProps = { readonly [K in (typeof DURATION_PROPS)[keyof typeof DURATION_PROPS]]?: Duration };

export interface ApiAccessAuthorizerProps extends SettingProps, DurationProps {
  /** The platform's service id. */
  readonly serviceId: string;
  /** Secret whose SecretString is the provider key (or the service token, see `platformAuthKind`). */
  readonly platformCredential: ISecret;
  /**
   * The customer-managed KMS key `platformCredential` is encrypted with: the functions get kms:Decrypt on
   * it, through Secrets Manager only.
   * @default none: the secret uses the AWS-managed key
   */
  readonly platformCredentialKey?: IKey;
  /**
   * What `platformCredential` holds.
   * @default 'provider_key'
   */
  readonly platformAuthKind?: PlatformAuthKind;
  /**
   * Base URL of the platform's Service Management API; https only, or the provider key would travel in clear.
   * @default DEFAULT_PLATFORM_URL (the hosted platform)
   */
  readonly platformUrl?: string;
  /**
   * `user_key`: consumers send the `apikey` header; `app_id`: consumers send `app_id` and `app_key` headers;
   * `oauth`: consumers send an access token (Bearer or `access_token`). Its issuer is built in (a KMS key
   * and a token function on `POST /oauth/token` of the protected API, whose URL is the issuer unless
   * `oidcIssuer` names one), or external with `oidcIssuer` and `oidcJwksUrl` (see docs/oauth.md).
   * @default 'user_key'
   */
  readonly credentialMode?: CredentialMode;
  /**
   * The header consumers send the user key in (`user_key` mode); API Gateway requires it before it calls
   * the authorizer (the identity source follows). Matched case-insensitively. Providers moving from API
   * Gateway API keys can keep `x-api-key`.
   * @default 'apikey'
   */
  readonly credentialHeader?: string;
  /**
   * The header consumers send the application id in (`app_id` mode); the identity source follows.
   * @default 'app_id'
   */
  readonly appIdHeader?: string;
  /**
   * The header consumers send the application key in (`app_id` mode).
   * @default 'app_key'
   */
  readonly appKeyHeader?: string;
  /**
   * Which calls count on which metric. Same as `mappingRulesSource: MappingRulesSource.given(rules)`.
   * @default none: every call counts 1 hit
   */
  readonly mappingRules?: readonly MappingRule[];
  /**
   * Where the mapping rules come from: `MappingRulesSource.given(rules)`, or
   * `MappingRulesSource.platform({ environment, refresh })`, the service's proxy configuration read from the
   * platform with the admin token (needs `adminApiUrl` and `adminTokenSecretArn`; the authorizer then reads
   * the token too).
   * @default MappingRulesSource.given(mappingRules)
   */
  readonly mappingRulesSource?: MappingRulesSource;
  /**
   * Per-application throttles by plan system name, enforced at the edge by GCRA in the authorization
   * script: `{ "Pro": { rate: 10, burst: 20 } }` allows each application of plan Pro 20 calls at once and
   * 10 per second sustained; `metrics: { search: { rate, burst } }` throttles one metric's usage. Throttled
   * calls are refused with `rate_limited` and never reach the platform (docs/throttling.md).
   * @default none: no plan is throttled
   */
  readonly throttles?: Throttles;
  /**
   * What happens while the platform is unreachable: `strict`, `resilient` or `allow`.
   * @default 'strict'
   */
  readonly failureMode?: FailureMode;
  /**
   * `failureMode` strict: how long a budget's cached answer allows calls after the platform last
   * confirmed it (its first call, the reporter's resync). Past it the platform is asked, and the call is
   * refused (`platform_unavailable`) when it cannot answer. Keep it above two report windows.
   * @default Duration.seconds(60)
   */
  readonly strictTrust?: Duration;
  /**
   * `hard` refuses calls over a limit; `soft` lets them through and counts them.
   * @default 'hard'
   */
  readonly limitMode?: LimitMode;
  /**
   * At most one usage message per credential per window; also the queue's delivery delay. Zero reports every call.
   * @default Duration.seconds(10)
   */
  readonly reportWindow?: Duration;
  /**
   * How long an unknown or invalid credential stays refused from the cache.
   * @default Duration.seconds(60)
   */
  readonly negativeCacheTtl?: Duration;
  /**
   * Built-in issuer: the window in which failed client checks count toward `tokenGuessesPerAddress` and
   * `tokenGuessesPerClient` (docs/oauth.md).
   * @default Duration.minutes(5)
   */
  readonly tokenGuessWindow?: Duration;
  /**
   * Built-in issuer: failed client checks one source address may make per window before the token
   * endpoint answers 429 without asking the platform; lower than `tokenGuessesPerClient`.
   * @default 10
   */
  readonly tokenGuessesPerAddress?: number;
  /**
   * Built-in issuer: failed checks of one client id per window, from all addresses, before 429.
   * @default 100
   */
  readonly tokenGuessesPerClient?: number;
  /**
   * Another instance whose network (VPC, NAT gateways) and cache this one uses: two services, or dev
   * beside prod, in one account and Region with one NAT and one Redis. This instance's functions get a
   * security group of their own in that VPC, admitted to that Redis; budgets never mix (Redis keys carry
   * the service id). The other instance keeps the cache's alarms. Not with the props of a network or a
   * cache of its own: `vpc`, `natGateways`, `functionSubnets`, `cacheSubnets`, `redis`, `multiAz`,
   * `cacheNodeType`, `cacheEngine`, `redisShards`, `replicasPerShard`, `redisServerless`,
   * `serverlessLimits` (docs/construct-library.md, "Several services").
   * @default none: the instance builds its own network and cache, or uses `vpc` and `redis`
   */
  readonly shareNetworkAndCacheOf?: ApiAccessAuthorizer;
  /**
   * The VPC for the Lambdas and the cache. Needs private subnets with egress to reach the platform.
   * @default a new VPC: two AZs, public subnets with NAT gateways, private subnets for the Lambdas,
   * isolated subnets for Redis
   */
  readonly vpc?: IVpc;
  /**
   * NAT gateways of the new VPC: one per AZ keeps platform calls up when an AZ fails; 1 costs less.
   * @default 2 (one per AZ), or 1 when multiAz is false
   */
  readonly natGateways?: number;
  /**
   * Subnets of the authorizer and reporter Lambdas.
   * @default the VPC's private subnets with egress
   */
  readonly functionSubnets?: SubnetSelection;
  /**
   * Subnets of the Redis replication group.
   * @default the VPC's isolated subnets, or the function subnets when it has none
   */
  readonly cacheSubnets?: SubnetSelection;
  /**
   * The topic usage messages go through.
   * @default a new topic that accepts only TLS publishers
   */
  readonly topic?: ITopic;
  /**
   * An existing Redis instead of a new cache (standalone, or a cluster with `mode: 'cluster'`). Requires `vpc`.
   * @default a new ElastiCache replication group
   */
  readonly redis?: ExistingRedisEndpoint;
  /**
   * A primary and one replica in another AZ with automatic failover; `false` is a single-node development
   * setup (and one NAT gateway, unless natGateways says otherwise).
   * @default true
   */
  readonly multiAz?: boolean;
  /**
   * Node type of a new cache.
   * @default 'cache.t4g.micro'
   */
  readonly cacheNodeType?: string;
  /**
   * Engine of a new cache: `redis`, or `valkey` (the same protocol; its nodes cost less).
   * @default 'redis'
   */
  readonly cacheEngine?: CacheEngine;
  /**
   * Shards (1-500) of a new replication group with cluster mode enabled: each shard's primary takes the
   * authorizations of its part of the budgets. The functions connect in cluster mode.
   * @default cluster mode disabled: one primary
   */
  readonly redisShards?: number;
  /**
   * Replicas of each shard's primary (0-5), with `redisShards`. With one or more, the group is Multi-AZ
   * and each shard fails over on its own.
   * @default 1, or 0 when multiAz is false
   */
  readonly replicasPerShard?: number;
  /**
   * An ElastiCache Serverless cache instead of a replication group: it scales by itself; the functions
   * connect to it in cluster mode, over TLS with AUTH.
   * @default false
   */
  readonly redisServerless?: boolean;
  /**
   * Usage limits of the serverless cache, with `redisServerless`.
   * @default no limits but the service's own
   */
  readonly serverlessLimits?: ServerlessCacheLimits;
  /**
   * When the sweep flushes usage whose message was lost.
   * @default every minute
   */
  readonly sweepSchedule?: Schedule;
  /** @default DEFAULT_LOG_RETENTION (one month) */
  readonly logRetention?: RetentionDays;
  /**
   * X-Ray active tracing of the Lambdas. At low traffic, tracing every call costs more than API Gateway.
   * @default false
   */
  readonly tracing?: boolean;
  /**
   * Interactive documentation on every protected RestApi, open to anyone: `GET /docs` (Swagger UI) and
   * `GET /docs/swagger.json` (Swagger 2.0: routes, the metric each counts, the credential scheme), served
   * by a small Lambda. Opt-in: the routes publish the route list and the mapping rules, and they would take
   * `/docs` from an `ANY /{proxy+}` backend. The repository's own stack turns them on.
   * @default false
   */
  readonly docs?: boolean;
  /**
   * Usage alerts at these percentages of a limit (any of 50, 80, 90, 100, 120, 150, 200, 300): the reporter
   * publishes each to the alerts topic. `[]` turns alerts off: no topic.
   * @default [80, 100]
   */
  readonly alertLevels?: readonly AlertLevel[];
  /**
   * Addresses subscribed to the alerts topic by e-mail (each confirms the subscription first). They get a
   * readable sentence per alert; other subscribers get the JSON body.
   * @default none
   */
  readonly alertEmails?: readonly string[];
  /**
   * The admin portal's origin (`https://<tenant>-admin.3scale.net`): with `adminTokenSecretArn`, the
   * reporter asks its Account Management API (`applications/find`) which application a user key belongs to,
   * so usage alerts carry the application's name (docs/alerts.md).
   * @default none: alerts name a user_key application by the key's last four characters and its plan
   */
  readonly adminApiUrl?: string;
  /**
   * Secrets Manager ARN (complete, with its suffix) holding an Account Management API access token with
   * read scope as its SecretString; only the reporter and the sweep may read it.
   * @default none
   */
  readonly adminTokenSecretArn?: string;
  /**
   * The topic usage alerts go to; only the reporter and the sweep may publish to it.
   * @default a new topic that accepts only TLS publishers (when `alertLevels` is not empty)
   */
  readonly alertsTopic?: ITopic;
  /**
   * A CloudWatch dashboard of calls allowed and denied, and usage alerts, per platform metric.
   * @default true
   */
  readonly dashboard?: boolean;
  /**
   * Where the alarms (and their recoveries) are sent.
   * @default no action: the alarms show in the CloudWatch console only
   */
  readonly alarmTopic?: ITopic;
  /**
   * The SOAP route: `POST <soapPath>` on each protected RestApi, served by the SOAP access proxy, which
   * decides with the same core and forwards allowed calls to `soapBackendUrl` (https only).
   * @default no SOAP route
   */
  readonly soap?: SoapRouteSettings;
  /**
   * The name that tells this instance's metrics apart from another's in the account and Region (two
   * services, or dev beside prod): every metric carries the dimension `instance` =
   * `<serviceId>/<instanceName>`, and the alarms and the dashboard read it.
   * @default the stack's name
   */
  readonly instanceName?: string;
  /**
   * The platform's webhooks: `POST /webhooks/platform` on each protected RestApi, open to the platform
   * with a generated token (Secrets Manager) in the URL's query, served by a receiver in the VPC that
   * refreshes the changed application's budget at once. Paste the URL the stack outputs into the
   * platform's webhook setting. Without it, a change at the platform applies within a report window.
   * @default false: no webhook route
   */
  readonly webhooks?: boolean;
  /**
   * The developer portal (docs/portal.md): `/portal` on each protected REST or HTTP API, its own origin:
   * sign-up with the platform's `account_approval_required`, magic-link sign-in, the application's
   * credentials shown once, key rolls, and the documentation with the developer's ids filled in. Needs
   * `adminApiUrl`, an `rw` admin token and an SES identity; costs nothing at rest.
   * @default no portal
   */
  readonly portal?: PortalSettings;
}

export type { PortalMailSettings, PortalSettings } from './parts/portal';
export type { SoapRouteSettings } from './parts/soap';

/** The hosted platform's domain: its one Service Management API host is the default's, the rest are portals. */
const HOSTED_PLATFORM_DOMAIN = '3scale.net';

/**
 * What is wrong with `platformUrl` as the Service Management API's base URL, by its shape, not one host:
 * a portal (a hosted tenant's developer or admin portal, a self-managed `<name>-admin` host or an
 * `/admin` path) does not answer authorize and report calls, and an endpoint URL would have the
 * endpoint's path added twice. A path prefix (a backend behind a reverse proxy) is a base URL too.
 */
export function platformUrlProblem(platformUrl: string): string | undefined {
  const url = new URL(platformUrl);
  const host = url.hostname.toLowerCase();
  const path = url.pathname.replace(/\/+$/, '');
  const give = `give the Service Management API's base URL: ${DEFAULT_PLATFORM_URL} on the hosted platform (the default), or your own backend listener's origin`;
  if (url.username !== '' || url.password !== '') {
    return `must not carry credentials (the platform credential is a secret of its own): ${give}`;
  }
  if (url.search !== '' || url.hash !== '')
    return `is a base URL, with no query or fragment (got ${platformUrl}): ${give}`;
  if (/^\/transactions(\/|\.|$)/.test(path) || /\.(xml|json)$/i.test(path)) {
    return `is an endpoint's URL (${platformUrl}); the authorizer adds the endpoints' paths itself: ${give}`;
  }
  const firstLabel = host.split('.')[0] ?? '';
  if (firstLabel.endsWith('-admin') || /^(\/p)?\/admin(\/|$)/.test(path)) {
    return `is an admin portal (${platformUrl}), which does not answer authorize and report calls: ${give}`;
  }
  const hosted = new URL(DEFAULT_PLATFORM_URL).hostname;
  if (host !== hosted && (host === HOSTED_PLATFORM_DOMAIN || host.endsWith(`.${HOSTED_PLATFORM_DOMAIN}`))) {
    return `is a portal of the hosted platform (${platformUrl}), which does not answer authorize and report calls: ${give}`;
  }
  return undefined;
}

function wholeSeconds(setting: string, duration: Duration | undefined): number | undefined {
  if (duration === undefined) return undefined;
  try {
    return duration.toSeconds();
  } catch {
    throw new ConfigError(setting, `must be a whole number of seconds (got ${duration.toHumanString()})`);
  }
}

/** The props that are not settings of the table: the AWS resources and the construct's own options. */
type ResourcePropName = Exclude<
  keyof ApiAccessAuthorizerProps,
  SettingNameIn<'cdk'> | (typeof DURATION_PROPS)[keyof typeof DURATION_PROPS]
>;

/** Every resource prop, so a misspelt prop from JavaScript is refused, not dropped (the compiler keeps it whole). */
const RESOURCE_PROPS: Record<ResourcePropName, true> = {
  mappingRulesSource: true,
  platformCredential: true,
  platformCredentialKey: true,
  shareNetworkAndCacheOf: true,
  vpc: true,
  natGateways: true,
  functionSubnets: true,
  cacheSubnets: true,
  topic: true,
  redis: true,
  multiAz: true,
  cacheNodeType: true,
  cacheEngine: true,
  redisShards: true,
  replicasPerShard: true,
  redisServerless: true,
  serverlessLimits: true,
  sweepSchedule: true,
  logRetention: true,
  tracing: true,
  docs: true,
  alertsTopic: true,
  dashboard: true,
  alarmTopic: true,
  soap: true,
  webhooks: true,
  instanceName: true,
  portal: true,
};

/** The props of one credential mode: given in another, they would be dropped without a word. */
const CREDENTIAL_MODE_PROPS = {
  credentialHeader: 'user_key',
  appIdHeader: 'app_id',
  appKeyHeader: 'app_id',
} as const satisfies Partial<Record<keyof ApiAccessAuthorizerProps, CredentialMode>>;

/** The name of every prop the construct reads. */
export function knownPropNames(): string[] {
  const durations: Record<string, string> = DURATION_PROPS;
  const settings = settingNamesIn('cdk').map((name) => durations[name] ?? name);
  return [...settings, ...Object.keys(RESOURCE_PROPS)];
}

/**
 * Checks what TypeScript checks, for an app in JavaScript: every prop is one the construct reads, one of
 * the credential mode in use, and the platform credential a Secrets Manager secret. Runs before anything
 * reads the props, so a wrong one is a ConfigError naming it, never a TypeError.
 */
export function validatePropNames(props: ApiAccessAuthorizerProps): void {
  knownFields('props', props, knownPropNames());
  const credential = props.platformCredential as Partial<ISecret> | undefined;
  if (typeof credential?.secretArn !== 'string' || typeof credential.grantRead !== 'function') {
    throw new ConfigError(
      'platformCredential',
      `must be a Secrets Manager secret (an ISecret) whose SecretString is the provider key, such as Secret.fromSecretNameV2(this, 'ProviderKey', 'apigw-access/provider-key'); got ${whatWasGiven(credential)}`,
    );
  }
  const mode = props.credentialMode ?? 'user_key';
  for (const [prop, itsMode] of Object.entries(CREDENTIAL_MODE_PROPS)) {
    if (props[prop as keyof typeof CREDENTIAL_MODE_PROPS] !== undefined && mode !== itsMode) {
      throw new ConfigError(prop, `applies to credentialMode ${itsMode}, and credentialMode is ${mode}`);
    }
  }
}

function whatWasGiven(value: unknown): string {
  if (value === undefined || value === null) return String(value);
  if (typeof value !== 'object') return `a ${typeof value} (${JSON.stringify(value)})`;
  return `an object without secretArn and grantRead (${Object.keys(value).slice(0, 5).join(', ') || 'no fields'})`;
}

/** The settings parseConfig does not know: the AWS resources, refused together where they conflict. */
export function validateResourceProps(props: ApiAccessAuthorizerProps, config: AccessConfig): void {
  if (!/^[0-9]+$/.test(config.serviceId)) {
    throw new ConfigError(
      'serviceId',
      `must be the platform's numeric service id (the admin portal shows it on the API's overview, and in its Service Management API settings); got ${JSON.stringify(config.serviceId)}`,
    );
  }
  const platformUrlIssue = platformUrlProblem(config.platformUrl);
  if (platformUrlIssue !== undefined) throw new ConfigError('platformUrl', platformUrlIssue);
  if (!config.platformUrl.startsWith('https://')) {
    throw new ConfigError(
      'platformUrl',
      `must be an https:// URL in AWS: over http:// the provider key would cross the internet in clear (got ${config.platformUrl})`,
    );
  }
  validateSharing(props);
  if (props.natGateways !== undefined) {
    if (props.vpc) throw new ConfigError('natGateways', 'applies to a new VPC, and the vpc prop is given');
    integer('natGateways', props.natGateways, 1, VPC_AZS);
  }
  const nodeTypeProblem =
    props.cacheNodeType === undefined ? undefined : cacheNodeTypeProblem(props.cacheNodeType);
  if (nodeTypeProblem !== undefined) throw new ConfigError('cacheNodeType', nodeTypeProblem);
  if (props.cacheEngine !== undefined) oneOf('cacheEngine', props.cacheEngine, Object.keys(CACHE_ENGINES));
  validateCacheLayout(props);
  if (props.redis) {
    knownFields('redis', props.redis, REDIS_ENDPOINT_FIELDS);
    if (!props.vpc) throw new ConfigError('redis', 'needs the vpc it is reachable in (set the vpc prop too)');
    nonEmpty('redis.host', props.redis.host);
    integer('redis.port', props.redis.port ?? REDIS_PORT, 1, 65535);
    if (props.redis.mode !== undefined) oneOf('redis.mode', props.redis.mode, REDIS_MODES);
    const newCacheSettings = [
      'multiAz',
      'cacheNodeType',
      'cacheEngine',
      'cacheSubnets',
      'redisShards',
      'replicasPerShard',
      'redisServerless',
      'serverlessLimits',
    ] as const;
    if (newCacheSettings.some((setting) => props[setting] !== undefined)) {
      throw new ConfigError(
        'redis',
        `is given, so ${newCacheSettings.join(', ')} (new-cache settings) must not be`,
      );
    }
  }
}

/** The props of a network and a cache of the instance's own: with `shareNetworkAndCacheOf`, another's are used. */
const SHARED_NETWORK_AND_CACHE_PROPS = [
  'vpc',
  'natGateways',
  'functionSubnets',
  'cacheSubnets',
  'redis',
  'multiAz',
  'cacheNodeType',
  'cacheEngine',
  'redisShards',
  'replicasPerShard',
  'redisServerless',
  'serverlessLimits',
] as const satisfies readonly (keyof ApiAccessAuthorizerProps)[];

/** `shareNetworkAndCacheOf` names an instance, and no prop of a network or cache of this one's own. */
function validateSharing(props: ApiAccessAuthorizerProps): void {
  const shared = props.shareNetworkAndCacheOf;
  if (shared === undefined) return;
  if (typeof shared !== 'object' || shared === null || !('networkAndCache' in shared)) {
    throw new ConfigError(
      'shareNetworkAndCacheOf',
      `must be another ApiAccessAuthorizer of the app; got ${shared === null ? 'null' : typeof shared}`,
    );
  }
  const given = SHARED_NETWORK_AND_CACHE_PROPS.filter((prop) => props[prop] !== undefined);
  if (given.length > 0) {
    throw new ConfigError(
      'shareNetworkAndCacheOf',
      `is given (${shared.node.path}), so ${given.join(', ')} must not be: the network and the cache are that instance's`,
    );
  }
}

/** The fields of ExistingRedisEndpoint: a misspelt one from JavaScript is refused, not dropped. */
const REDIS_ENDPOINT_FIELDS = [
  'host',
  'port',
  'tls',
  'authSecret',
  'securityGroup',
  'mode',
] as const satisfies readonly (keyof ExistingRedisEndpoint)[];

/** Most nodes (primaries and replicas) one cluster-mode-enabled replication group may have. */
const MAX_CLUSTER_NODES = 500;

/** Shards, replicas and serverless: which new cache, with settings that fit it. */
function validateCacheLayout(props: ApiAccessAuthorizerProps): void {
  const { redisShards, replicasPerShard, serverlessLimits } = props;
  if (props.redisServerless) {
    const nodeSettings = ['redisShards', 'replicasPerShard', 'cacheNodeType'] as const;
    const given = nodeSettings.filter((setting) => props[setting] !== undefined);
    if (given.length > 0) {
      throw new ConfigError(
        'redisServerless',
        `is true, so ${given.join(', ')} (settings of a replication group's nodes) must not be given: a serverless cache has no nodes to size`,
      );
    }
  } else if (serverlessLimits !== undefined) {
    throw new ConfigError('serverlessLimits', 'apply to a serverless cache: set redisServerless too');
  }
  if (serverlessLimits !== undefined) {
    knownFields('serverlessLimits', serverlessLimits, Object.keys(SERVERLESS_LIMIT_BOUNDS));
  }
  for (const [limit, [min, max]] of Object.entries(SERVERLESS_LIMIT_BOUNDS)) {
    const value = serverlessLimits?.[limit as keyof ServerlessCacheLimits];
    if (value !== undefined) integer(`serverlessLimits.${limit}`, value, min, max);
  }
  if (replicasPerShard !== undefined) {
    if (redisShards === undefined) {
      throw new ConfigError('replicasPerShard', 'applies to a sharded cache: set redisShards too');
    }
    integer('replicasPerShard', replicasPerShard, 0, 5);
    if (replicasPerShard === 0 && props.multiAz === true) {
      throw new ConfigError(
        'replicasPerShard',
        'is 0, so no shard has a replica in another AZ: multiAz must not be true',
      );
    }
  }
  if (redisShards !== undefined) {
    integer('redisShards', redisShards, 1, MAX_CLUSTER_NODES);
    const nodes = redisShards * (1 + shardReplicas(props));
    if (nodes > MAX_CLUSTER_NODES) {
      throw new ConfigError(
        'redisShards',
        `with ${shardReplicas(props)} replicas each makes ${nodes} nodes, over the ${MAX_CLUSTER_NODES} one cluster may have`,
      );
    }
  }
}

/** The replicas of each shard: as given, or one in another AZ unless multiAz is false. */
export function shardReplicas(props: ApiAccessAuthorizerProps): number {
  return props.replicasPerShard ?? (props.multiAz === false ? 0 : 1);
}

/** The props parseConfig validates, as its input. */
export function configInputOf(props: ApiAccessAuthorizerProps): AccessConfigInput {
  const settings = settingNamesIn('cdk').map((name) => {
    if (name in DURATION_PROPS) {
      const prop = DURATION_PROPS[name as keyof typeof DURATION_PROPS];
      return [name, wholeSeconds(prop, props[prop])];
    }
    return [name, props[name as keyof SettingProps]];
  });
  return { ...(Object.fromEntries(settings) as AccessConfigInput), ...mappingRulesSettingsOf(props) };
}

function mappingRulesSettingsOf(props: ApiAccessAuthorizerProps): MappingRulesSettings {
  const source = props.mappingRulesSource;
  if (source === undefined) return {};
  if (typeof source !== 'object' || source === null || typeof source.settings !== 'object') {
    throw new ConfigError(
      'mappingRulesSource',
      'must be MappingRulesSource.given(rules) or MappingRulesSource.platform({ environment })',
    );
  }
  if (props.mappingRules !== undefined) {
    throw new ConfigError(
      'mappingRules',
      'is given beside mappingRulesSource: give the rules as MappingRulesSource.given(rules) only',
    );
  }
  return source.settings;
}
