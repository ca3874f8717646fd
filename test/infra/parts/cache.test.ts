import { Match, Template } from 'aws-cdk-lib/assertions';
import { SecurityGroup } from 'aws-cdk-lib/aws-ec2';
import { describe, expect, it } from 'vitest';
import { AccessAlarms } from '../../../lib/parts/alarms';
import { type CacheEngine, ExistingRedisCache, ReplicationGroupCache } from '../../../lib/parts/cache';
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
    expect(part.endpoint).toEqual({ host: 'redis.internal', port: 6380, tls: true });
  });
});
