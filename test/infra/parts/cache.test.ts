import { Stack } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import { SecurityGroup } from 'aws-cdk-lib/aws-ec2';
import { Secret } from 'aws-cdk-lib/aws-secretsmanager';
import { describe, expect, it } from 'vitest';
import { AccessAlarms } from '../../../lib/parts/alarms';
import {
  type CacheEngine,
  ExistingRedisCache,
  ReplicationGroupCache,
  type ServerlessCacheLimits,
  ServerlessRedisCache,
} from '../../../lib/parts/cache';
import { logicalId, resourcesOfType } from '../fixtures';
import { networkIn, partScope } from './fixtures';

function cache(options: { multiAz?: boolean; engine?: CacheEngine; nodeType?: string } = {}) {
  const { stack, scope } = partScope();
  const network = networkIn(scope);
  const part = new ReplicationGroupCache(scope, {
    network,
    multiAz: options.multiAz ?? true,
    nodeType: options.nodeType ?? 'cache.t4g.micro',
    engine: options.engine ?? 'redis',
    subnets: network.cacheSubnets,
  });
  new AccessAlarms(scope, 'Alarms', { specs: part.alarms });
  return { stack, part, template: Template.fromStack(stack) };
}

describe('ReplicationGroupCache', () => {
  const { part, template } = cache();
  const groupId = logicalId(template, 'AWS::ElastiCache::ReplicationGroup', 'AccessRedis');

  it('runs Redis 7.1 with the redis7 parameter family by default', () => {
    template.hasResourceProperties('AWS::ElastiCache::ReplicationGroup', {
      Engine: 'redis',
      EngineVersion: '7.1',
      CacheNodeType: 'cache.t4g.micro',
    });
    template.hasResourceProperties('AWS::ElastiCache::ParameterGroup', {
      CacheParameterGroupFamily: 'redis7',
    });
  });

  it('runs Valkey 8.0 with the valkey8 family, the same eviction policy and TLS, when asked', () => {
    const valkey = cache({ engine: 'valkey', nodeType: 'cache.t4g.small' }).template;
    valkey.hasResourceProperties('AWS::ElastiCache::ReplicationGroup', {
      Engine: 'valkey',
      EngineVersion: '8.0',
      CacheNodeType: 'cache.t4g.small',
      TransitEncryptionEnabled: true,
    });
    valkey.hasResourceProperties('AWS::ElastiCache::ParameterGroup', {
      CacheParameterGroupFamily: 'valkey8',
      Properties: { 'maxmemory-policy': 'volatile-lru' },
    });
  });

  it('offers its primary endpoint with TLS and its AUTH secret', () => {
    expect(part.endpoint.port).toBe(6379);
    expect(part.endpoint.tls).toBe(true);
    expect(part.authSecret).toBeDefined();
  });

  it('alarms on the CPU and memory of the busiest of its two nodes', () => {
    expect(part.alarms.map((alarm) => [alarm.id, alarm.threshold, alarm.evaluationPeriods])).toEqual([
      ['RedisCpu', 80, 3],
      ['RedisMemory', 80, 3],
    ]);
    const memberCluster = (n: string) => ({ 'Fn::Join': ['', [{ Ref: groupId }, `-00${n}`]] });
    for (const metricName of ['EngineCPUUtilization', 'DatabaseMemoryUsagePercentage']) {
      template.hasResourceProperties('AWS::CloudWatch::Alarm', {
        Threshold: 80,
        EvaluationPeriods: 3,
        Metrics: Match.arrayWith([
          Match.objectLike({ Expression: 'MAX([m0, m1])' }),
          ...['1', '2'].map((n) =>
            Match.objectLike({
              MetricStat: Match.objectLike({
                Metric: {
                  Namespace: 'AWS/ElastiCache',
                  MetricName: metricName,
                  Dimensions: [{ Name: 'CacheClusterId', Value: memberCluster(n) }],
                },
                Stat: 'Average',
              }),
            }),
          ),
        ]),
      });
    }
  });

  it('alarms on its one node in the single-node setup', () => {
    const single = cache({ multiAz: false }).part;
    expect(single.alarms[0]?.metric.toMetricConfig().metricStat?.metricName).toBe('EngineCPUUtilization');
  });
});

describe('ExistingRedisCache', () => {
  const { stack, scope } = partScope();
  const network = networkIn(scope);
  const securityGroup = new SecurityGroup(stack, 'ProviderRedisGroup', { vpc: network.vpc });
  const part = new ExistingRedisCache(network, { host: 'redis.internal', port: 6380, securityGroup });
  const template = Template.fromStack(stack);

  it('admits the functions to its security group on its port and creates no cache', () => {
    template.resourceCountIs('AWS::ElastiCache::ReplicationGroup', 0);
    const ingress = Object.values(resourcesOfType(template, 'AWS::EC2::SecurityGroupIngress'));
    expect(ingress.map((rule) => rule.Properties.FromPort)).toEqual([6380]);
  });

  it('has no alarms: the provider watches its own Redis', () => {
    expect(part.alarms).toEqual([]);
    expect(part.endpoint).toEqual({ host: 'redis.internal', port: 6380, tls: true, mode: 'standalone' });
  });
});

function sharded(shards: number, replicasPerShard: number, engine: CacheEngine = 'redis') {
  const { stack, scope } = partScope();
  const network = networkIn(scope);
  const part = new ReplicationGroupCache(scope, {
    network,
    multiAz: true,
    nodeType: 'cache.r7g.large',
    engine,
    subnets: network.cacheSubnets,
    sharding: { shards, replicasPerShard },
  });
  new AccessAlarms(scope, 'Alarms', { specs: part.alarms });
  return { part, template: Template.fromStack(stack) };
}

describe('ReplicationGroupCache with cluster mode enabled', () => {
  const { part, template } = sharded(3, 1);
  const groupId = logicalId(template, 'AWS::ElastiCache::ReplicationGroup', 'AccessRedis');

  it('creates the shards with their replicas, Multi-AZ with automatic failover, TLS and AUTH', () => {
    template.hasResourceProperties('AWS::ElastiCache::ReplicationGroup', {
      ClusterMode: 'enabled',
      NumNodeGroups: 3,
      ReplicasPerNodeGroup: 1,
      NumCacheClusters: Match.absent(),
      AutomaticFailoverEnabled: true,
      MultiAZEnabled: true,
      TransitEncryptionEnabled: true,
      AtRestEncryptionEnabled: true,
      AuthToken: Match.objectLike({ 'Fn::Join': Match.anyValue() }),
    });
  });

  it('turns cluster mode on in its parameter group, keeping the eviction policy', () => {
    template.hasResourceProperties('AWS::ElastiCache::ParameterGroup', {
      CacheParameterGroupFamily: 'redis7',
      Properties: { 'maxmemory-policy': 'volatile-lru', 'cluster-enabled': 'yes' },
    });
    sharded(2, 0, 'valkey').template.hasResourceProperties('AWS::ElastiCache::ParameterGroup', {
      CacheParameterGroupFamily: 'valkey8',
      Properties: { 'maxmemory-policy': 'volatile-lru', 'cluster-enabled': 'yes' },
    });
  });

  it('gives the functions its configuration endpoint, in cluster mode', () => {
    expect(part.endpoint.mode).toBe('cluster');
    expect(part.endpoint.tls).toBe(true);
    expect(Stack.of(part.replicationGroup).resolve(part.endpoint.host)).toEqual({
      'Fn::GetAtt': [groupId, 'ConfigurationEndPoint.Address'],
    });
  });

  it('without replicas is not Multi-AZ, and keeps the automatic failover cluster mode requires', () => {
    sharded(2, 0).template.hasResourceProperties('AWS::ElastiCache::ReplicationGroup', {
      NumNodeGroups: 2,
      ReplicasPerNodeGroup: 0,
      AutomaticFailoverEnabled: true,
      MultiAZEnabled: false,
    });
  });

  it('alarms on every node of every shard, at most ten nodes per alarm', () => {
    const node = (shard: number, n: number) => ({
      'Fn::Join': ['', [{ Ref: groupId }, `-000${shard}-00${n}`]],
    });
    expect(part.alarms.map((alarm) => alarm.id)).toEqual(['RedisCpu', 'RedisMemory']);
    template.hasResourceProperties('AWS::CloudWatch::Alarm', {
      Metrics: Match.arrayWith([
        Match.objectLike({ Expression: 'MAX([m0, m1, m2, m3, m4, m5])' }),
        Match.objectLike({
          MetricStat: Match.objectLike({
            Metric: Match.objectLike({ Dimensions: [{ Name: 'CacheClusterId', Value: node(3, 2) }] }),
          }),
        }),
      ]),
    });
    const large = sharded(7, 1).part.alarms;
    expect(large.map((alarm) => alarm.id)).toEqual(['RedisCpu', 'RedisMemory', 'RedisCpu2', 'RedisMemory2']);
  });
});

describe('ServerlessRedisCache', () => {
  function serverless(engine: CacheEngine = 'redis', limits?: ServerlessCacheLimits) {
    const { stack, scope } = partScope();
    const network = networkIn(scope);
    const part = new ServerlessRedisCache(scope, { network, engine, subnets: network.cacheSubnets, limits });
    new AccessAlarms(scope, 'Alarms', { specs: part.alarms });
    return { part, template: Template.fromStack(stack) };
  }
  const { part, template } = serverless('valkey', { maxDataStorageGb: 10, maxEcpuPerSecond: 5000 });
  const cacheId = logicalId(template, 'AWS::ElastiCache::ServerlessCache', 'AccessRedis');
  const secretId = logicalId(template, 'AWS::SecretsManager::Secret', 'AccessRedisAuthToken');

  it('creates a serverless cache of the engine asked for, with its usage limits, in the cache subnets', () => {
    template.resourceCountIs('AWS::ElastiCache::ReplicationGroup', 0);
    template.hasResourceProperties('AWS::ElastiCache::ServerlessCache', {
      Engine: 'valkey',
      MajorEngineVersion: '8',
      CacheUsageLimits: {
        DataStorage: { Maximum: 10, Unit: 'GB' },
        ECPUPerSecond: { Maximum: 5000 },
      },
      SecurityGroupIds: [Match.anyValue()],
    });
    const [cache] = Object.values(resourcesOfType(template, 'AWS::ElastiCache::ServerlessCache'));
    // The isolated subnets of the two AZs.
    expect(cache?.Properties.SubnetIds).toHaveLength(2);
    const name = cache?.Properties.ServerlessCacheName;
    expect(name).toMatch(/^[a-z][a-z0-9-]{0,39}$/);
    expect(name).not.toMatch(/--|-$/);
  });

  it('sets no usage limits unless given, and runs Redis OSS 7 by default', () => {
    const plain = serverless().template;
    plain.hasResourceProperties('AWS::ElastiCache::ServerlessCache', {
      Engine: 'redis',
      MajorEngineVersion: '7',
      CacheUsageLimits: Match.absent(),
    });
  });

  it('requires AUTH: a user group whose default user has the generated password', () => {
    const users = Object.values(resourcesOfType(template, 'AWS::ElastiCache::User'));
    expect(users).toHaveLength(1);
    expect(users[0]?.Properties).toMatchObject({
      Engine: 'valkey',
      UserName: 'default',
      AccessString: 'on ~* +@all',
      AuthenticationMode: {
        Type: 'password',
        Passwords: [
          {
            'Fn::Join': ['', ['{{resolve:secretsmanager:', { Ref: secretId }, ':SecretString:::}}']],
          },
        ],
      },
    });
    expect(users[0]?.Properties.UserId).toMatch(/^[a-z][a-z0-9-]{0,39}$/);
    const userId = logicalId(template, 'AWS::ElastiCache::User', 'AccessRedisDefaultUser');
    const groupId = logicalId(template, 'AWS::ElastiCache::UserGroup', 'AccessRedisUsers');
    template.hasResourceProperties('AWS::ElastiCache::UserGroup', {
      Engine: 'valkey',
      UserIds: [{ Ref: userId }],
    });
    template.hasResourceProperties('AWS::ElastiCache::ServerlessCache', { UserGroupId: { Ref: groupId } });
  });

  it('admits only the functions, on the Redis port', () => {
    const ingress = Object.values(resourcesOfType(template, 'AWS::EC2::SecurityGroupIngress'));
    expect(ingress.map((rule) => [rule.Properties.FromPort, rule.Properties.ToPort])).toEqual([[6379, 6379]]);
  });

  it('gives the functions its endpoint in cluster mode, over TLS, with the AUTH secret', () => {
    expect(part.endpoint).toMatchObject({ port: 6379, tls: true, mode: 'cluster' });
    expect(Stack.of(part.cache).resolve(part.endpoint.host)).toEqual({
      'Fn::GetAtt': [cacheId, 'Endpoint.Address'],
    });
    expect(part.authSecret).toBeDefined();
  });

  it('alarms on throttled commands, and on storage near its limit when it has one', () => {
    expect(part.alarms.map((alarm) => [alarm.id, alarm.threshold])).toEqual([
      ['RedisThrottled', 1],
      ['RedisMemory', Math.floor(10 * 1024 ** 3 * 0.8)],
    ]);
    template.hasResourceProperties('AWS::CloudWatch::Alarm', {
      MetricName: 'ThrottledCmds',
      Namespace: 'AWS/ElastiCache',
      Statistic: 'Sum',
      Dimensions: [{ Name: 'clusterId', Value: Match.stringLikeRegexp('^[a-z]') }],
    });
    expect(serverless().part.alarms.map((alarm) => alarm.id)).toEqual(['RedisThrottled']);
  });
});

describe('ExistingRedisCache in cluster mode', () => {
  it('hands the functions its endpoint as the cluster seed', () => {
    const { stack, scope } = partScope();
    const network = networkIn(scope);
    const securityGroup = new SecurityGroup(stack, 'ProviderRedisGroup', { vpc: network.vpc });
    const part = new ExistingRedisCache(network, {
      host: 'clustercfg.redis.internal',
      securityGroup,
      mode: 'cluster',
    });
    expect(part.endpoint).toEqual({
      host: 'clustercfg.redis.internal',
      port: 6379,
      tls: true,
      mode: 'cluster',
    });
  });

  it("hands the functions the ACL user of the provider's own MemoryDB", () => {
    const { stack, scope } = partScope();
    const network = networkIn(scope);
    const securityGroup = new SecurityGroup(stack, 'ProviderMemoryDbGroup', { vpc: network.vpc });
    const part = new ExistingRedisCache(network, {
      host: 'clustercfg.provider.memorydb.us-east-1.amazonaws.com',
      securityGroup,
      mode: 'cluster',
      username: 'access-management',
      authSecret: new Secret(stack, 'UserPassword'),
    });
    expect(part.endpoint).toMatchObject({ mode: 'cluster', tls: true, username: 'access-management' });
  });
});
