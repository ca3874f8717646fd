/** The demo stack on an HTTP API (`-c apiType=http`): routes, protection, access logs, throttling, outputs. */
import { Template } from 'aws-cdk-lib/assertions';
import { describe, expect, it } from 'vitest';
import { AccessManagementStack } from '../../lib/access-stack';
import { logicalId, resourcesOfType, stackFromContext, testApp, variablesOf } from './fixtures';

type RouteProperties = { RouteKey: string; AuthorizationType: string; AuthorizerId?: unknown };

function routesOf(template: Template): Record<string, RouteProperties> {
  return Object.fromEntries(
    Object.values(resourcesOfType(template, 'AWS::ApiGatewayV2::Route')).map((route) => {
      const properties = route.Properties as RouteProperties;
      return [properties.RouteKey, properties];
    }),
  );
}

describe('the demo on an HTTP API', () => {
  const template = Template.fromStack(
    stackFromContext({ serviceId: '2555417735060', apiType: 'http', throttlingRateLimit: '50' }),
  );
  const routes = routesOf(template);
  const authorizerId = {
    Ref: logicalId(template, 'AWS::ApiGatewayV2::Authorizer', 'HttpApiAccessProtectionAuthorizer'),
  };

  it('is an HttpApi instead of a RestApi', () => {
    expect(resourcesOfType(template, 'AWS::ApiGateway::RestApi')).toEqual({});
    template.resourceCountIs('AWS::ApiGatewayV2::Api', 1);
    template.hasResourceProperties('AWS::ApiGatewayV2::Api', { ProtocolType: 'HTTP' });
  });

  it('routes the echo backend through the authorizer, and leaves the documentation open', () => {
    expect(routes).toEqual({
      'ANY /': expect.objectContaining({ AuthorizationType: 'CUSTOM', AuthorizerId: authorizerId }),
      'GET /v1/words/{word}': expect.objectContaining({
        AuthorizationType: 'CUSTOM',
        AuthorizerId: authorizerId,
      }),
      'ANY /{proxy+}': expect.objectContaining({ AuthorizationType: 'CUSTOM', AuthorizerId: authorizerId }),
      'GET /docs': expect.objectContaining({ AuthorizationType: 'NONE' }),
      'GET /docs/{file}': expect.objectContaining({ AuthorizationType: 'NONE' }),
    });
  });

  it("sends the echo backend and the docs REST's proxy event (payload 1.0)", () => {
    const integrations = Object.values(resourcesOfType(template, 'AWS::ApiGatewayV2::Integration'));
    expect(integrations.length).toBeGreaterThan(0);
    for (const integration of integrations) {
      expect(integration.Properties).toMatchObject({
        IntegrationType: 'AWS_PROXY',
        PayloadFormatVersion: '1.0',
      });
    }
  });

  it("writes JSON access logs with the authorizer's reason, metric and reset, and no request data", () => {
    const stage = Object.values(resourcesOfType(template, 'AWS::ApiGatewayV2::Stage'))[0]?.Properties ?? {};
    expect(stage).toMatchObject({ StageName: '$default', AutoDeploy: true });
    const settings = stage.AccessLogSettings as { DestinationArn: unknown; Format: string };
    expect(settings.DestinationArn).toEqual({
      'Fn::GetAtt': [logicalId(template, 'AWS::Logs::LogGroup', 'ApiAccessLogs'), 'Arn'],
    });
    const format = JSON.parse(settings.Format) as Record<string, string>;
    expect(format).toMatchObject({
      denialReason: '$context.authorizer.reason',
      limitMetric: '$context.authorizer.limitMetric',
      limitReset: '$context.authorizer.reset',
      retryAfter: '$context.authorizer.retryAfter',
      authorizerError: '$context.authorizer.error',
    });
    expect(settings.Format).not.toMatch(
      /request\.header|querystring|\$context\.authorizer\.(credential|key)/i,
    );
  });

  it("throttles the stage's routes", () => {
    const stage = Object.values(resourcesOfType(template, 'AWS::ApiGatewayV2::Stage'))[0]?.Properties ?? {};
    expect(stage.DefaultRouteSettings).toEqual({ ThrottlingRateLimit: 50, ThrottlingBurstLimit: 200 });
  });

  it('outputs the endpoint, with no stage in the path', () => {
    const outputs = template.toJSON().Outputs as Record<string, { Value: unknown }>;
    const apiId = logicalId(template, 'AWS::ApiGatewayV2::Api', 'HttpApi');
    expect(outputs.ApiUrl?.Value).toEqual({
      'Fn::Join': ['', [{ 'Fn::GetAtt': [apiId, 'ApiEndpoint'] }, '/']],
    });
    expect(outputs.DocsUrl?.Value).toEqual({
      'Fn::Join': ['', [{ 'Fn::GetAtt': [apiId, 'ApiEndpoint'] }, '/docs']],
    });
  });
});

describe('the parts on the demo HTTP API', () => {
  const template = Template.fromStack(
    stackFromContext({
      serviceId: '2555417735062',
      apiType: 'http',
      credentialMode: 'oauth',
      webhooks: 'true',
      soapBackendUrl: 'https://soap.example.com/quotes',
    }),
  );
  const routes = routesOf(template);

  it.each([
    'POST /oauth/token',
    'GET /.well-known/jwks.json',
    'GET /.well-known/openid-configuration',
    'POST /webhooks/platform',
    'POST /soap',
  ])('serve %s open: the function authenticates the caller itself', (key) => {
    expect(routes[key]?.AuthorizationType).toBe('NONE');
  });

  it("makes the built-in issuer the HTTP API's endpoint", () => {
    const apiId = logicalId(template, 'AWS::ApiGatewayV2::Api', 'HttpApi');
    const functions = resourcesOfType(template, 'AWS::Lambda::Function');
    const token = functions[logicalId(template, 'AWS::Lambda::Function', 'AccessTokenFunction')];
    expect(Object.values(variablesOf(token))).toContainEqual({ 'Fn::GetAtt': [apiId, 'ApiEndpoint'] });
  });
});

describe('apiType', () => {
  it('refuses a type it does not know', () => {
    expect(() => stackFromContext({ serviceId: '1', apiType: 'websocket' })).toThrow(/apiType/);
  });

  it('refuses a stage name for the HTTP API, which is served on its $default stage', () => {
    const props = { serviceId: '1', apiType: 'http', stageName: 'prod' } as const;
    expect(() => new AccessManagementStack(testApp(), 'Demo', props)).toThrow(
      /stageName names the REST API's stage; the HTTP API demo is served on its \$default stage/,
    );
  });
});
