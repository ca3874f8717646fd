import { Duration } from 'aws-cdk-lib';
import { Metric } from 'aws-cdk-lib/aws-cloudwatch';
import { type ISecurityGroup, SecurityGroup, type SubnetSelection } from 'aws-cdk-lib/aws-ec2';
import { CfnParameterGroup, CfnReplicationGroup, CfnSubnetGroup } from 'aws-cdk-lib/aws-elasticache';
import { type ISecret, Secret } from 'aws-cdk-lib/aws-secretsmanager';
import { NagSuppressions } from 'cdk-nag';
import type { Construct } from 'constructs';
import { DEFAULTS } from '../../lambdas/core/config';
import { ALARM_PERIOD, maxOf } from './alarms';
import type { RedisEndpoint } from './bindings';
import type { AccessNetwork } from './network';
import type { AccessPart, AlarmSpec } from './part';

/** The specification's cache port. */
export const REDIS_PORT = DEFAULTS.redisPort;

/**
 * The engines a new cache may run. Valkey speaks the Redis protocol and runs the same Lua scripts; on
 * ElastiCache its nodes cost less than Redis OSS nodes of the same type.
 */
export const CACHE_ENGINES = {
  redis: { engine: 'redis', engineVersion: '7.1', parameterGroupFamily: 'redis7' },
  valkey: { engine: 'valkey', engineVersion: '8.0', parameterGroupFamily: 'valkey8' },
} as const;

export type CacheEngine = keyof typeof CACHE_ENGINES;

/** The cache the access functions use, whoever runs it. */
export interface AccessCache extends AccessPart {
  readonly endpoint: RedisEndpoint;
  /** The AUTH token, when the cache has one. */
  readonly authSecret?: ISecret;
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
}

/** The provider's own Redis: admitted to, not created, and not alarmed on (the provider watches it). */
export class ExistingRedisCache implements AccessCache {
  public readonly alarms: readonly AlarmSpec[] = [];
  public readonly endpoint: RedisEndpoint;
  public readonly authSecret?: ISecret;

  constructor(network: AccessNetwork, existing: ExistingRedisEndpoint) {
    this.endpoint = { host: existing.host, port: existing.port ?? REDIS_PORT, tls: existing.tls ?? true };
    this.authSecret = existing.authSecret;
    network.admitFunctionsTo(existing.securityGroup, this.endpoint.port, 'Redis');
  }
}

export interface ReplicationGroupCacheProps {
  readonly network: AccessNetwork;
  /** A primary and one replica in another AZ with automatic failover; one node otherwise. */
  readonly multiAz: boolean;
  readonly nodeType: string;
  readonly engine: CacheEngine;
  readonly subnets: SubnetSelection;
}

/** Sustained levels at which a cache node needs attention (a larger node type, or fewer keys). */
const CACHE_ALARM_PERCENT = 80;
const CACHE_ALARM_PERIODS = 3;

/**
 * A new ElastiCache replication group: TLS, encryption at rest, an AUTH token generated into Secrets
 * Manager, a security group that admits only the access functions, and an eviction policy that never
 * drops unreported usage.
 */
export class ReplicationGroupCache implements AccessCache {
  public readonly alarms: readonly AlarmSpec[];
  public readonly endpoint: RedisEndpoint;
  public readonly authSecret: Secret;
  public readonly replicationGroup: CfnReplicationGroup;

  constructor(scope: Construct, props: ReplicationGroupCacheProps) {
    const { network, multiAz } = props;
    const engine = CACHE_ENGINES[props.engine];
    this.authSecret = new Secret(scope, 'RedisAuthToken', {
      description: 'AUTH token of the API access-management Redis',
      // AUTH tokens are 16-128 printable characters without @, " or /: alphanumerics are always safe.
      generateSecretString: { excludePunctuation: true, passwordLength: 64 },
    });
    NagSuppressions.addResourceSuppressions(this.authSecret, [
      {
        id: 'AwsSolutions-SMG4',
        reason:
          'An ElastiCache AUTH token changes only through a modify call with the ROTATE strategy, which no Secrets Manager rotation function performs.',
      },
    ]);
    const securityGroup = new SecurityGroup(scope, 'RedisSecurityGroup', {
      vpc: network.vpc,
      description: 'API access Redis: admits only the access Lambdas on the Redis port',
      allowAllOutbound: false,
    });
    network.admitFunctionsTo(securityGroup, REDIS_PORT, 'Redis');
    const subnetGroup = new CfnSubnetGroup(scope, 'RedisSubnets', {
      description: 'Subnets of the API access-management Redis',
      subnetIds: network.vpc.selectSubnets(props.subnets).subnetIds,
    });
    // Pending and in-flight usage carry no TTL: evicting them would lose reported calls. Under memory
    // pressure only keys with a TTL (cached answers, window flags) may go, which costs a platform call.
    const parameterGroup = new CfnParameterGroup(scope, 'RedisParameters', {
      cacheParameterGroupFamily: engine.parameterGroupFamily,
      description: 'API access-management cache: never evict unreported usage',
      properties: { 'maxmemory-policy': 'volatile-lru' },
    });
    this.replicationGroup = new CfnReplicationGroup(scope, 'Redis', {
      replicationGroupDescription: 'API access-management cache',
      engine: engine.engine,
      engineVersion: engine.engineVersion,
      cacheNodeType: props.nodeType,
      numCacheClusters: multiAz ? 2 : 1,
      automaticFailoverEnabled: multiAz,
      multiAzEnabled: multiAz,
      port: REDIS_PORT,
      transitEncryptionEnabled: true,
      atRestEncryptionEnabled: true,
      // A dynamic reference: CloudFormation resolves the token at deploy time; the template holds only the ARN.
      authToken: this.authSecret.secretValue.unsafeUnwrap(),
      cacheSubnetGroupName: subnetGroup.ref,
      cacheParameterGroupName: parameterGroup.ref,
      securityGroupIds: [securityGroup.securityGroupId],
      autoMinorVersionUpgrade: true,
    });
    NagSuppressions.addResourceSuppressions(this.replicationGroup, [
      {
        id: 'AwsSolutions-AEC5',
        reason:
          "Port 6379 is the specification's cache port, and only the access Lambdas' security group reaches it.",
      },
    ]);
    this.endpoint = { host: this.replicationGroup.attrPrimaryEndPointAddress, port: REDIS_PORT, tls: true };
    this.alarms = this.nodeAlarms(multiAz ? 2 : 1);
  }

  /** ElastiCache names a replication group's member clusters `<group id>-001`, `-002`, ... */
  private nodeMetric(metricName: string, nodes: number): Metric[] {
    return Array.from(
      { length: nodes },
      (_, i) =>
        new Metric({
          namespace: 'AWS/ElastiCache',
          metricName,
          dimensionsMap: { CacheClusterId: `${this.replicationGroup.ref}-00${i + 1}` },
          statistic: 'Average',
          period: ALARM_PERIOD,
        }),
    );
  }

  private nodeAlarms(nodes: number): AlarmSpec[] {
    const sustained = Duration.minutes(ALARM_PERIOD.toMinutes() * CACHE_ALARM_PERIODS).toHumanString();
    return [
      {
        id: 'RedisCpu',
        description: `Redis engine CPU at or above ${CACHE_ALARM_PERCENT}% on a node for ${sustained}: the authorizer's latency grows; consider a larger node type.`,
        metric: maxOf('Redis engine CPU % (highest node)', this.nodeMetric('EngineCPUUtilization', nodes)),
        threshold: CACHE_ALARM_PERCENT,
        evaluationPeriods: CACHE_ALARM_PERIODS,
      },
      {
        id: 'RedisMemory',
        description: `Redis memory at or above ${CACHE_ALARM_PERCENT}% on a node for ${sustained}: cached answers start being evicted (each costs a platform call); consider a larger node type.`,
        metric: maxOf(
          'Redis memory % (highest node)',
          this.nodeMetric('DatabaseMemoryUsagePercentage', nodes),
        ),
        threshold: CACHE_ALARM_PERCENT,
        evaluationPeriods: CACHE_ALARM_PERIODS,
      },
    ];
  }
}
