/** The construct's own settings: what it refuses, and what its operations settings change. */
import { createRequire } from 'node:module';
import * as path from 'node:path';
import { Stack } from 'aws-cdk-lib';
import { Annotations, Match, Template } from 'aws-cdk-lib/assertions';
import { MockIntegration, RestApi } from 'aws-cdk-lib/aws-apigateway';
import { SecurityGroup, SubnetType, Vpc } from 'aws-cdk-lib/aws-ec2';
import { Key } from 'aws-cdk-lib/aws-kms';
import { type ISecret, Secret } from 'aws-cdk-lib/aws-secretsmanager';
import { Topic } from 'aws-cdk-lib/aws-sns';
import { describe, expect, it } from 'vitest';
import { ApiAccessAuthorizer, type ApiAccessAuthorizerProps } from '../../lib/api-access-authorizer';
import { accessInStack, resourcesOfType, testApp, variablesOf } from './fixtures';

const KEY_ARN = 'arn:aws:kms:eu-west-1:123456789012:key/1234abcd-12ab-34cd-56ef-1234567890ab';

const build = accessInStack;

type Statement = { Action: string | string[]; Resource: unknown; Condition?: unknown };

function statements(template: Template): Statement[] {
  return Object.values(resourcesOfType(template, 'AWS::IAM::Policy')).flatMap(
    (policy) => (policy.Properties.PolicyDocument as { Statement: Statement[] }).Statement,
  );
}

describe('settings it refuses', () => {
  it.each([
    [
      { platformUrl: 'http://su1.3scale.net' },
      /platformUrl must be an https:\/\/ URL in AWS: over http:\/\/ the provider key would cross the internet in clear/,
    ],
    [{ natGateways: 0 }, /natGateways must be an integer from 1 to 2/],
    [{ cacheNodeType: 't4g.micro' }, /cacheNodeType must be an ElastiCache node type/],
    [
      { cacheNodeType: 'cache.x9.large' },
      /cacheNodeType must be an ElastiCache node type .* of a current family/,
    ],
    [
      { cacheNodeType: 'cache.m3.large' },
      /cacheNodeType must be an ElastiCache node type .* of a current family/,
    ],
    [
      { cacheNodeType: 'cache.t4g.large' },
      /cacheNodeType must be a size cache.t4g comes in \(micro, small, medium\)/,
    ],
    [{ serviceId: 'abc' }, /serviceId must be the platform's numeric service id .*got "abc"/],
    [{ serviceId: 'my service' }, /serviceId must be the platform's numeric service id/],
    [
      { platformUrl: 'https://acme.3scale.net' },
      /platformUrl is a portal of the hosted platform \(https:\/\/acme\.3scale\.net\).* give the Service Management API's base URL: https:\/\/su1\.3scale\.net/,
    ],
    [
      { platformUrl: 'https://3scale-admin.apps.example.com' },
      /platformUrl is an admin portal \(https:\/\/3scale-admin\.apps\.example\.com\)/,
    ],
    [{ platformUrl: 'https://portal.example.com/p/admin/dashboard' }, /platformUrl is an admin portal/],
    [
      { platformUrl: 'https://su1.3scale.net/transactions/authrep.xml' },
      /platformUrl is an endpoint's URL \(https:\/\/su1\.3scale\.net\/transactions\/authrep\.xml\); the authorizer adds the endpoints' paths itself/,
    ],
    [
      { platformUrl: 'https://backend.example.com?x=1' },
      /platformUrl is a base URL, with no query or fragment/,
    ],
    [{ platformUrl: 'https://user:pw@backend.example.com' }, /platformUrl must not carry credentials/],
    [
      { platformUrl: 'https://acme-admin.3scale.net/' },
      /platformUrl is an admin portal .* give the Service Management API's base URL: https:\/\/su1\.3scale\.net/,
    ],
    [{ cacheEngine: 'memcached' as never }, /cacheEngine must be one of redis, valkey/],
    [
      { credentialMode: 'oauth' as const, credentialHeader: 'x-api-key' },
      /credentialHeader applies to credentialMode user_key, and credentialMode is oauth/,
    ],
    [
      { appIdHeader: 'x-app' },
      /appIdHeader applies to credentialMode app_id, and credentialMode is user_key/,
    ],
    [
      { cacheNodetype: 'cache.t4g.small' } as never,
      /props\.cacheNodetype is not a known setting \(known: .*cacheNodeType/,
    ],
    [
      { platformCredential: undefined as never },
      /platformCredential must be a Secrets Manager secret \(an ISecret\) whose SecretString is the provider key, such as Secret\.fromSecretNameV2.*; got undefined/,
    ],
    [
      { platformCredential: 'arn:aws:secretsmanager:eu-west-1:1:secret:x' as never },
      /platformCredential must be a Secrets Manager secret .*; got a string/,
    ],
    [{ platformUrl: 'ftp://x' }, /platformUrl must use http or https/],
    [{ redisShards: 0 }, /redisShards must be an integer from 1 to 500/],
    [{ redisShards: 501 }, /redisShards must be an integer from 1 to 500/],
    [{ redisShards: 1.5 }, /redisShards must be an integer from 1 to 500/],
    [{ redisShards: 2, replicasPerShard: 6 }, /replicasPerShard must be an integer from 0 to 5/],
    [{ replicasPerShard: 1 }, /replicasPerShard applies to a sharded cache: set redisShards too/],
    [
      { redisShards: 100, replicasPerShard: 5 },
      /redisShards with 5 replicas each makes 600 nodes, over the 500 one cluster may have/,
    ],
    [
      { redisShards: 3, replicasPerShard: 0, multiAz: true },
      /replicasPerShard is 0, so no shard has a replica in another AZ: multiAz must not be true/,
    ],
    [
      { redisServerless: true, redisShards: 3 },
      /redisServerless is true, so redisShards \(settings of a replication group's nodes\) must not be given/,
    ],
    [
      { redisServerless: true, cacheNodeType: 'cache.t4g.small' },
      /redisServerless is true, so cacheNodeType/,
    ],
    [{ serverlessLimits: { maxEcpuPerSecond: 5000 } }, /serverlessLimits apply to a serverless cache/],
    [
      { redisServerless: true, serverlessLimits: { maxDataStorageGb: 0 } },
      /serverlessLimits.maxDataStorageGb must be an integer from 1 to 5000/,
    ],
    [
      { redisServerless: true, serverlessLimits: { maxEcpuPerSecond: 999 } },
      /serverlessLimits.maxEcpuPerSecond must be an integer from 1000 to 15000000/,
    ],
    [
      { redisServerless: true, serverlessLimits: { maxDataStorageGB: 10 } as never },
      /serverlessLimits.maxDataStorageGB is not a known setting \(known: maxDataStorageGb, maxEcpuPerSecond\)/,
    ],
    [
      { soap: { soapBackendUrl: 'https://soap.example.com', soapPth: '/quotes' } as never },
      /soap.soapPth is not a known setting/,
    ],
  ])('refuses %j with a message naming the setting', (props, message) => {
    expect(() => build(props)).toThrow(message);
  });

  it('refuses natGateways with a VPC of the provider', () => {
    const stack = new Stack(testApp(), 'ProviderStack');
    expect(
      () =>
        new ApiAccessAuthorizer(stack, 'Access', {
          serviceId: '1',
          platformCredential: new Secret(stack, 'ProviderKey'),
          vpc: new Vpc(stack, 'Vpc'),
          natGateways: 1,
        }),
    ).toThrow(/natGateways applies to a new VPC, and the vpc prop is given/);
  });

  it('refuses a VPC whose subnets have no way out to the platform, naming the vpc setting', () => {
    const stack = new Stack(testApp(), 'ProviderStack');
    const isolated = new Vpc(stack, 'Vpc', {
      natGateways: 0,
      subnetConfiguration: [{ name: 'isolated', subnetType: SubnetType.PRIVATE_ISOLATED }],
    });
    expect(
      () =>
        new ApiAccessAuthorizer(stack, 'Access', {
          serviceId: '1',
          platformCredential: new Secret(stack, 'ProviderKey'),
          vpc: isolated,
        }),
    ).toThrow(
      /vpc has no private subnets with egress .* must reach the platform \(https:\/\/su1\.3scale\.net\)/,
    );
  });

  it('refuses a misspelt field of the redis prop, naming it', () => {
    const stack = new Stack(testApp(), 'ProviderStack');
    const vpc = new Vpc(stack, 'Vpc');
    expect(
      () =>
        new ApiAccessAuthorizer(stack, 'Access', {
          serviceId: '1',
          platformCredential: new Secret(stack, 'ProviderKey'),
          vpc,
          redis: {
            host: 'redis.internal',
            securityGroup: new SecurityGroup(stack, 'Redis', { vpc }),
            tsl: false,
          } as never,
        }),
    ).toThrow(/redis.tsl is not a known setting/);
  });

  it('synthesizes the Service Management API at its hosted, self-managed or proxied base URL', () => {
    for (const platformUrl of [
      'https://su1.3scale.net',
      'https://backend-3scale.apps.example.com/',
      'https://gateway.example.com/3scale-backend',
    ]) {
      expect(build({ platformUrl }).access.config.platformUrl).toBe(platformUrl.replace(/\/$/, ''));
    }
  });

  it('puts the authorizer on the credential header the provider names (credentialHeader)', () => {
    const { stack, access } = build({ credentialHeader: 'x-api-key' });
    const api = new RestApi(stack, 'Api');
    api.root.addMethod('GET', new MockIntegration());
    access.protect(api);
    Template.fromStack(stack).hasResourceProperties('AWS::ApiGateway::Authorizer', {
      IdentitySource: 'method.request.header.x-api-key',
    });
  });

  it('accepts every current node family', () => {
    for (const cacheNodeType of [
      'cache.t4g.micro',
      'cache.m7g.large',
      'cache.r6gd.xlarge',
      'cache.c7gn.16xlarge',
    ]) {
      expect(() => build({ cacheNodeType })).not.toThrow();
    }
  });
});

describe('a provider key encrypted with a customer-managed KMS key', () => {
  const { stack } = build((stack) => ({ platformCredentialKey: Key.fromKeyArn(stack, 'Key', KEY_ARN) }));
  const kmsStatements = statements(Template.fromStack(stack)).filter((statement) =>
    JSON.stringify(statement.Action).includes('kms:'),
  );

  it('gives each function kms:Decrypt on that key only, through Secrets Manager', () => {
    expect(kmsStatements).toHaveLength(3);
    for (const statement of kmsStatements) {
      expect(statement).toMatchObject({
        Action: 'kms:Decrypt',
        Resource: KEY_ARN,
        Condition: {
          StringEquals: {
            'kms:ViaService': {
              'Fn::Join': ['', ['secretsmanager.', { Ref: 'AWS::Region' }, '.amazonaws.com']],
            },
          },
        },
      });
    }
  });

  it('grants no KMS action without it', () => {
    expect(
      statements(Template.fromStack(build().stack)).filter((s) => JSON.stringify(s.Action).includes('kms:')),
    ).toEqual([]);
  });
});

describe('alarms', () => {
  const { stack } = build((stack) => ({ alarmTopic: new Topic(stack, 'AlarmTopic') }));
  const alarms = Object.values(resourcesOfType(Template.fromStack(stack), 'AWS::CloudWatch::Alarm'));

  it('watch the authorizer, the platform, unrecorded usage, dead letters, the reporter, alerts and Redis', () => {
    const ids = Object.keys(resourcesOfType(Template.fromStack(stack), 'AWS::CloudWatch::Alarm'));
    expect(ids.map((id) => id.replace(/^AccessAlarms/, '').replace(/[0-9A-F]{8}$/, '')).sort()).toEqual([
      'AlertPublishFailed',
      'AuthorizerErrors',
      'PlatformMisconfigured',
      'PlatformUnavailable',
      'RedisCpu',
      'RedisMemory',
      'ReporterErrors',
      'UsageDeadLetters',
      'UsageNotRecorded',
      'UsageRejected',
    ]);
  });

  it('all notify the alarm topic', () => {
    for (const alarm of alarms) expect(alarm.Properties.AlarmActions).toEqual([expect.anything()]);
  });
});

/** The Redis settings the functions get, as configFromEnv reads them back. */
function redisEnvironment(template: Template): Record<string, unknown> {
  const [authorizer] = Object.values(resourcesOfType(template, 'AWS::Lambda::Function')).filter(
    (fn) =>
      (fn.Properties.Environment as { Variables?: Record<string, unknown> } | undefined)?.Variables
        ?.REDIS_HOST,
  );
  if (authorizer === undefined) throw new Error('no function has REDIS_HOST in its environment');
  const variables = (authorizer.Properties.Environment as { Variables: Record<string, unknown> }).Variables;
  return Object.fromEntries(Object.entries(variables).filter(([name]) => name.startsWith('REDIS_')));
}

describe('a sharded or serverless cache', () => {
  it('redisShards: a cluster-mode-enabled group, one replica per shard by default, reached in cluster mode', () => {
    const template = Template.fromStack(build({ redisShards: 4 }).stack);
    template.hasResourceProperties('AWS::ElastiCache::ReplicationGroup', {
      ClusterMode: 'enabled',
      NumNodeGroups: 4,
      ReplicasPerNodeGroup: 1,
      MultiAZEnabled: true,
      AutomaticFailoverEnabled: true,
    });
    const group = Object.keys(resourcesOfType(template, 'AWS::ElastiCache::ReplicationGroup'))[0];
    expect(redisEnvironment(template)).toMatchObject({
      REDIS_MODE: 'cluster',
      REDIS_HOST: { 'Fn::GetAtt': [group, 'ConfigurationEndPoint.Address'] },
      REDIS_PORT: '6379',
      REDIS_TLS: 'true',
      REDIS_AUTH_SECRET_ARN: { Ref: expect.stringMatching(/^AccessRedisAuthToken/) },
    });
  });

  it('redisShards with multiAz false: no replicas, and one NAT gateway', () => {
    const template = Template.fromStack(build({ redisShards: 2, multiAz: false }).stack);
    template.hasResourceProperties('AWS::ElastiCache::ReplicationGroup', {
      NumNodeGroups: 2,
      ReplicasPerNodeGroup: 0,
      MultiAZEnabled: false,
    });
    template.resourceCountIs('AWS::EC2::NatGateway', 1);
  });

  it('redisServerless: a serverless cache and no replication group, reached in cluster mode with AUTH', () => {
    const template = Template.fromStack(build({ redisServerless: true, cacheEngine: 'valkey' }).stack);
    template.resourceCountIs('AWS::ElastiCache::ReplicationGroup', 0);
    template.resourceCountIs('AWS::ElastiCache::ServerlessCache', 1);
    const cache = Object.keys(resourcesOfType(template, 'AWS::ElastiCache::ServerlessCache'))[0];
    expect(redisEnvironment(template)).toMatchObject({
      REDIS_MODE: 'cluster',
      REDIS_HOST: { 'Fn::GetAtt': [cache, 'Endpoint.Address'] },
      REDIS_TLS: 'true',
      REDIS_AUTH_SECRET_ARN: { Ref: expect.stringMatching(/^AccessRedisAuthToken/) },
    });
  });

  it('the default: one primary with cluster mode disabled, reached as a standalone Redis', () => {
    const template = Template.fromStack(build().stack);
    template.hasResourceProperties('AWS::ElastiCache::ReplicationGroup', {
      NumCacheClusters: 2,
      ClusterMode: Match.absent(),
    });
    expect(redisEnvironment(template)).toMatchObject({ REDIS_MODE: 'standalone' });
  });
});

describe('cost settings', () => {
  it('run Valkey on the node type asked for, with one NAT gateway', () => {
    const template = Template.fromStack(
      build({ cacheEngine: 'valkey', cacheNodeType: 'cache.t4g.small', natGateways: 1 }).stack,
    );
    template.hasResourceProperties('AWS::ElastiCache::ReplicationGroup', {
      Engine: 'valkey',
      CacheNodeType: 'cache.t4g.small',
      NumCacheClusters: 2,
    });
    template.resourceCountIs('AWS::EC2::NatGateway', 1);
  });

  it('trace nothing by default', () => {
    Template.fromStack(build().stack).resourcePropertiesCountIs(
      'AWS::Lambda::Function',
      { TracingConfig: Match.anyValue() },
      0,
    );
  });
});

describe('an app that loads another copy of aws-cdk-lib', () => {
  it('is refused, because the construct could not see its methods', () => {
    const load = createRequire(__filename);
    const ours = Object.keys(load.cache).filter((file) => file.includes(`${path.sep}aws-cdk-lib${path.sep}`));
    const saved = Object.fromEntries(ours.map((file) => [file, load.cache[file]]));
    for (const file of ours) delete load.cache[file];
    try {
      const other = load('aws-cdk-lib') as typeof import('aws-cdk-lib');
      const stack = new other.Stack(new other.App(), 'OtherCopyStack');
      expect(stack).not.toBeInstanceOf(Stack);
      expect(
        () =>
          new ApiAccessAuthorizer(stack as unknown as Stack, 'Access', {
            serviceId: '1',
            platformCredential: {} as ISecret,
          }),
      ).toThrow(/load two different copies of aws-cdk-lib, .* \(it is a peer dependency\)/);
    } finally {
      for (const file of Object.keys(load.cache).filter((key) =>
        key.includes(`${path.sep}aws-cdk-lib${path.sep}`),
      )) {
        delete load.cache[file];
      }
      Object.assign(load.cache, saved);
    }
  });
});

describe('a construct that protects no API', () => {
  const warnings = (stack: Stack) =>
    Annotations.fromStack(stack)
      .findWarning('*', Match.stringLikeRegexp('protects no API'))
      .map((warning) => String(warning.entry.data));

  it('warns at synthesis: every method would stay open', () => {
    const { stack } = build();
    expect(warnings(stack)).toEqual([
      expect.stringMatching(
        /^ProviderStack\/Access protects no API, so no call is checked, metered or limited: call protect\(api\)/,
      ),
    ]);
  });

  it('does not warn once it protects an API', () => {
    const { stack, access } = build();
    const api = new RestApi(stack, 'OrdersApi');
    api.root.addMethod('GET', new MockIntegration());
    access.protect(api);
    expect(warnings(stack)).toEqual([]);
  });
});

describe('two instances in one app (two services, or dev beside prod)', () => {
  const app = testApp();
  const credential = (stack: Stack) =>
    Secret.fromSecretCompleteArn(
      stack,
      'ProviderKey',
      'arn:aws:secretsmanager:eu-west-1:123456789012:secret:provider-key-AbC123',
    );
  const orders = new Stack(app, 'OrdersStack');
  new ApiAccessAuthorizer(orders, 'Access', { serviceId: '111', platformCredential: credential(orders) });
  const billing = new Stack(app, 'BillingStack');
  new ApiAccessAuthorizer(billing, 'Access', {
    serviceId: '222',
    platformCredential: credential(billing),
    instanceName: 'billing-prod',
  });

  const instanceOf = (stack: Stack) => {
    const template = Template.fromStack(stack);
    const functions = Object.values(resourcesOfType(template, 'AWS::Lambda::Function'));
    const instances = new Set(functions.map((fn) => variablesOf(fn).METRICS_INSTANCE));
    const alarmDimensions = Object.values(resourcesOfType(template, 'AWS::CloudWatch::Alarm')).flatMap(
      (alarm) => {
        const direct = (alarm.Properties.Dimensions ?? []) as { Name: string; Value: string }[];
        const inMath = (
          (alarm.Properties.Metrics ?? []) as {
            MetricStat?: { Metric: { Dimensions?: { Name: string; Value: string }[] } };
          }[]
        ).flatMap((metric) => metric.MetricStat?.Metric.Dimensions ?? []);
        return [...direct, ...inMath];
      },
    );
    const dashboard = JSON.stringify(
      Object.values(resourcesOfType(template, 'AWS::CloudWatch::Dashboard'))[0],
    );
    return { instances, alarmDimensions, dashboard };
  };

  it("publish each Lambda's metrics with the instance's own dimension: service id and stack name or instanceName", () => {
    expect(instanceOf(orders).instances).toEqual(new Set(['111/OrdersStack']));
    expect(instanceOf(billing).instances).toEqual(new Set(['222/billing-prod']));
  });

  it("alarm on their own instance's counts only", () => {
    for (const [stack, instance] of [
      [orders, '111/OrdersStack'],
      [billing, '222/billing-prod'],
    ] as const) {
      const ours = instanceOf(stack).alarmDimensions.filter((dimension) => dimension.Name === 'instance');
      expect(ours.length).toBeGreaterThanOrEqual(5);
      expect(new Set(ours.map((dimension) => dimension.Value))).toEqual(new Set([instance]));
    }
  });

  it("show their own instance's series on the dashboard", () => {
    expect(instanceOf(orders).dashboard).toContain('instance=\\\\\\"111/OrdersStack\\\\\\"');
    expect(instanceOf(orders).dashboard).not.toContain('222/billing-prod');
    expect(instanceOf(billing).dashboard).toContain('instance=\\\\\\"222/billing-prod\\\\\\"');
  });

  it('refuse an instanceName a dimension value cannot carry, naming the prop', () => {
    expect(() => build({ instanceName: 'dev prod' })).toThrow(/instanceName must be 1 to 100 letters/);
  });
});

describe('two instances sharing one network and cache (shareNetworkAndCacheOf)', () => {
  const credential = (stack: Stack, id: string) =>
    Secret.fromSecretCompleteArn(
      stack,
      id,
      `arn:aws:secretsmanager:eu-west-1:123456789012:secret:${id.toLowerCase()}-AbC123`,
    );

  /** Orders builds the network and cache; Billing, in the same stack or a stack of its own, uses them. */
  function sharedApp(
    place: 'same stack' | 'own stack',
    billingProps: Partial<ApiAccessAuthorizerProps> = {},
  ) {
    const app = testApp();
    const ordersStack = new Stack(app, 'OrdersStack');
    const orders = new ApiAccessAuthorizer(ordersStack, 'Orders', {
      serviceId: '111',
      platformCredential: credential(ordersStack, 'OrdersKey'),
    });
    const billingStack = place === 'same stack' ? ordersStack : new Stack(app, 'BillingStack');
    const billing = new ApiAccessAuthorizer(billingStack, 'Billing', {
      serviceId: '222',
      platformCredential: credential(billingStack, 'BillingKey'),
      shareNetworkAndCacheOf: orders,
      ...billingProps,
    });
    const stacks = [...new Set([ordersStack, billingStack])];
    return { orders, billing, templates: stacks.map((stack) => Template.fromStack(stack)) };
  }

  /** Every resource of one type in the app's stacks, by logical id. */
  const allOfType = (templates: readonly Template[], type: string) =>
    templates.flatMap((template) => Object.entries(resourcesOfType(template, type)));

  /** Whether a reference (Ref, GetAtt, or a cross-stack import) names the resource `logicalId`. */
  const names = (reference: unknown, logicalId: string) => JSON.stringify(reference).includes(logicalId);

  for (const place of ['same stack', 'own stack'] as const) {
    describe(`in the ${place}`, () => {
      const { templates } = sharedApp(place);
      const redisId = allOfType(templates, 'AWS::ElastiCache::ReplicationGroup')[0]?.[0] as string;
      const groups = allOfType(templates, 'AWS::EC2::SecurityGroup').map(([id]) => id);
      const redisGroup = groups.find((id) => id.startsWith('OrdersRedisSecurityGroup')) as string;
      const functions = allOfType(templates, 'AWS::Lambda::Function').filter(
        ([, fn]) => fn.Properties.VpcConfig,
      );
      const groupsOf = (prefix: string) =>
        new Set(
          functions
            .filter(([id]) => id.startsWith(prefix))
            .flatMap(
              ([, fn]) => (fn.Properties.VpcConfig as { SecurityGroupIds: unknown[] }).SecurityGroupIds,
            )
            .map((reference) => groups.find((id) => names(reference, id))),
        );

      it('build one VPC, one pair of NAT gateways and one replication group', () => {
        expect(allOfType(templates, 'AWS::EC2::VPC')).toHaveLength(1);
        expect(allOfType(templates, 'AWS::EC2::NatGateway')).toHaveLength(2);
        expect(allOfType(templates, 'AWS::ElastiCache::ReplicationGroup')).toHaveLength(1);
      });

      it("admit each instance's functions, in a security group of its own, to the one Redis", () => {
        const [ordersGroups, billingGroups] = [groupsOf('Orders'), groupsOf('Billing')];
        expect(ordersGroups.size).toBe(1);
        expect(billingGroups.size).toBe(1);
        expect([...ordersGroups][0]).not.toBe([...billingGroups][0]);
        const admitted = allOfType(templates, 'AWS::EC2::SecurityGroupIngress')
          .filter(([, rule]) => names(rule.Properties.GroupId, redisGroup))
          .map(([, rule]) => {
            expect(rule.Properties).toMatchObject({ FromPort: 6379, ToPort: 6379, IpProtocol: 'tcp' });
            return groups.find((id) => names(rule.Properties.SourceSecurityGroupId, id));
          });
        expect(new Set(admitted)).toEqual(new Set([...ordersGroups, ...billingGroups]));
        const reaching = functions.filter(([, fn]) => variablesOf(fn).REDIS_HOST !== undefined);
        const instanceOf = (id: string) => ['Orders', 'Billing'].find((name) => id.startsWith(name));
        expect(new Set(reaching.map(([id]) => instanceOf(id)))).toEqual(new Set(['Orders', 'Billing']));
        expect(reaching.filter(([, fn]) => !names(variablesOf(fn).REDIS_HOST, redisId))).toEqual([]);
      });

      it("leave the cache's alarms to the instance that built it", () => {
        const redisAlarms = allOfType(templates, 'AWS::CloudWatch::Alarm')
          .map(([id]) => id)
          .filter((id) => id.includes('Redis'));
        expect(redisAlarms.length).toBeGreaterThan(0);
        expect(redisAlarms.filter((id) => id.startsWith('Billing'))).toEqual([]);
      });
    });
  }

  it('refuse a prop of a network or cache of its own beside it, naming both', () => {
    expect(() => sharedApp('own stack', { redisShards: 2, natGateways: 1 })).toThrow(
      /shareNetworkAndCacheOf is given \(OrdersStack\/Orders\), so natGateways, redisShards must not be/,
    );
  });

  it('refuse something other than an instance, from JavaScript', () => {
    expect(() => build({ shareNetworkAndCacheOf: { vpc: {} } as never })).toThrow(
      /shareNetworkAndCacheOf must be another ApiAccessAuthorizer of the app; got object/,
    );
  });
});
