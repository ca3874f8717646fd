/** The construct's own settings: what it refuses, and what its operations settings change. */
import { createRequire } from 'node:module';
import * as path from 'node:path';
import { Stack } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import { Vpc } from 'aws-cdk-lib/aws-ec2';
import { Key } from 'aws-cdk-lib/aws-kms';
import { type ISecret, Secret } from 'aws-cdk-lib/aws-secretsmanager';
import { Topic } from 'aws-cdk-lib/aws-sns';
import { describe, expect, it } from 'vitest';
import { ApiAccessAuthorizer, type ApiAccessAuthorizerProps } from '../../lib/api-access-authorizer';
import { resourcesOfType, testApp } from './fixtures';

const KEY_ARN = 'arn:aws:kms:eu-west-1:123456789012:key/1234abcd-12ab-34cd-56ef-1234567890ab';

function build(
  props: Partial<ApiAccessAuthorizerProps> | ((stack: Stack) => Partial<ApiAccessAuthorizerProps>) = {},
) {
  const stack = new Stack(testApp(), 'ProviderStack');
  const access = new ApiAccessAuthorizer(stack, 'Access', {
    serviceId: '2555417735060',
    platformCredential: Secret.fromSecretCompleteArn(
      stack,
      'ProviderKey',
      'arn:aws:secretsmanager:eu-west-1:123456789012:secret:provider-key-AbC123',
    ),
    ...(typeof props === 'function' ? props(stack) : props),
  });
  return { stack, access };
}

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
    [{ cacheEngine: 'memcached' as never }, /cacheEngine must be one of redis, valkey/],
    [{ platformUrl: 'ftp://x' }, /platformUrl must use http or https/],
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

  it('watch the authorizer, the platform, unrecorded usage, dead letters, the reporter and Redis', () => {
    const ids = Object.keys(resourcesOfType(Template.fromStack(stack), 'AWS::CloudWatch::Alarm'));
    expect(ids.map((id) => id.replace(/^AccessAlarms/, '').replace(/[0-9A-F]{8}$/, '')).sort()).toEqual([
      'AuthorizerErrors',
      'PlatformUnavailable',
      'RedisCpu',
      'RedisMemory',
      'ReporterErrors',
      'UsageDeadLetters',
      'UsageNotRecorded',
    ]);
  });

  it('all notify the alarm topic', () => {
    for (const alarm of alarms) expect(alarm.Properties.AlarmActions).toEqual([expect.anything()]);
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
