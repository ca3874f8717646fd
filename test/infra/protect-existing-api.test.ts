import { Duration, Stack } from 'aws-cdk-lib';
import { Annotations, Match, Template } from 'aws-cdk-lib/assertions';
import { AuthorizationType, Cors, MockIntegration, RestApi } from 'aws-cdk-lib/aws-apigateway';
import { SecurityGroup, Vpc } from 'aws-cdk-lib/aws-ec2';
import { Secret } from 'aws-cdk-lib/aws-secretsmanager';
import { Topic } from 'aws-cdk-lib/aws-sns';
import { describe, expect, it } from 'vitest';
import { ApiAccessAuthorizer, type ApiAccessAuthorizerProps } from '../../lib/api-access-authorizer';
import { logicalId, resourcesOfType, testApp } from './fixtures';

/** A provider's own stack: its RestApi exists before the authorizer does. */
function providerStack(): { stack: Stack; api: RestApi; credential: Secret } {
  const stack = new Stack(testApp(), 'ProviderStack');
  const api = new RestApi(stack, 'OrdersApi', {
    defaultCorsPreflightOptions: { allowOrigins: Cors.ALL_ORIGINS },
  });
  api.root.addResource('orders').addMethod('GET', new MockIntegration());
  const credential = new Secret(stack, 'ProviderKey');
  return { stack, api, credential };
}

function authorizerProps(credential: Secret): ApiAccessAuthorizerProps {
  return { serviceId: '2555417735060', platformCredential: credential, docs: true };
}

describe('protecting a RestApi the provider already has', () => {
  const { stack, api, credential } = providerStack();
  const access = new ApiAccessAuthorizer(stack, 'Access', authorizerProps(credential));
  access.protect(api);
  // Added after protect(): the Aspect covers it at synthesis.
  api.root.resourceForPath('/orders/{id}').addMethod('DELETE', new MockIntegration());
  const template = Template.fromStack(stack);
  const authorizerId = logicalId(
    template,
    'AWS::ApiGateway::Authorizer',
    'OrdersApiAccessProtectionAuthorizer',
  );
  const methods = Object.values(resourcesOfType(template, 'AWS::ApiGateway::Method'));

  it('puts every method behind the authorizer, including methods added after protect()', () => {
    // The documentation methods are open by design (test/infra/parts/docs.test.ts).
    const documentation = (method: (typeof methods)[number]) =>
      JSON.stringify(method.Properties.ResourceId).toLowerCase().includes('docs');
    const protectedMethods = methods.filter(
      (method) => method.Properties.HttpMethod !== 'OPTIONS' && !documentation(method),
    );
    expect(methods.filter(documentation).length).toBeGreaterThan(0);
    expect(protectedMethods.map((method) => method.Properties.HttpMethod).sort()).toEqual(['DELETE', 'GET']);
    for (const method of protectedMethods) {
      expect(method.Properties).toMatchObject({
        AuthorizationType: 'CUSTOM',
        AuthorizerId: { Ref: authorizerId },
      });
    }
  });

  it('leaves CORS preflight (OPTIONS) methods open', () => {
    const preflights = methods.filter((method) => method.Properties.HttpMethod === 'OPTIONS');
    expect(preflights.length).toBeGreaterThan(0);
    for (const method of preflights) expect(method.Properties.AuthorizationType).toBe('NONE');
  });

  it("attaches the authorizer to the provider's API with result TTL 0", () => {
    template.hasResourceProperties('AWS::ApiGateway::Authorizer', {
      RestApiId: { Ref: logicalId(template, 'AWS::ApiGateway::RestApi', 'OrdersApi') },
      AuthorizerResultTtlInSeconds: 0,
    });
  });
});

describe('protect()', () => {
  it('changes the deployment so API Gateway serves the protected methods', () => {
    const deploymentIdOf = (protect: boolean): string => {
      const { stack, api, credential } = providerStack();
      if (protect) {
        new ApiAccessAuthorizer(stack, 'Access', authorizerProps(credential)).protect(api, {
          gatewayResponses: false,
        });
      }
      return logicalId(Template.fromStack(stack), 'AWS::ApiGateway::Deployment', 'OrdersApiDeployment');
    };
    expect(deploymentIdOf(true)).not.toBe(deploymentIdOf(false));
  });

  it('fails synthesis for a method that already uses another authorization type', () => {
    const { stack, api, credential } = providerStack();
    api.root.addMethod('POST', new MockIntegration(), { authorizationType: AuthorizationType.IAM });
    new ApiAccessAuthorizer(stack, 'Access', authorizerProps(credential)).protect(api);
    Annotations.fromStack(stack).hasError(
      '*',
      Match.stringLikeRegexp('POST / already uses AWS_IAM authorization'),
    );
  });

  it('gives each protected RestApi its own authorizer', () => {
    const { stack, api, credential } = providerStack();
    const access = new ApiAccessAuthorizer(stack, 'Access', authorizerProps(credential));
    const other = new RestApi(stack, 'OtherApi');
    other.root.addMethod('GET', new MockIntegration());
    access.protect(api);
    access.protect(other);
    const template = Template.fromStack(stack);
    template.resourceCountIs('AWS::ApiGateway::Authorizer', 2);
    template.hasResourceProperties('AWS::ApiGateway::Method', {
      RestApiId: { Ref: logicalId(template, 'AWS::ApiGateway::RestApi', 'OtherApi') },
      AuthorizerId: { Ref: logicalId(template, 'AWS::ApiGateway::Authorizer', 'OtherApiAccessProtection') },
    });
  });

  it('returns the same protection when asked again, and refuses a second ApiAccessAuthorizer', () => {
    const { stack, api, credential } = providerStack();
    const access = new ApiAccessAuthorizer(stack, 'Access', authorizerProps(credential));
    expect(access.protect(api)).toBe(access.protect(api));
    const second = new ApiAccessAuthorizer(stack, 'SecondAccess', authorizerProps(credential));
    expect(() => second.protect(api)).toThrow(
      /OrdersApi is already protected by another ApiAccessAuthorizer/,
    );
  });

  it('can leave gateway responses to an API that defines its own', () => {
    const { stack, api, credential } = providerStack();
    new ApiAccessAuthorizer(stack, 'Access', authorizerProps(credential)).protect(api, {
      gatewayResponses: false,
    });
    Template.fromStack(stack).resourceCountIs('AWS::ApiGateway::GatewayResponse', 0);
  });
});

describe('construct props', () => {
  it('refuses a report window that is not a whole number of seconds, naming the prop', () => {
    const { stack, credential } = providerStack();
    expect(
      () =>
        new ApiAccessAuthorizer(stack, 'Access', {
          ...authorizerProps(credential),
          reportWindow: Duration.millis(1500),
        }),
    ).toThrow(/reportWindow must be a whole number of seconds/);
  });
});

describe('existing VPC, topic and Redis', () => {
  const { stack, api, credential } = providerStack();
  const vpc = new Vpc(stack, 'SharedVpc', { maxAzs: 2, natGateways: 1 });
  const redisSecurityGroup = new SecurityGroup(stack, 'SharedRedisSecurityGroup', { vpc });
  const redisAuth = new Secret(stack, 'SharedRedisAuth');
  new ApiAccessAuthorizer(stack, 'Access', {
    ...authorizerProps(credential),
    vpc,
    topic: new Topic(stack, 'SharedTopic'),
    alertsTopic: new Topic(stack, 'SharedAlertsTopic'),
    redis: {
      host: 'redis.internal.example',
      port: 6380,
      authSecret: redisAuth,
      securityGroup: redisSecurityGroup,
    },
  }).protect(api);
  const template = Template.fromStack(stack);

  it('creates no VPC, topic or Redis of its own', () => {
    template.resourceCountIs('AWS::EC2::VPC', 1);
    template.resourceCountIs('AWS::SNS::Topic', 2); // the two given
    template.resourceCountIs('AWS::ElastiCache::ReplicationGroup', 0);
  });

  it("admits the Lambdas to the existing Redis's security group on its port", () => {
    template.hasResourceProperties('AWS::EC2::SecurityGroupIngress', {
      GroupId: {
        'Fn::GetAtt': [logicalId(template, 'AWS::EC2::SecurityGroup', 'SharedRedisSecurityGroup'), 'GroupId'],
      },
      FromPort: 6380,
      SourceSecurityGroupId: {
        'Fn::GetAtt': [
          logicalId(template, 'AWS::EC2::SecurityGroup', 'AccessFunctionSecurityGroup'),
          'GroupId',
        ],
      },
    });
  });

  it('points the functions at the existing Redis and its AUTH secret', () => {
    template.hasResourceProperties('AWS::Lambda::Function', {
      Environment: {
        Variables: Match.objectLike({
          REDIS_HOST: 'redis.internal.example',
          REDIS_PORT: '6380',
          REDIS_TLS: 'true',
          REDIS_AUTH_SECRET_ARN: {
            Ref: logicalId(template, 'AWS::SecretsManager::Secret', 'SharedRedisAuth'),
          },
        }),
      },
    });
  });

  it('refuses an existing Redis without the VPC it lives in', () => {
    const other = providerStack();
    expect(
      () =>
        new ApiAccessAuthorizer(other.stack, 'Access', {
          ...authorizerProps(other.credential),
          redis: { host: 'redis.internal.example', securityGroup: redisSecurityGroup },
        }),
    ).toThrow(/redis needs the vpc it is reachable in/);
  });
});
