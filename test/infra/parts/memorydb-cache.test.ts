import { Stack } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import { describe, expect, it } from 'vitest';
import { CACHE_USER_ACCESS_STRING } from '../../../core/budget/cache-user';
import { AccessAlarms } from '../../../lib/parts/alarms';
import type { CacheEngine } from '../../../lib/parts/cache';
import { MemoryDbCache, type MemoryDbCacheOptions } from '../../../lib/parts/memorydb-cache';
import { logicalId, resourcesOfType } from '../fixtures';
import { networkIn, partScope } from './fixtures';

function memoryDb(options: MemoryDbCacheOptions = {}, engine: CacheEngine = 'redis') {
  const { stack, scope } = partScope();
  const network = networkIn(scope);
  const part = new MemoryDbCache(scope, { network, engine, subnets: network.cacheSubnets, options });
  new AccessAlarms(scope, 'Alarms', { specs: part.alarms });
  return { stack, network, part, template: Template.fromStack(stack) };
}

/** MemoryDB's names: at most 40 lowercase letters, digits and hyphens, a letter first, no double hyphen. */
const MEMORYDB_NAME = /^[a-z](?!.*--)[a-z0-9-]{0,38}[a-z0-9]$/;

describe('MemoryDbCache', () => {
  const { network, part, template } = memoryDb({ shards: 3 });
  const clusterId = logicalId(template, 'AWS::MemoryDB::Cluster', 'AccessRedis');
  const secretId = logicalId(template, 'AWS::SecretsManager::Secret', 'AccessRedisAuthToken');
  const [cluster] = Object.values(resourcesOfType(template, 'AWS::MemoryDB::Cluster'));

  it('creates a cluster of the shards asked for, each with one replica, TLS on, and no ElastiCache cache', () => {
    template.resourceCountIs('AWS::ElastiCache::ReplicationGroup', 0);
    template.resourceCountIs('AWS::ElastiCache::ServerlessCache', 0);
    template.hasResourceProperties('AWS::MemoryDB::Cluster', {
      Engine: 'redis',
      EngineVersion: '7.1',
      NodeType: 'db.t4g.small',
      NumShards: 3,
      NumReplicasPerShard: 1,
      TLSEnabled: true,
      Port: 6379,
      AutoMinorVersionUpgrade: true,
    });
    expect(cluster?.Properties.ClusterName).toMatch(MEMORYDB_NAME);
  });

  it('places its nodes in a subnet group of the cache subnets of both AZs, so each replica can be in another AZ', () => {
    const groups = Object.entries(resourcesOfType(template, 'AWS::MemoryDB::SubnetGroup'));
    expect(groups).toHaveLength(1);
    const [groupId, group] = groups[0] as [string, { Properties: Record<string, unknown> }];
    expect(group.Properties.SubnetIds).toHaveLength(2);
    expect(group.Properties.SubnetIds).toEqual(
      Stack.of(network.vpc).resolve(network.vpc.selectSubnets(network.cacheSubnets).subnetIds),
    );
    expect(group.Properties.SubnetGroupName).toMatch(MEMORYDB_NAME);
    expect(cluster?.Properties.SubnetGroupName).toEqual({ Ref: groupId });
  });

  it('admits only the access functions, on the Redis port', () => {
    const ingress = Object.values(resourcesOfType(template, 'AWS::EC2::SecurityGroupIngress'));
    expect(ingress.map((rule) => [rule.Properties.FromPort, rule.Properties.ToPort])).toEqual([[6379, 6379]]);
    expect(ingress[0]?.Properties.SourceSecurityGroupId).toEqual(
      Stack.of(network.vpc).resolve(network.functionSecurityGroup.securityGroupId),
    );
    expect(cluster?.Properties.SecurityGroupIds).toEqual([
      { 'Fn::GetAtt': [expect.stringMatching(/^AccessRedisSecurityGroup/), 'GroupId'] },
    ]);
  });

  it("authenticates through an ACL whose one user has the scripts' rules and the generated password", () => {
    const users = Object.entries(resourcesOfType(template, 'AWS::MemoryDB::User'));
    expect(users).toHaveLength(1);
    const [userId, user] = users[0] as [string, { Properties: Record<string, unknown> }];
    expect(user.Properties).toEqual({
      UserName: part.endpoint.username,
      AccessString: CACHE_USER_ACCESS_STRING,
      AuthenticationMode: {
        Type: 'password',
        Passwords: [
          { 'Fn::Join': ['', ['{{resolve:secretsmanager:', { Ref: secretId }, ':SecretString:::}}']] },
        ],
      },
    });
    expect(part.endpoint.username).toMatch(MEMORYDB_NAME);
    const aclId = logicalId(template, 'AWS::MemoryDB::ACL', 'AccessRedisAcl');
    template.hasResourceProperties('AWS::MemoryDB::ACL', {
      UserNames: [{ Ref: userId }],
      ACLName: Match.stringLikeRegexp('^[a-z]'),
    });
    expect(cluster?.Properties.ACLName).toEqual({ Ref: aclId });
  });

  it('keeps the password out of the template: generated into Secrets Manager, referenced by ARN', () => {
    template.hasResourceProperties('AWS::SecretsManager::Secret', {
      GenerateSecretString: { ExcludePunctuation: true, PasswordLength: 64 },
    });
    expect(JSON.stringify(template.toJSON())).not.toMatch(/"Passwords":\["[^{]/);
  });

  it('never evicts unreported usage: volatile-lru in a parameter group of its engine family', () => {
    const groupId = logicalId(template, 'AWS::MemoryDB::ParameterGroup', 'AccessRedisParameters');
    template.hasResourceProperties('AWS::MemoryDB::ParameterGroup', {
      Family: 'memorydb_redis7',
      Parameters: { 'maxmemory-policy': 'volatile-lru' },
    });
    expect(cluster?.Properties.ParameterGroupName).toEqual({ Ref: groupId });
    const valkey = memoryDb({}, 'valkey').template;
    valkey.hasResourceProperties('AWS::MemoryDB::Cluster', {
      Engine: 'valkey',
      EngineVersion: '7.2',
      NumShards: 1,
    });
    valkey.hasResourceProperties('AWS::MemoryDB::ParameterGroup', { Family: 'memorydb_valkey7' });
  });

  it('gives the functions its cluster endpoint, in cluster mode over TLS, as its ACL user', () => {
    expect(part.endpoint).toMatchObject({ port: 6379, tls: true, mode: 'cluster' });
    expect(Stack.of(part.cluster).resolve(part.endpoint.host)).toEqual({
      'Fn::GetAtt': [clusterId, 'ClusterEndpoint.Address'],
    });
    expect(part.authSecret).toBeDefined();
  });

  it("alarms on the busiest node's engine CPU and memory", () => {
    expect(part.alarms.map((alarm) => [alarm.id, alarm.threshold, alarm.evaluationPeriods])).toEqual([
      ['RedisCpu', 80, 3],
      ['RedisMemory', 80, 3],
    ]);
    for (const metricName of ['EngineCPUUtilization', 'DatabaseMemoryUsagePercentage']) {
      template.hasResourceProperties('AWS::CloudWatch::Alarm', {
        Namespace: 'AWS/MemoryDB',
        MetricName: metricName,
        Statistic: 'Maximum',
        Dimensions: [{ Name: 'ClusterName', Value: cluster?.Properties.ClusterName }],
      });
    }
  });
});
