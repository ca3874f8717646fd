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
import {
  type AccessConfig,
  type AccessConfigInput,
  ConfigError,
  type CredentialMode,
  type FailureMode,
  integer,
  type LimitMode,
  type MappingRule,
  nonEmpty,
  oneOf,
  type PlatformAuthKind,
} from '../lambdas/core/config';
import { type SettingNameIn, type SettingValues, settingNamesIn } from '../lambdas/core/settings';
import { CACHE_ENGINES, type CacheEngine, type ExistingRedisEndpoint, REDIS_PORT } from './parts/cache';
import { VPC_AZS } from './parts/network';
import type { SoapRouteSettings } from './parts/soap';

/**
 * Settings of the table (lambdas/core/settings.ts) that the construct takes in seconds as a Duration prop,
 * as CDK constructs do; every other `cdk` setting of the table is a prop of the same name.
 */
export const DURATION_PROPS = {
  reportWindowSeconds: 'reportWindow',
  negativeCacheTtlSeconds: 'negativeCacheTtl',
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
   * `user_key`: consumers send the `apikey` header; `app_id`: consumers send `app_id` and `app_key` headers.
   * @default 'user_key'
   */
  readonly credentialMode?: CredentialMode;
  /**
   * Which calls count on which metric.
   * @default none: every call counts 1 hit
   */
  readonly mappingRules?: readonly MappingRule[];
  /**
   * What happens while the platform is unreachable: `strict`, `resilient` or `allow`.
   * @default 'strict'
   */
  readonly failureMode?: FailureMode;
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
   * An existing Redis instead of a new replication group. Requires `vpc`.
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
}

export type { SoapRouteSettings } from './parts/soap';

const CACHE_NODE_TYPE = /^cache\.[a-z0-9]+\.[a-z0-9]+$/;

function wholeSeconds(setting: string, duration: Duration | undefined): number | undefined {
  if (duration === undefined) return undefined;
  try {
    return duration.toSeconds();
  } catch {
    throw new ConfigError(setting, `must be a whole number of seconds (got ${duration.toHumanString()})`);
  }
}

/** The settings parseConfig does not know: the AWS resources, refused together where they conflict. */
export function validateResourceProps(props: ApiAccessAuthorizerProps, config: AccessConfig): void {
  if (!config.platformUrl.startsWith('https://')) {
    throw new ConfigError(
      'platformUrl',
      `must be an https:// URL in AWS: over http:// the provider key would cross the internet in clear (got ${config.platformUrl})`,
    );
  }
  if (props.natGateways !== undefined) {
    if (props.vpc) throw new ConfigError('natGateways', 'applies to a new VPC, and the vpc prop is given');
    integer('natGateways', props.natGateways, 1, VPC_AZS);
  }
  if (props.cacheNodeType !== undefined && !CACHE_NODE_TYPE.test(props.cacheNodeType)) {
    throw new ConfigError(
      'cacheNodeType',
      `must be an ElastiCache node type such as cache.t4g.micro (got ${props.cacheNodeType})`,
    );
  }
  if (props.cacheEngine !== undefined) oneOf('cacheEngine', props.cacheEngine, Object.keys(CACHE_ENGINES));
  if (props.redis) {
    if (!props.vpc) throw new ConfigError('redis', 'needs the vpc it is reachable in (set the vpc prop too)');
    nonEmpty('redis.host', props.redis.host);
    integer('redis.port', props.redis.port ?? REDIS_PORT, 1, 65535);
    const newCacheSettings = ['multiAz', 'cacheNodeType', 'cacheEngine', 'cacheSubnets'] as const;
    if (newCacheSettings.some((setting) => props[setting] !== undefined)) {
      throw new ConfigError(
        'redis',
        `is given, so ${newCacheSettings.join(', ')} (new-cache settings) must not be`,
      );
    }
  }
}

/** The props parseConfig validates, as its input: the table's `cdk` settings, Durations in seconds. */
export function configInputOf(props: ApiAccessAuthorizerProps): AccessConfigInput {
  const settings = settingNamesIn('cdk').map((name) => {
    if (name in DURATION_PROPS) {
      const prop = DURATION_PROPS[name as keyof typeof DURATION_PROPS];
      return [name, wholeSeconds(prop, props[prop])];
    }
    return [name, props[name as keyof SettingProps]];
  });
  return Object.fromEntries(settings) as AccessConfigInput;
}
