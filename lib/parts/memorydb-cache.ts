import { Metric } from 'aws-cdk-lib/aws-cloudwatch';
import type { SecurityGroup, SubnetSelection } from 'aws-cdk-lib/aws-ec2';
import { CfnACL, CfnCluster, CfnParameterGroup, CfnSubnetGroup, CfnUser } from 'aws-cdk-lib/aws-memorydb';
import type { Secret } from 'aws-cdk-lib/aws-secretsmanager';
import type { Construct } from 'constructs';
import { CACHE_USER_ACCESS_STRING } from '../../core/budget/cache-user';
import { ALARM_PERIOD } from './alarms';
import type { RedisEndpoint } from './bindings';
import {
  type AccessCache,
  authTokenSecret,
  CACHE_ENGINES,
  type CacheEngine,
  cacheIdentifier,
  cacheSecurityGroup,
  cpuAndMemoryAlarms,
  REDIS_PORT,
} from './cache';
import type { AccessNetwork } from './network';
import type { AlarmSpec } from './part';

/** An Amazon MemoryDB cluster as the cache (the `memoryDb` prop). */
export interface MemoryDbCacheOptions {
  /**
   * Shards (1-250), each a primary with one replica in another AZ: each shard's primary takes the
   * authorizations of its part of the budgets.
   * @default 1
   */
  readonly shards?: number;
  /**
   * Node type of every primary and replica: a MemoryDB type, `db.<family>.<size>`.
   * @default 'db.t4g.small'
   */
  readonly nodeType?: string;
}

/** Bounds MemoryDB accepts: at most 500 nodes a cluster, two per shard here. */
export const MEMORYDB_SHARDS = [1, 250] as const;
export const DEFAULT_MEMORYDB_NODE_TYPE = 'db.t4g.small';
/** One replica per shard: a failover promotes it, and the transaction log keeps what was acknowledged. */
export const MEMORYDB_REPLICAS_PER_SHARD = 1;

/** Why `nodeType` is not a MemoryDB node type, or undefined when it is. */
export function memoryDbNodeTypeProblem(nodeType: string): string | undefined {
  return /^db\.[a-z0-9]+\.[a-z0-9]+$/.test(nodeType)
    ? undefined
    : `must be a MemoryDB node type such as db.t4g.small or db.r7g.large; got ${nodeType}`;
}

export interface MemoryDbCacheProps {
  readonly network: AccessNetwork;
  readonly engine: CacheEngine;
  readonly subnets: SubnetSelection;
  readonly options: MemoryDbCacheOptions;
}

/**
 * A new Amazon MemoryDB cluster: durable, as MemoryDB acknowledges a write only once its Multi-AZ
 * transaction log holds it, so a failover loses no usage the functions were told was counted. Always
 * a cluster to its clients, TLS on, one replica per shard placed by MemoryDB in another AZ of the
 * subnet group, a security group that admits only the access functions, and an ACL whose one user
 * (the functions') authenticates with its name and a password generated into Secrets Manager; the
 * template carries only the secret's dynamic reference. The user may run only what the scripts need
 * (core/budget/cache-user.ts). The eviction policy never drops unreported usage, as on ElastiCache.
 */
export class MemoryDbCache implements AccessCache {
  public readonly alarms: readonly AlarmSpec[];
  public readonly endpoint: RedisEndpoint;
  public readonly authSecret: Secret;
  public readonly securityGroup: SecurityGroup;
  public readonly cluster: CfnCluster;

  constructor(scope: Construct, props: MemoryDbCacheProps) {
    const { network, options } = props;
    const engine = CACHE_ENGINES[props.engine];
    this.authSecret = authTokenSecret(scope, 'Password of the API access-management MemoryDB user');
    this.securityGroup = cacheSecurityGroup(scope, network);
    const subnetGroup = new CfnSubnetGroup(scope, 'RedisSubnets', {
      subnetGroupName: cacheIdentifier(scope, 'subnets'),
      description: 'Subnets of the API access-management MemoryDB cluster',
      subnetIds: network.vpc.selectSubnets(props.subnets).subnetIds,
    });
    const parameterGroup = new CfnParameterGroup(scope, 'RedisParameters', {
      parameterGroupName: cacheIdentifier(scope, 'parameters'),
      family: engine.memoryDb.parameterGroupFamily,
      description: 'API access-management cache: never evict unreported usage',
      // MemoryDB evicts nothing by default (noeviction): a full cluster would refuse every write. Cached
      // answers and window flags carry a TTL and may go; pending and in-flight usage carry none.
      parameters: { 'maxmemory-policy': 'volatile-lru' },
    });
    const userName = cacheIdentifier(scope, 'access');
    const user = new CfnUser(scope, 'RedisUser', {
      userName,
      accessString: CACHE_USER_ACCESS_STRING,
      // A dynamic reference: CloudFormation resolves the password at deploy time; the template holds only the ARN.
      authenticationMode: { Type: 'password', Passwords: [this.authSecret.secretValue.unsafeUnwrap()] },
    });
    // A user's Ref is its name: the ACL waits for the user it names.
    const acl = new CfnACL(scope, 'RedisAcl', {
      aclName: cacheIdentifier(scope, 'acl'),
      userNames: [user.ref],
    });
    this.cluster = new CfnCluster(scope, 'Redis', {
      clusterName: cacheIdentifier(scope, 'cache'),
      description: 'API access-management cache (durable)',
      engine: engine.engine,
      engineVersion: engine.memoryDb.engineVersion,
      nodeType: options.nodeType ?? DEFAULT_MEMORYDB_NODE_TYPE,
      numShards: options.shards ?? 1,
      numReplicasPerShard: MEMORYDB_REPLICAS_PER_SHARD,
      aclName: acl.ref,
      tlsEnabled: true,
      port: REDIS_PORT,
      subnetGroupName: subnetGroup.ref,
      parameterGroupName: parameterGroup.ref,
      securityGroupIds: [this.securityGroup.securityGroupId],
      autoMinorVersionUpgrade: true,
    });
    this.endpoint = {
      host: this.cluster.attrClusterEndpointAddress,
      port: REDIS_PORT,
      tls: true,
      mode: 'cluster',
      username: userName,
    };
    this.alarms = this.clusterAlarms();
  }

  /** The busiest node's CPU and memory: MemoryDB's ClusterName metrics, at their maximum over the nodes. */
  private clusterAlarms(): AlarmSpec[] {
    const metric = (metricName: string) =>
      new Metric({
        namespace: 'AWS/MemoryDB',
        metricName,
        dimensionsMap: { ClusterName: this.cluster.clusterName },
        statistic: 'Maximum',
        period: ALARM_PERIOD,
      });
    return cpuAndMemoryAlarms('MemoryDB', {
      cpu: metric('EngineCPUUtilization'),
      memory: metric('DatabaseMemoryUsagePercentage'),
    });
  }
}
