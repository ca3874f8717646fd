import { Duration } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import { describe, expect, it } from 'vitest';
import { accessStackPropsFromContext } from '../../lib/access-context';
import { resourcesOfType, stackFromContext, testApp } from './fixtures';

const SECRET_ARN = 'arn:aws:secretsmanager:eu-west-1:123456789012:secret:provider-key-AbC123';

describe('context from `npx cdk deploy -c key=value`', () => {
  it('converts strings from the command line into typed settings', () => {
    const props = accessStackPropsFromContext(
      testApp({
        serviceId: '42',
        reportWindowSeconds: '30',
        multiAz: 'false',
        mappingRules: '[{"method":"GET","pattern":"/v1/words/{word}.json","metric":"get_word","delta":1}]',
        throttles: '{"Pro":{"rate":10,"burst":20}}',
      }),
    );
    expect(props).toMatchObject({
      serviceId: '42',
      multiAz: false,
      mappingRules: [{ method: 'GET', pattern: '/v1/words/{word}.json', metric: 'get_word', delta: 1 }],
      throttles: { Pro: { rate: 10, burst: 20 } },
    });
    expect(props.reportWindow?.toSeconds()).toBe(Duration.seconds(30).toSeconds());
  });

  it('reads -c mappingRulesSource=platform with its environment and bound into MappingRulesSource.platform', () => {
    const props = accessStackPropsFromContext(
      testApp({
        serviceId: '42',
        mappingRulesSource: 'platform',
        mappingRulesEnvironment: 'staging',
        mappingRulesRefreshSeconds: '60',
      }),
    );
    expect(props.mappingRulesSource?.settings).toEqual({
      mappingRulesSource: 'platform',
      mappingRulesEnvironment: 'staging',
      mappingRulesRefreshSeconds: 60,
    });
    expect(accessStackPropsFromContext(testApp({ serviceId: '42' })).mappingRulesSource).toBeUndefined();
    const stack = stackFromContext({
      serviceId: '42',
      mappingRulesSource: 'platform',
      adminApiUrl: 'https://acme-admin.3scale.net',
      adminTokenSecretArn: 'arn:aws:secretsmanager:eu-west-1:123456789012:secret:admin-AbC123',
    });
    const variables = Object.values(resourcesOfType(Template.fromStack(stack), 'AWS::Lambda::Function')).map(
      (fn) =>
        (fn.Properties.Environment as { Variables?: Record<string, unknown> } | undefined)?.Variables ?? {},
    );
    expect(variables.filter((each) => each.MAPPING_RULES_SOURCE === 'platform').length).toBeGreaterThan(0);
  });

  it.each([
    [{ mappingRulesSource: 'remote' }, /^Invalid context mappingRulesSource: must be given or platform/],
    [
      { mappingRulesEnvironment: 'staging' },
      /^Invalid context mappingRulesEnvironment: applies to -c mappingRulesSource=platform only/,
    ],
    [
      { mappingRulesSource: 'given', mappingRulesRefreshSeconds: '60' },
      /^Invalid context mappingRulesRefreshSeconds: applies to -c mappingRulesSource=platform only/,
    ],
    [
      { mappingRulesSource: 'platform', mappingRulesEnvironment: 'sandbox' },
      /mappingRulesEnvironment: must be staging or production/,
    ],
    [{ mappingRulesSource: 'platform' }, /adminApiUrl is required with mappingRulesSource platform/],
  ])('refuses mapping rules context %j, naming the key', (context, message) => {
    expect(() => stackFromContext({ serviceId: '42', ...context })).toThrow(message);
  });

  it.each([
    [{}, /^Missing context serviceId: run npx cdk deploy -c serviceId=<id> --parameters ProviderKey=<key>$/],
    [{ serviceId: '' }, /^Missing context serviceId/],
    [
      { serviceId: '1', reportWindowSeconds: 'ten' },
      /^Invalid context reportWindowSeconds: must be a number \(got "ten"\)$/,
    ],
    [{ serviceId: '1', reportWindowSeconds: '901' }, /reportWindowSeconds must be an integer from 0 to 900/],
    [{ serviceId: '1', negativeCacheTtlSeconds: '0' }, /negativeCacheTtlSeconds must be an integer from 1/],
    [{ serviceId: '1', failureMode: 'lenient' }, /failureMode must be one of strict, resilient, allow/],
    [{ serviceId: '1', limitMode: 'none' }, /limitMode must be one of hard, soft/],
    [
      { serviceId: '1', credentialMode: 'oauth', oidcJwksUrl: 'https://idp.example.com/certs' },
      /oidcIssuer is required in oauth mode/,
    ],
    [{ serviceId: '1', credentialMode: 'basic' }, /credentialMode must be one of user_key, app_id, oauth/],
    [
      { serviceId: '1', platformAuthKind: 'password' },
      /platformAuthKind must be one of provider_key, service_token/,
    ],
    [{ serviceId: '1', platformUrl: 'ftp://platform' }, /platformUrl must use http or https/],
    [
      { serviceId: '1', platformUrl: 'http://platform.example' },
      /platformUrl must be an https:\/\/ URL in AWS/,
    ],
    [{ serviceId: '1', natGateways: '3' }, /natGateways must be an integer from 1 to 2/],
    [{ serviceId: '1', cacheEngine: 'memcached' }, /cacheEngine must be one of redis, valkey/],
    [{ serviceId: '1', cacheNodeType: 'large' }, /cacheNodeType must be an ElastiCache node type/],
    [{ serviceId: '1', redisShards: 'three' }, /^Invalid context redisShards: must be a whole number/],
    [{ serviceId: '1', redisShards: '0' }, /redisShards must be an integer from 1 to 500/],
    [{ serviceId: '1', redisServerless: 'yes' }, /^Invalid context redisServerless: must be true or false/],
    [
      { serviceId: '1', redisServerless: 'true', redisShards: '2' },
      /redisServerless is true, so redisShards/,
    ],
    [
      { serviceId: '1', serverlessLimits: '{"maxDataStorageGb":5}' },
      /serverlessLimits apply to a serverless cache/,
    ],
    [{ serviceId: '1', serverlessLimits: '10' }, /Invalid context serverlessLimits: must be a JSON object/],
    [{ serviceId: '1', credentialHeader: 'x api key' }, /credentialHeader/],
    [{ serviceId: '1', tracing: 'yes' }, /^Invalid context tracing: must be true or false/],
    [{ serviceId: '1', alarmEmail: 'ops' }, /alarmEmail must be an email address/],
    [
      { serviceId: '1', providerKeySecretKmsKeyArn: 'arn:aws:kms:eu-west-1:123456789012:key/abc' },
      /providerKeySecretKmsKeyArn applies to the secret given by providerKeySecretArn/,
    ],
    [
      {
        serviceId: '1',
        providerKeySecretArn: SECRET_ARN,
        providerKeySecretKmsKeyArn: 'arn:aws:kms:eu-west-1:123456789012:alias/provider-key',
      },
      /providerKeySecretKmsKeyArn must be a KMS key ARN/,
    ],
    [{ serviceId: '1', mappingRules: '[{"method":' }, /^Invalid context mappingRules: must be valid JSON/],
    [
      { serviceId: '1', mappingRules: '[{"method":"GET","pattern":"words","metric":"hits"}]' },
      /mappingRules\[0\]\.pattern must start with \//,
    ],
    [{ serviceId: '1', multiAz: 'yes' }, /^Invalid context multiAz: must be true or false/],
    [
      { serviceId: '1', throttles: '{"Pro":{"rate":10,"burst":0}}' },
      /throttles\.Pro\.burst must be a whole number/,
    ],
    [{ serviceId: '1', throttlingRateLimit: '0' }, /throttlingRateLimit must be an integer from 1/],
    [
      {
        serviceId: '1',
        providerKeySecretArn: 'arn:aws:secretsmanager:eu-west-1:123456789012:secret:provider-key',
      },
      /providerKeySecretArn must be a complete Secrets Manager secret ARN/,
    ],
  ])('refuses %j with a message that names the setting', (context, message) => {
    expect(() => stackFromContext(context)).toThrow(message);
  });
});

describe('provider key from an existing secret', () => {
  const template = Template.fromStack(stackFromContext({ serviceId: '1', providerKeySecretArn: SECRET_ARN }));

  it('asks for no ProviderKey parameter and creates no provider-key secret', () => {
    expect(Object.keys(template.toJSON().Parameters ?? {})).not.toContain('ProviderKey');
    template.resourcePropertiesCountIs('AWS::SecretsManager::Secret', { SecretString: Match.anyValue() }, 0);
  });

  it('grants the functions read on exactly that secret', () => {
    template.hasResourceProperties('AWS::IAM::Policy', {
      PolicyDocument: {
        Statement: Match.arrayWith([
          {
            Action: ['secretsmanager:GetSecretValue', 'secretsmanager:DescribeSecret'],
            Effect: 'Allow',
            Resource: SECRET_ARN,
          },
        ]),
      },
    });
  });
});

describe('app_id credential mode', () => {
  const template = Template.fromStack(stackFromContext({ serviceId: '1', credentialMode: 'app_id' }));

  it('takes only the app_id header as identity source: an application without keys reaches the authorizer', () => {
    template.hasResourceProperties('AWS::ApiGateway::Authorizer', {
      IdentitySource: 'method.request.header.app_id',
      AuthorizerResultTtlInSeconds: 0,
    });
  });

  it('tells consumers in the 401 body to send app_id and app_key', () => {
    template.hasResourceProperties('AWS::ApiGateway::GatewayResponse', {
      ResponseType: 'UNAUTHORIZED',
      ResponseTemplates: { 'application/json': Match.stringLikeRegexp('app_id header.*app_key header') },
    });
  });
});

describe('credential headers from context', () => {
  it('take -c credentialHeader=x-api-key as the identity source and the header the echo backend hides', () => {
    const template = Template.fromStack(stackFromContext({ serviceId: '1', credentialHeader: 'x-api-key' }));
    template.hasResourceProperties('AWS::ApiGateway::Authorizer', {
      IdentitySource: 'method.request.header.x-api-key',
    });
    template.hasResourceProperties('AWS::Lambda::Function', {
      Environment: { Variables: Match.objectLike({ CREDENTIAL_HEADER: 'x-api-key' }) },
    });
  });

  it('take -c appIdHeader and appKeyHeader in app_id mode', () => {
    const props = accessStackPropsFromContext(
      testApp({
        serviceId: '1',
        credentialMode: 'app_id',
        appIdHeader: 'x-app-id',
        appKeyHeader: 'x-app-key',
      }),
    );
    expect(props).toMatchObject({ appIdHeader: 'x-app-id', appKeyHeader: 'x-app-key' });
  });
});

describe('single-node development setup (multiAz=false)', () => {
  const template = Template.fromStack(stackFromContext({ serviceId: '1', multiAz: 'false' }));

  it('runs one Redis node without failover', () => {
    template.hasResourceProperties('AWS::ElastiCache::ReplicationGroup', {
      NumCacheClusters: 1,
      AutomaticFailoverEnabled: false,
      MultiAZEnabled: false,
    });
  });

  it('runs one NAT gateway', () => {
    expect(Object.keys(resourcesOfType(template, 'AWS::EC2::NatGateway'))).toHaveLength(1);
  });
});

describe('report window from context', () => {
  const template = Template.fromStack(stackFromContext({ serviceId: '1', reportWindowSeconds: '0' }));

  it('sets a zero window as no queue delay and one message per call', () => {
    template.hasResourceProperties('AWS::SQS::Queue', { DelaySeconds: 0, RedrivePolicy: Match.anyValue() });
    template.hasResourceProperties('AWS::Lambda::Function', {
      Environment: { Variables: Match.objectLike({ REPORT_WINDOW_SECONDS: '0' }) },
    });
  });
});

describe('operations settings from context', () => {
  it('read every cost and operations setting', () => {
    const props = accessStackPropsFromContext(
      testApp({
        serviceId: '1',
        natGateways: '1',
        cacheNodeType: 'cache.t4g.small',
        cacheEngine: 'valkey',
        tracing: 'true',
        alarmEmail: 'ops@example.com',
        providerKeySecretKmsKeyArn: 'arn:aws:kms:eu-west-1:123456789012:key/abc',
      }),
    );
    expect(props).toMatchObject({
      natGateways: 1,
      cacheNodeType: 'cache.t4g.small',
      cacheEngine: 'valkey',
      tracing: true,
      alarmEmail: 'ops@example.com',
      providerKeySecretKmsKeyArn: 'arn:aws:kms:eu-west-1:123456789012:key/abc',
    });
  });

  it('read the sharded and the serverless cache settings', () => {
    expect(
      accessStackPropsFromContext(testApp({ serviceId: '1', redisShards: '3', replicasPerShard: '2' })),
    ).toMatchObject({ redisShards: 3, replicasPerShard: 2 });
    const serverless = accessStackPropsFromContext(
      testApp({
        serviceId: '1',
        redisServerless: 'true',
        serverlessLimits: '{"maxDataStorageGb":10,"maxEcpuPerSecond":20000}',
      }),
    );
    expect(serverless).toMatchObject({
      redisServerless: true,
      serverlessLimits: { maxDataStorageGb: 10, maxEcpuPerSecond: 20000 },
    });
    expect(accessStackPropsFromContext(testApp({ serviceId: '1' })).serverlessLimits).toBeUndefined();
  });

  it('mail every alarm to -c alarmEmail through a TLS-only topic', () => {
    const template = Template.fromStack(stackFromContext({ serviceId: '1', alarmEmail: 'ops@example.com' }));
    template.hasResourceProperties('AWS::SNS::Subscription', {
      Protocol: 'email',
      Endpoint: 'ops@example.com',
    });
    const alarms = Object.values(resourcesOfType(template, 'AWS::CloudWatch::Alarm'));
    expect(alarms).toHaveLength(10);
    for (const alarm of alarms) {
      expect(alarm.Properties.AlarmActions).toEqual([{ Ref: expect.stringMatching(/^AlarmTopic/) }]);
    }
  });

  it('trace the stage and the functions with -c tracing=true, and neither by default', () => {
    const traced = Template.fromStack(stackFromContext({ serviceId: '1', tracing: 'true' }));
    traced.hasResourceProperties('AWS::ApiGateway::Stage', { TracingEnabled: true });
    traced.resourcePropertiesCountIs('AWS::Lambda::Function', { TracingConfig: { Mode: 'Active' } }, 5);
    const untraced = Template.fromStack(stackFromContext({ serviceId: '1' }));
    untraced.hasResourceProperties('AWS::ApiGateway::Stage', { TracingEnabled: false });
    untraced.resourcePropertiesCountIs('AWS::Lambda::Function', { TracingConfig: Match.anyValue() }, 0);
  });
});
