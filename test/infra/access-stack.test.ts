import { Match, Template } from 'aws-cdk-lib/assertions';
import { Runtime, RuntimeFamily } from 'aws-cdk-lib/aws-lambda';
import { describe, expect, it } from 'vitest';
import { configFromEnv, ENV, LOCAL_SECRET_ENV } from '../../core/settings/config';
import { REST_AUTHORIZER_OVERHEAD_QUERY } from '../../lib/parts/gateway-overhead';
import { exemptMethodIds, logicalId, logQueryWidgetsOf, resourcesOfType, stackFromContext } from './fixtures';

const template = Template.fromStack(stackFromContext({ serviceId: '2555417735060' }));

const authorizerId = logicalId(template, 'AWS::ApiGateway::Authorizer', 'ApiAccessProtectionAuthorizer');
const topicId = logicalId(template, 'AWS::SNS::Topic', 'AccessUsageTopic');
const queueId = logicalId(template, 'AWS::SQS::Queue', 'AccessUsageQueue');
const deadLetterQueueId = logicalId(template, 'AWS::SQS::Queue', 'AccessUsageDeadLetterQueue');
const providerSecretId = logicalId(template, 'AWS::SecretsManager::Secret', 'PlatformCredential');
const redisSecretId = logicalId(template, 'AWS::SecretsManager::Secret', 'AccessRedisAuthToken');
const functionSecurityGroupId = logicalId(template, 'AWS::EC2::SecurityGroup', 'AccessFunctionSecurityGroup');
const redisSecurityGroupId = logicalId(template, 'AWS::EC2::SecurityGroup', 'AccessRedisSecurityGroup');
const functions = resourcesOfType(template, 'AWS::Lambda::Function');
const functionId = (prefix: string) => logicalId(template, 'AWS::Lambda::Function', prefix);

function only<T>(resources: Record<string, T>): T {
  const values = Object.values(resources);
  expect(values).toHaveLength(1);
  return values[0] as T;
}

type Statement = { Action: string | string[]; Effect: string; Resource: unknown };

function statementsOfRoleOf(functionPrefix: string): Statement[] {
  const role = (functions[functionId(functionPrefix)].Properties.Role as { 'Fn::GetAtt': [string] })[
    'Fn::GetAtt'
  ][0];
  return Object.values(resourcesOfType(template, 'AWS::IAM::Policy'))
    .filter((policy) => (policy.Properties.Roles as { Ref: string }[]).some((ref) => ref.Ref === role))
    .flatMap((policy) => (policy.Properties.PolicyDocument as { Statement: Statement[] }).Statement);
}

function actionsOf(statement: Statement): string[] {
  return Array.isArray(statement.Action) ? statement.Action : [statement.Action];
}

/** Every place in the template where `value` appears, as a dotted path. */
function pathsOf(node: unknown, value: unknown, at = ''): string[] {
  if (JSON.stringify(node) === JSON.stringify(value)) return [at];
  if (typeof node !== 'object' || node === null) return [];
  return Object.entries(node).flatMap(([key, child]) => pathsOf(child, value, at ? `${at}.${key}` : key));
}

describe('authorizer', () => {
  it('is a REQUEST authorizer with result TTL 0 and the apikey header as identity source', () => {
    template.hasResourceProperties('AWS::ApiGateway::Authorizer', {
      Type: 'REQUEST',
      AuthorizerResultTtlInSeconds: 0,
      IdentitySource: 'method.request.header.apikey',
    });
  });

  it('protects every method of the API but the documentation', () => {
    const open = exemptMethodIds(template);
    expect(open).toHaveLength(2);
    const methods = Object.entries(resourcesOfType(template, 'AWS::ApiGateway::Method'))
      .filter(([id, method]) => method.Properties.HttpMethod !== 'OPTIONS' && !open.includes(id))
      .map(([, method]) => method);
    expect(methods.length).toBeGreaterThanOrEqual(3);
    for (const method of methods) {
      expect(method.Properties).toMatchObject({
        AuthorizationType: 'CUSTOM',
        AuthorizerId: { Ref: authorizerId },
      });
    }
  });

  it('runs in the private subnets with the function security group', () => {
    const vpcConfig = functions[functionId('AccessAuthorizerFunction')].Properties.VpcConfig as {
      SecurityGroupIds: unknown[];
      SubnetIds: { Ref: string }[];
    };
    expect(vpcConfig.SecurityGroupIds).toEqual([{ 'Fn::GetAtt': [functionSecurityGroupId, 'GroupId'] }]);
    expect(vpcConfig.SubnetIds.map((subnet) => subnet.Ref)).toEqual([
      expect.stringMatching(/^AccessVpcfunctionsSubnet1/),
      expect.stringMatching(/^AccessVpcfunctionsSubnet2/),
    ]);
  });
});

describe('demo API', () => {
  it('routes GET /v1/words/{word} and ANY / and ANY /{proxy+} to the echo backend', () => {
    const pathParts = Object.values(resourcesOfType(template, 'AWS::ApiGateway::Resource')).map(
      (resource) => resource.Properties.PathPart,
    );
    expect(pathParts.sort()).toEqual(['docs', '{file}', 'v1', 'words', '{proxy+}', '{word}'].sort());
    const open = exemptMethodIds(template);
    const methods = Object.entries(resourcesOfType(template, 'AWS::ApiGateway::Method'))
      .filter(([id]) => !open.includes(id))
      .map(([, method]) => method.Properties.HttpMethod);
    expect(methods.sort()).toEqual(['ANY', 'ANY', 'GET']);
  });

  it('answers 401 with a fixed JSON message naming the credential header', () => {
    template.hasResourceProperties('AWS::ApiGateway::GatewayResponse', {
      ResponseType: 'UNAUTHORIZED',
      StatusCode: '401',
      ResponseTemplates: { 'application/json': Match.stringLikeRegexp('apikey header') },
    });
  });

  it("answers 403 with the authorizer's reason", () => {
    template.hasResourceProperties('AWS::ApiGateway::GatewayResponse', {
      ResponseType: 'ACCESS_DENIED',
      StatusCode: '403',
      ResponseTemplates: {
        'application/json': Match.stringLikeRegexp('"reason":"\\$context.authorizer.reason"'),
      },
    });
  });

  it('answers 500 with a JSON message when the authorizer fails', () => {
    template.hasResourceProperties('AWS::ApiGateway::GatewayResponse', {
      ResponseType: 'AUTHORIZER_FAILURE',
      StatusCode: '500',
      ResponseTemplates: { 'application/json': Match.stringLikeRegexp('unavailable') },
    });
  });

  it('writes JSON access logs without headers or query strings to a log group', () => {
    const stage = only(resourcesOfType(template, 'AWS::ApiGateway::Stage'));
    const accessLog = stage.Properties.AccessLogSetting as { DestinationArn: unknown; Format: string };
    expect(accessLog.DestinationArn).toEqual({
      'Fn::GetAtt': [expect.stringMatching(/^ApiAccessLogs/), 'Arn'],
    });
    const fields = JSON.parse(accessLog.Format) as Record<string, string>;
    expect(fields.denialReason).toBe('$context.authorizer.reason');
    // The authorizer step as API Gateway times it, the Lambda's part of it, and its status (issue 34).
    expect(fields).toMatchObject({
      authorizerLatency: '$context.authorizer.latency',
      authorizerIntegrationLatency: '$context.authorizer.integrationLatency',
      authorizerStatus: '$context.authorizer.status',
    });
    expect(accessLog.Format).not.toMatch(/header|querystring|apikey|app_key/i);
  });

  it("puts the authorizer's overhead per route on the dashboard, queried from the stage's access log", () => {
    const accessLogsId = logicalId(template, 'AWS::Logs::LogGroup', 'ApiAccessLogs');
    expect(logQueryWidgetsOf(template)).toEqual([
      {
        title: expect.stringMatching(/^Authorizer overhead per route/),
        query: `SOURCE '<Ref ${accessLogsId}>' | ${REST_AUTHORIZER_OVERHEAD_QUERY}`,
      },
    ]);
    expect(REST_AUTHORIZER_OVERHEAD_QUERY).toMatch(
      /pct\(authorizerLatency, 50\).*pct\(authorizerLatency, 90\).*pct\(authorizerLatency, 99\)/s,
    );
  });

  it('logs execution errors only, never request data, and throttles the stage', () => {
    template.hasResourceProperties('AWS::ApiGateway::Stage', {
      MethodSettings: [
        {
          HttpMethod: '*',
          ResourcePath: '/*',
          LoggingLevel: 'ERROR',
          DataTraceEnabled: false,
          ThrottlingRateLimit: 100,
          ThrottlingBurstLimit: 200,
        },
      ],
    });
  });
});

describe('Redis', () => {
  it("listens on the specification's port 6379", () => {
    template.hasResourceProperties('AWS::ElastiCache::ReplicationGroup', { Port: 6379 });
  });

  it('encrypts in transit and at rest', () => {
    template.hasResourceProperties('AWS::ElastiCache::ReplicationGroup', {
      TransitEncryptionEnabled: true,
      AtRestEncryptionEnabled: true,
    });
  });

  it('takes its AUTH token from a generated secret through a dynamic reference', () => {
    template.hasResourceProperties('AWS::ElastiCache::ReplicationGroup', {
      AuthToken: {
        'Fn::Join': ['', ['{{resolve:secretsmanager:', { Ref: redisSecretId }, ':SecretString:::}}']],
      },
    });
    template.hasResourceProperties('AWS::SecretsManager::Secret', {
      GenerateSecretString: { ExcludePunctuation: true, PasswordLength: 64 },
    });
  });

  it('never evicts keys without a TTL (unreported usage) under memory pressure', () => {
    const groups = resourcesOfType(template, 'AWS::ElastiCache::ParameterGroup');
    const [groupId] = Object.keys(groups);
    expect(Object.values(groups)).toEqual([
      expect.objectContaining({
        Properties: expect.objectContaining({ Properties: { 'maxmemory-policy': 'volatile-lru' } }),
      }),
    ]);
    template.hasResourceProperties('AWS::ElastiCache::ReplicationGroup', {
      CacheParameterGroupName: { Ref: groupId },
    });
  });

  it('is Multi-AZ with one replica and automatic failover', () => {
    template.hasResourceProperties('AWS::ElastiCache::ReplicationGroup', {
      NumCacheClusters: 2,
      AutomaticFailoverEnabled: true,
      MultiAZEnabled: true,
    });
  });

  it("admits only the Lambdas' security group, on 6379", () => {
    const ingress = Object.values(resourcesOfType(template, 'AWS::EC2::SecurityGroupIngress')).filter(
      (rule) => JSON.stringify(rule.Properties.GroupId).includes(redisSecurityGroupId),
    );
    expect(ingress.map((rule) => rule.Properties)).toEqual([
      expect.objectContaining({
        IpProtocol: 'tcp',
        FromPort: 6379,
        ToPort: 6379,
        SourceSecurityGroupId: { 'Fn::GetAtt': [functionSecurityGroupId, 'GroupId'] },
      }),
    ]);
    template.hasResourceProperties('AWS::EC2::SecurityGroup', {
      GroupDescription: Match.stringLikeRegexp('Redis'),
      SecurityGroupIngress: Match.absent(),
    });
  });
});

describe('usage reporting', () => {
  it('delays queue delivery by the report window and dead-letters after 5 receives', () => {
    const queue = resourcesOfType(template, 'AWS::SQS::Queue')[queueId];
    expect(queue?.Properties).toMatchObject({
      DelaySeconds: 10,
      RedrivePolicy: {
        deadLetterTargetArn: { 'Fn::GetAtt': [deadLetterQueueId, 'Arn'] },
        maxReceiveCount: 5,
      },
    });
  });

  it('keeps a message invisible for at least six reporter timeouts', () => {
    const reporterTimeout = functions[functionId('AccessReporterFunction')].Properties.Timeout as number;
    const queue = resourcesOfType(template, 'AWS::SQS::Queue')[queueId];
    expect(queue?.Properties.VisibilityTimeout).toBeGreaterThanOrEqual(6 * reporterTimeout);
  });

  it('encrypts both queues and refuses non-TLS access to them', () => {
    for (const queue of Object.values(resourcesOfType(template, 'AWS::SQS::Queue'))) {
      expect(queue.Properties.SqsManagedSseEnabled).toBe(true);
    }
    for (const id of [queueId, deadLetterQueueId]) {
      template.hasResourceProperties('AWS::SQS::QueuePolicy', {
        Queues: [{ Ref: id }],
        PolicyDocument: {
          Statement: Match.arrayWith([
            Match.objectLike({ Effect: 'Deny', Condition: { Bool: { 'aws:SecureTransport': 'false' } } }),
          ]),
        },
      });
    }
  });

  it('subscribes the queue to the topic with raw message delivery and a dead-letter queue', () => {
    template.hasResourceProperties('AWS::SNS::Subscription', {
      Protocol: 'sqs',
      TopicArn: { Ref: topicId },
      Endpoint: { 'Fn::GetAtt': [queueId, 'Arn'] },
      RawMessageDelivery: true,
      RedrivePolicy: { deadLetterTargetArn: { 'Fn::GetAtt': [deadLetterQueueId, 'Arn'] } },
    });
  });

  it('lets only TLS publishers publish to the topic', () => {
    template.hasResourceProperties('AWS::SNS::TopicPolicy', {
      Topics: [{ Ref: topicId }],
      PolicyDocument: {
        Statement: [
          Match.objectLike({
            Action: 'sns:Publish',
            Effect: 'Deny',
            Condition: { Bool: { 'aws:SecureTransport': 'false' } },
          }),
        ],
      },
    });
  });

  it('feeds the reporter from the queue with partial batch responses', () => {
    template.hasResourceProperties('AWS::Lambda::EventSourceMapping', {
      EventSourceArn: { 'Fn::GetAtt': [queueId, 'Arn'] },
      FunctionName: { Ref: functionId('AccessReporterFunction') },
      FunctionResponseTypes: ['ReportBatchItemFailures'],
    });
  });

  it('runs the sweep handler every minute', () => {
    const sweepId = functionId('AccessSweepFunction');
    expect(functions[sweepId].Properties.Handler).toBe('index.sweepHandler');
    template.hasResourceProperties('AWS::Events::Rule', {
      ScheduleExpression: 'rate(1 minute)',
      Targets: [Match.objectLike({ Arn: { 'Fn::GetAtt': [sweepId, 'Arn'] } })],
    });
  });
});

describe('permissions', () => {
  it('scopes every SNS, SQS and Secrets Manager statement to named resources', () => {
    const statements = Object.values(resourcesOfType(template, 'AWS::IAM::Policy')).flatMap(
      (policy) => (policy.Properties.PolicyDocument as { Statement: Statement[] }).Statement,
    );
    const scoped = statements.filter((statement) =>
      actionsOf(statement).some((action) => /^(sns|sqs|secretsmanager):/.test(action)),
    );
    expect(scoped.length).toBeGreaterThan(0);
    for (const statement of scoped) {
      expect(JSON.stringify(statement.Resource)).not.toContain('*');
    }
  });

  it('lets the authorizer publish to the usage topic only and read the two secrets', () => {
    const statements = statementsOfRoleOf('AccessAuthorizerFunction');
    expect(statements.filter((s) => actionsOf(s).includes('sns:Publish')).map((s) => s.Resource)).toEqual([
      { Ref: topicId },
    ]);
    expect(
      statements.filter((s) => actionsOf(s).includes('secretsmanager:GetSecretValue')).map((s) => s.Resource),
    ).toEqual([{ Ref: providerSecretId }, { Ref: redisSecretId }]);
    expect(statements.flatMap(actionsOf).filter((action) => action.startsWith('sqs:'))).toEqual([]);
  });

  it('lets the reporter consume the usage queue, read the two secrets and publish usage alerts only', () => {
    const statements = statementsOfRoleOf('AccessReporterFunction');
    expect(
      statements.filter((s) => actionsOf(s).includes('sqs:ReceiveMessage')).map((s) => s.Resource),
    ).toEqual([{ 'Fn::GetAtt': [queueId, 'Arn'] }]);
    expect(
      statements.filter((s) => actionsOf(s).includes('secretsmanager:GetSecretValue')).map((s) => s.Resource),
    ).toEqual([{ Ref: providerSecretId }, { Ref: redisSecretId }]);
    expect(statements.filter((s) => actionsOf(s).some((action) => action.startsWith('sns:')))).toEqual([
      expect.objectContaining({
        Action: 'sns:Publish',
        Resource: { Ref: logicalId(template, 'AWS::SNS::Topic', 'AccessAlertsTopic') },
      }),
    ]);
  });
});

describe('provider key', () => {
  it('is a NoEcho parameter without a default', () => {
    template.hasParameter('ProviderKey', { Type: 'String', NoEcho: true, Default: Match.absent() });
  });

  it('flows only into the secret, never into an environment, output or other resource', () => {
    expect(pathsOf(template.toJSON(), { Ref: 'ProviderKey' })).toEqual([
      `Resources.${providerSecretId}.Properties.SecretString`,
    ]);
  });
});

describe('functions', () => {
  const authorizerEnvironment = (
    functions[functionId('AccessAuthorizerFunction')].Properties.Environment as {
      Variables: Record<string, unknown>;
    }
  ).Variables;

  it('get secret ARNs, never raw credentials, in their environment', () => {
    expect(authorizerEnvironment[ENV.platformCredentialSecretArn]).toEqual({ Ref: providerSecretId });
    expect(authorizerEnvironment[ENV.redisAuthSecretArn]).toEqual({ Ref: redisSecretId });
    for (const fn of Object.values(functions)) {
      const names = Object.keys(
        (fn.Properties.Environment as { Variables: object } | undefined)?.Variables ?? {},
      );
      for (const secretName of Object.values(LOCAL_SECRET_ENV)) expect(names).not.toContain(secretName);
    }
  });

  it("get an environment the handlers' configFromEnv reads back", () => {
    const deployed = Object.fromEntries(
      Object.entries(authorizerEnvironment).map(([name, value]) => [
        name,
        typeof value === 'string' ? value : `deploy-time-value-of-${name}`,
      ]),
    );
    const config = configFromEnv(deployed);
    expect(config).toMatchObject({
      serviceId: '2555417735060',
      credentialMode: 'user_key',
      reportWindowSeconds: 10,
      redis: { port: 6379, tls: true, authSecretArn: `deploy-time-value-of-${ENV.redisAuthSecretArn}` },
      topicArn: `deploy-time-value-of-${ENV.topicArn}`,
    });
  });

  it('run the newest Node.js runtime of the installed aws-cdk-lib on ARM64', () => {
    const versionOf = (runtime: Runtime) => Number(/^nodejs(\d+)\.x$/.exec(runtime.name)?.[1] ?? -1);
    const newest = Runtime.ALL.filter((runtime) => runtime.family === RuntimeFamily.NODEJS).sort(
      (a, b) => versionOf(b) - versionOf(a),
    )[0];
    for (const fn of Object.values(functions)) {
      expect(fn.Properties).toMatchObject({ Runtime: newest?.name, Architectures: ['arm64'] });
    }
  });

  it('apply source maps to stack traces and log to a log group with retention', () => {
    const logGroups = resourcesOfType(template, 'AWS::Logs::LogGroup');
    for (const fn of Object.values(functions)) {
      const variables = (fn.Properties.Environment as { Variables: Record<string, unknown> }).Variables;
      expect(variables.NODE_OPTIONS).toBe('--enable-source-maps');
      const logGroup = (fn.Properties.LoggingConfig as { LogGroup: { Ref: string } }).LogGroup.Ref;
      expect(logGroups[logGroup]?.Properties.RetentionInDays).toBe(30);
    }
  });

  it('log in JSON with the system log level at WARN (no START, END and REPORT lines) and the application level left at its default', () => {
    for (const fn of Object.values(functions)) {
      const logging = fn.Properties.LoggingConfig as Record<string, unknown>;
      expect(logging).toMatchObject({ LogFormat: 'JSON', SystemLogLevel: 'WARN' });
      // An application level above INFO would drop the EMF lines, which carry no level.
      expect(logging).not.toHaveProperty('ApplicationLogLevel');
    }
  });
});

describe('outputs', () => {
  it('give the API URL, the topic ARN and the Redis endpoint', () => {
    template.hasOutput('ApiUrl', { Value: Match.objectLike({ 'Fn::Join': Match.anyValue() }) });
    template.hasOutput('UsageTopicArn', { Value: { Ref: topicId } });
    template.hasOutput('RedisEndpoint', {
      Value: {
        'Fn::Join': [
          '',
          [
            {
              'Fn::GetAtt': [
                logicalId(template, 'AWS::ElastiCache::ReplicationGroup', 'AccessRedis'),
                'PrimaryEndPoint.Address',
              ],
            },
            ':6379',
          ],
        ],
      },
    });
  });
});
