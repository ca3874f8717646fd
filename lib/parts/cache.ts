import { Duration, Names } from 'aws-cdk-lib';
import { Metric } from 'aws-cdk-lib/aws-cloudwatch';
import { type ISecurityGroup, SecurityGroup, type SubnetSelection } from 'aws-cdk-lib/aws-ec2';
import {
  CfnParameterGroup,
  CfnReplicationGroup,
  CfnServerlessCache,
  CfnSubnetGroup,
  CfnUser,
  CfnUserGroup,
} from 'aws-cdk-lib/aws-elasticache';
import { type ISecret, Secret } from 'aws-cdk-lib/aws-secretsmanager';
import type { Construct } from 'constructs';
import { DEFAULT_REDIS_PORT, type RedisMode } from '../../core/settings/config';
import { acknowledgeNagRules } from '../nag-acknowledgements';
import { ALARM_PERIOD, maxOf } from './alarms';
import type { RedisEndpoint } from './bindings';
import type { AccessNetwork } from './network';
import type { AccessPart, AlarmSpec } from './part';

/** The specification's cache port. */
export const REDIS_PORT = DEFAULT_REDIS_PORT;

/**
 * The engines a new cache may run. Valkey speaks the Redis protocol and runs the same Lua scripts; on
 * ElastiCache its nodes cost less than Redis OSS nodes of the same type.
 */
export const CACHE_ENGINES = {
  redis: {
    engine: 'redis',
    engineVersion: '7.1',
    parameterGroupFamily: 'redis7',
    serverlessMajorVersion: '7',
  },
  valkey: {
    engine: 'valkey',
    engineVersion: '8.0',
    parameterGroupFamily: 'valkey8',
    serverlessMajorVersion: '8',
  },
} as const;

export type CacheEngine = keyof typeof CACHE_ENGINES;

/** The cache the access functions use, whoever runs it. */
export interface AccessCache extends AccessPart {
  readonly endpoint: RedisEndpoint;
  /** The AUTH token, when the cache has one. */
  readonly authSecret?: ISecret;
  /** The cache's security group: whichever functions it admits may reach it. */
  readonly securityGroup: ISecurityGroup;
}

/** The cache as another instance sharing it reaches it: as a Redis that instance does not run. */
export function sharedEndpointOf(cache: AccessCache): ExistingRedisEndpoint {
  return {
    ...cache.endpoint,
    securityGroup: cache.securityGroup,
    ...(cache.authSecret && { authSecret: cache.authSecret }),
  };
}

/** A Redis the provider already runs. */
export interface ExistingRedisEndpoint {
  /** Primary endpoint host name. */
  readonly host: string;
  /** @default 6379 */
  readonly port?: number;
  /**
   * Whether the endpoint requires TLS.
   * @default true
   */
  readonly tls?: boolean;
  /**
   * Secret whose SecretString is the AUTH token.
   * @default no AUTH
   */
  readonly authSecret?: ISecret;
  /** The endpoint's security group: the functions' security group is admitted on the port. */
  readonly securityGroup: ISecurityGroup;
  /**
   * `cluster` for a Redis Cluster (ElastiCache with cluster mode enabled, or Serverless): `host` is then
   * its configuration endpoint, and the functions find every shard from it.
   * @default 'standalone'
   */
  readonly mode?: RedisMode;
}

/** The provider's own Redis: admitted to, not created, and not alarmed on (the provider watches it). */
export class ExistingRedisCache implements AccessCache {
  public readonly alarms: readonly AlarmSpec[] = [];
  public readonly endpoint: RedisEndpoint;
  public readonly authSecret?: ISecret;
  public readonly securityGroup: ISecurityGroup;

  constructor(network: AccessNetwork, existing: ExistingRedisEndpoint) {
    this.endpoint = {
      host: existing.host,
      port: existing.port ?? REDIS_PORT,
      tls: existing.tls ?? true,
      mode: existing.mode ?? 'standalone',
    };
    this.authSecret = existing.authSecret;
    this.securityGroup = existing.securityGroup;
    network.admitFunctionsTo(existing.securityGroup, this.endpoint.port, 'Redis');
  }
}

/** The shards of a cluster-mode-enabled replication group. */
export interface ShardLayout {
  readonly shards: number;
  /** Replicas of each shard's primary; with one or more, each shard fails over on its own. */
  readonly replicasPerShard: number;
}

export interface ReplicationGroupCacheProps {
  readonly network: AccessNetwork;
  /** A primary and one replica in another AZ with automatic failover; one node otherwise. */
  readonly multiAz: boolean;
  readonly nodeType: string;
  readonly engine: CacheEngine;
  readonly subnets: SubnetSelection;
  /**
   * Cluster mode enabled, with these shards (`multiAz` is then given by the replicas).
   * @default cluster mode disabled: one primary
   */
  readonly sharding?: ShardLayout;
}

/** Sustained levels at which a cache node needs attention (a larger node type, or fewer keys). */
const CACHE_ALARM_PERCENT = 80;
const CACHE_ALARM_PERIODS = 3;
/** CloudWatch evaluates at most ten metrics in one alarm's expression. */
const METRICS_PER_ALARM = 10;

/** The AUTH token of a new cache, generated into Secrets Manager. */
function authTokenSecret(scope: Construct): Secret {
  const secret = new Secret(scope, 'RedisAuthToken', {
    description: 'AUTH token of the API access-management Redis',
    // AUTH tokens are 16-128 printable characters without @, " or /: alphanumerics are always safe.
    generateSecretString: { excludePunctuation: true, passwordLength: 64 },
  });
  acknowledgeNagRules(secret, [
    {
      id: 'AwsSolutions-SMG4',
      reason:
        'An ElastiCache AUTH token or user password changes only through a modify call, which no Secrets Manager rotation function performs.',
    },
  ]);
  return secret;
}

/** The security group of a new cache: only the access functions reach it, on the Redis port. */
function cacheSecurityGroup(scope: Construct, network: AccessNetwork): SecurityGroup {
  const securityGroup = new SecurityGroup(scope, 'RedisSecurityGroup', {
    vpc: network.vpc,
    description: 'API access Redis: admits only the access Lambdas on the Redis port',
    allowAllOutbound: false,
  });
  network.admitFunctionsTo(securityGroup, REDIS_PORT, 'Redis');
  return securityGroup;
}

/**
 * A name unique in the account and region for one ElastiCache resource of `scope`: ElastiCache user,
 * user group and serverless cache ids take at most 40 lowercase letters, digits and hyphens, a letter
 * first (the stack name comes first).
 */
function cacheIdentifier(scope: Construct, suffix: string): string {
  const base = Names.uniqueResourceName(scope, { maxLength: 39 - suffix.length, separator: '-' });
  return `${base}-${suffix}`.toLowerCase();
}

/**
 * A new ElastiCache replication group: TLS, encryption at rest, an AUTH token generated into Secrets
 * Manager, a security group that admits only the access functions, and an eviction policy that never
 * drops unreported usage. With `sharding`, cluster mode is enabled: the keys spread over the shards by
 * their hash tag (one budget's keys stay together), and the functions connect in cluster mode through
 * the configuration endpoint.
 */
export class ReplicationGroupCache implements AccessCache {
  public readonly alarms: readonly AlarmSpec[];
  public readonly endpoint: RedisEndpoint;
  public readonly authSecret: Secret;
  public readonly securityGroup: SecurityGroup;
  public readonly replicationGroup: CfnReplicationGroup;

  constructor(scope: Construct, props: ReplicationGroupCacheProps) {
    const { network, sharding } = props;
    const engine = CACHE_ENGINES[props.engine];
    this.authSecret = authTokenSecret(scope);
    this.securityGroup = cacheSecurityGroup(scope, network);
    const subnetGroup = new CfnSubnetGroup(scope, 'RedisSubnets', {
      description: 'Subnets of the API access-management Redis',
      subnetIds: network.vpc.selectSubnets(props.subnets).subnetIds,
    });
    // Pending and in-flight usage carry no TTL: evicting them would lose reported calls. Under memory
    // pressure only keys with a TTL (cached answers, window flags) may go, which costs a platform call.
    const parameterGroup = new CfnParameterGroup(scope, 'RedisParameters', {
      cacheParameterGroupFamily: engine.parameterGroupFamily,
      description: 'API access-management cache: never evict unreported usage',
      properties: { 'maxmemory-policy': 'volatile-lru', ...(sharding && { 'cluster-enabled': 'yes' }) },
    });
    const multiAz = sharding ? sharding.replicasPerShard > 0 : props.multiAz;
    this.replicationGroup = new CfnReplicationGroup(scope, 'Redis', {
      replicationGroupDescription: 'API access-management cache',
      engine: engine.engine,
      engineVersion: engine.engineVersion,
      cacheNodeType: props.nodeType,
      ...(sharding
        ? {
            clusterMode: 'enabled',
            numNodeGroups: sharding.shards,
            replicasPerNodeGroup: sharding.replicasPerShard,
          }
        : { numCacheClusters: multiAz ? 2 : 1 }),
      // ElastiCache requires automatic failover on every cluster-mode-enabled group; it acts where a
      // shard has a replica to promote.
      automaticFailoverEnabled: multiAz || sharding !== undefined,
      multiAzEnabled: multiAz,
      port: REDIS_PORT,
      transitEncryptionEnabled: true,
      atRestEncryptionEnabled: true,
      // A dynamic reference: CloudFormation resolves the token at deploy time; the template holds only the ARN.
      authToken: this.authSecret.secretValue.unsafeUnwrap(),
      cacheSubnetGroupName: subnetGroup.ref,
      cacheParameterGroupName: parameterGroup.ref,
      securityGroupIds: [this.securityGroup.securityGroupId],
      autoMinorVersionUpgrade: true,
    });
    acknowledgeNagRules(this.replicationGroup, [
      {
        id: 'AwsSolutions-AEC5',
        reason:
          "Port 6379 is the specification's cache port, and only the access Lambdas' security group reaches it.",
      },
    ]);
    this.endpoint = sharding
      ? {
          host: this.replicationGroup.attrConfigurationEndPointAddress,
          port: REDIS_PORT,
          tls: true,
          mode: 'cluster',
        }
      : {
          host: this.replicationGroup.attrPrimaryEndPointAddress,
          port: REDIS_PORT,
          tls: true,
          mode: 'standalone',
        };
    this.alarms = this.nodeAlarms(this.memberClusterIds(sharding, multiAz));
  }

  /**
   * ElastiCache names a group's member clusters `<group id>-001`, `-002`, ... with cluster mode disabled,
   * and `<group id>-<shard 0001..>-<node 001..>` with it enabled.
   */
  private memberClusterIds(sharding: ShardLayout | undefined, multiAz: boolean): string[] {
    const group = this.replicationGroup.ref;
    const node = (n: number) => String(n).padStart(3, '0');
    if (!sharding) return Array.from({ length: multiAz ? 2 : 1 }, (_, i) => `${group}-${node(i + 1)}`);
    return Array.from({ length: sharding.shards }, (_, shard) =>
      Array.from(
        { length: 1 + sharding.replicasPerShard },
        (_, i) => `${group}-${String(shard + 1).padStart(4, '0')}-${node(i + 1)}`,
      ),
    ).flat();
  }

  /** One alarm per metric and per ten nodes (the first keeps the plain id), on the busiest node. */
  private nodeAlarms(clusterIds: readonly string[]): AlarmSpec[] {
    const sustained = Duration.minutes(ALARM_PERIOD.toMinutes() * CACHE_ALARM_PERIODS).toHumanString();
    const groups = Array.from({ length: Math.ceil(clusterIds.length / METRICS_PER_ALARM) }, (_, i) =>
      clusterIds.slice(i * METRICS_PER_ALARM, (i + 1) * METRICS_PER_ALARM),
    );
    const nodeMetrics = (metricName: string, ids: readonly string[]) =>
      ids.map(
        (id) =>
          new Metric({
            namespace: 'AWS/ElastiCache',
            metricName,
            dimensionsMap: { CacheClusterId: id },
            statistic: 'Average',
            period: ALARM_PERIOD,
          }),
      );
    return groups.flatMap((ids, i) => {
      const suffix = i === 0 ? '' : String(i + 1);
      const nodes =
        groups.length === 1
          ? 'highest node'
          : `highest of nodes ${i * METRICS_PER_ALARM + 1}-${i * METRICS_PER_ALARM + ids.length}`;
      return [
        {
          id: `RedisCpu${suffix}`,
          description: `Redis engine CPU at or above ${CACHE_ALARM_PERCENT}% on a node for ${sustained}: the authorizer's latency grows; consider a larger node type, or more shards.`,
          metric: maxOf(`Redis engine CPU % (${nodes})`, nodeMetrics('EngineCPUUtilization', ids)),
          threshold: CACHE_ALARM_PERCENT,
          evaluationPeriods: CACHE_ALARM_PERIODS,
        },
        {
          id: `RedisMemory${suffix}`,
          description: `Redis memory at or above ${CACHE_ALARM_PERCENT}% on a node for ${sustained}: cached answers start being evicted (each costs a platform call); consider a larger node type, or more shards.`,
          metric: maxOf(`Redis memory % (${nodes})`, nodeMetrics('DatabaseMemoryUsagePercentage', ids)),
          threshold: CACHE_ALARM_PERCENT,
          evaluationPeriods: CACHE_ALARM_PERIODS,
        },
      ];
    });
  }
}

/** Usage limits of a serverless cache: it scales up to these and throttles beyond. */
export interface ServerlessCacheLimits {
  /**
   * Most data the cache may hold, in GB (1-5000).
   * @default no limit but the service's own
   */
  readonly maxDataStorageGb?: number;
  /**
   * Most ElastiCache Processing Units per second (1000-15000000); a cached authorization is one script
   * call of a few ECPUs.
   * @default no limit but the service's own
   */
  readonly maxEcpuPerSecond?: number;
}

/** Bounds ElastiCache Serverless accepts for its usage limits. */
export const SERVERLESS_LIMIT_BOUNDS = {
  maxDataStorageGb: [1, 5000],
  maxEcpuPerSecond: [1000, 15_000_000],
} as const;

export interface ServerlessCacheProps {
  readonly network: AccessNetwork;
  readonly engine: CacheEngine;
  readonly subnets: SubnetSelection;
  /** @default no limits but the service's own */
  readonly limits?: ServerlessCacheLimits;
}

/**
 * A new ElastiCache Serverless cache. It is always a cluster to its clients (the functions connect in
 * cluster mode to its endpoint), always encrypted in transit and at rest, and scales by itself. It takes
 * no AUTH token: a user group whose `default` user has the password generated into Secrets Manager
 * gives the same AUTH the replication group has.
 */
export class ServerlessRedisCache implements AccessCache {
  public readonly alarms: readonly AlarmSpec[];
  public readonly endpoint: RedisEndpoint;
  public readonly authSecret: Secret;
  public readonly securityGroup: SecurityGroup;
  public readonly cache: CfnServerlessCache;

  constructor(scope: Construct, props: ServerlessCacheProps) {
    const { network, limits } = props;
    const engine = CACHE_ENGINES[props.engine];
    this.authSecret = authTokenSecret(scope);
    this.securityGroup = cacheSecurityGroup(scope, network);
    const user = new CfnUser(scope, 'RedisDefaultUser', {
      engine: engine.engine,
      userId: cacheIdentifier(scope, 'default'),
      userName: 'default',
      accessString: 'on ~* +@all',
      // A dynamic reference, as the replication group's AUTH token.
      authenticationMode: { Type: 'password', Passwords: [this.authSecret.secretValue.unsafeUnwrap()] },
    });
    const userGroup = new CfnUserGroup(scope, 'RedisUsers', {
      engine: engine.engine,
      userGroupId: cacheIdentifier(scope, 'users'),
      userIds: [user.ref],
    });
    this.cache = new CfnServerlessCache(scope, 'Redis', {
      serverlessCacheName: cacheIdentifier(scope, 'cache'),
      description: 'API access-management cache',
      engine: engine.engine,
      majorEngineVersion: engine.serverlessMajorVersion,
      securityGroupIds: [this.securityGroup.securityGroupId],
      subnetIds: network.vpc.selectSubnets(props.subnets).subnetIds,
      userGroupId: userGroup.ref,
      ...(limits && { cacheUsageLimits: usageLimits(limits) }),
    });
    this.endpoint = { host: this.cache.attrEndpointAddress, port: REDIS_PORT, tls: true, mode: 'cluster' };
    this.alarms = this.serverlessAlarms(limits);
  }

  private metric(metricName: string, statistic: string): Metric {
    return new Metric({
      namespace: 'AWS/ElastiCache',
      metricName,
      dimensionsMap: { clusterId: this.cache.serverlessCacheName },
      statistic,
      period: ALARM_PERIOD,
    });
  }

  private serverlessAlarms(limits: ServerlessCacheLimits | undefined): AlarmSpec[] {
    const sustained = Duration.minutes(ALARM_PERIOD.toMinutes() * CACHE_ALARM_PERIODS).toHumanString();
    const storage = limits?.maxDataStorageGb;
    return [
      {
        id: 'RedisThrottled',
        description: `The serverless cache throttled commands in each period for ${sustained} (traffic grew faster than it scales, or it reached its ECPU limit): throttled authorizations ask the platform instead. Raise the ECPU limit.`,
        metric: this.metric('ThrottledCmds', 'Sum'),
        threshold: 1,
        evaluationPeriods: CACHE_ALARM_PERIODS,
      },
      ...(storage === undefined
        ? []
        : [
            {
              id: 'RedisMemory',
              description: `The serverless cache holds ${CACHE_ALARM_PERCENT}% or more of its ${storage} GB limit for ${sustained}: at the limit cached answers are evicted (each costs a platform call). Raise the storage limit.`,
              metric: this.metric('BytesUsedForCache', 'Maximum'),
              threshold: Math.floor((storage * 1024 ** 3 * CACHE_ALARM_PERCENT) / 100),
              evaluationPeriods: CACHE_ALARM_PERIODS,
            },
          ]),
    ];
  }
}

function usageLimits(limits: ServerlessCacheLimits): CfnServerlessCache.CacheUsageLimitsProperty {
  return {
    ...(limits.maxDataStorageGb !== undefined && {
      dataStorage: { maximum: limits.maxDataStorageGb, unit: 'GB' },
    }),
    ...(limits.maxEcpuPerSecond !== undefined && { ecpuPerSecond: { maximum: limits.maxEcpuPerSecond } }),
  };
}
