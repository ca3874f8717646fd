/**
 * protect() fails closed: every method of a protected REST API, wherever it was created, is behind the
 * authorizer or left open by name; anything else fails synthesis naming the method.
 */
import { readdirSync, readFileSync } from 'node:fs';
import * as path from 'node:path';
import { NestedStack, Stack } from 'aws-cdk-lib';
import { Annotations, Match, Template } from 'aws-cdk-lib/assertions';
import {
  ApiDefinition,
  AuthorizationType,
  CfnMethod,
  Cors,
  Deployment,
  IdentitySource,
  Method,
  MockIntegration,
  RequestAuthorizer,
  RestApi,
  SpecRestApi,
  Stage,
} from 'aws-cdk-lib/aws-apigateway';
import { Code, Function as LambdaFunction, Runtime } from 'aws-cdk-lib/aws-lambda';
import { Secret } from 'aws-cdk-lib/aws-secretsmanager';
import { Topic } from 'aws-cdk-lib/aws-sns';
import { describe, expect, it } from 'vitest';
import { ApiAccessAuthorizer } from '../../lib/api-access-authorizer';
import type { ProtectOptions } from '../../lib/parts/protection';
import { logicalId, resourcesOfType, testApp } from './fixtures';

function accessIn(stack: Stack): ApiAccessAuthorizer {
  return new ApiAccessAuthorizer(stack, 'Access', {
    serviceId: '2555417735060',
    platformCredential: new Secret(stack, 'ProviderKey'),
    // The docs methods are open by design (test/infra/parts/docs.test.ts); here every open method is a choice.
    docs: false,
  });
}

/** A stack with a RestApi (GET /orders, CORS preflights) and the construct. */
function providerStack(apiProps: ConstructorParameters<typeof RestApi>[2] = {}) {
  const app = testApp();
  const stack = new Stack(app, 'ProviderStack');
  const api = new RestApi(stack, 'OrdersApi', apiProps);
  api.root.addResource('orders').addMethod('GET', new MockIntegration());
  return { app, stack, api, access: accessIn(stack) };
}

type MethodProperties = {
  HttpMethod: string;
  AuthorizationType?: string;
  AuthorizerId?: unknown;
  ApiKeyRequired?: boolean;
};

function methodsOf(template: Template): MethodProperties[] {
  return Object.values(resourcesOfType(template, 'AWS::ApiGateway::Method')).map(
    (method) => method.Properties as MethodProperties,
  );
}

/** A CfnMethod on the API's root, made without the Method construct. */
function bareMethod(stack: Stack, api: RestApi, id: string, httpMethod: string, authorizationType: string) {
  return new CfnMethod(stack, id, {
    restApiId: api.restApiId,
    resourceId: api.root.resourceId,
    httpMethod,
    authorizationType,
    integration: { type: 'MOCK' },
  });
}

function errorsOf(stack: Stack): string[] {
  return Annotations.fromStack(stack)
    .findError('*', Match.anyValue())
    .map((error) => String(error.entry.data));
}

describe('methods the RestApi does not hold', () => {
  const { stack, api, access } = providerStack();
  access.protect(api);
  new Method(stack, 'OutsideMethod', { resource: api.root.addResource('outside'), httpMethod: 'GET' });
  bareMethod(stack, api, 'BareMethod', 'PATCH', 'NONE');
  const template = Template.fromStack(stack);
  const authorizerId = {
    Ref: logicalId(template, 'AWS::ApiGateway::Authorizer', 'OrdersApiAccessProtection'),
  };

  it('protects a Method created outside the RestApi construct', () => {
    template.hasResourceProperties('AWS::ApiGateway::Method', {
      HttpMethod: 'GET',
      ResourceId: { Ref: logicalId(template, 'AWS::ApiGateway::Resource', 'OrdersApioutside') },
      AuthorizationType: 'CUSTOM',
      AuthorizerId: authorizerId,
    });
  });

  it('protects a bare CfnMethod of the API', () => {
    template.hasResourceProperties('AWS::ApiGateway::Method', {
      HttpMethod: 'PATCH',
      AuthorizationType: 'CUSTOM',
      AuthorizerId: authorizerId,
    });
  });
});

describe('methods that use another authorization', () => {
  const { stack, api, access } = providerStack();
  access.protect(api);
  api.root.addMethod('POST', new MockIntegration(), { authorizationType: AuthorizationType.IAM });
  const ownAuthorizer = new RequestAuthorizer(stack, 'OwnAuthorizer', {
    handler: new LambdaFunction(stack, 'OwnAuthorizerFunction', {
      runtime: Runtime.NODEJS_22_X,
      handler: 'index.handler',
      code: Code.fromInline('exports.handler = async () => ({})'),
    }),
    identitySources: [IdentitySource.header('x-token')],
  });
  api.root.resourceForPath('/orders').addMethod('PUT', new MockIntegration(), { authorizer: ownAuthorizer });
  bareMethod(stack, api, 'BareIamMethod', 'DELETE', 'AWS_IAM');
  const errors = errorsOf(stack);

  it('fail synthesis, naming each method', () => {
    expect(errors).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^POST \/ already uses AWS_IAM authorization;/),
        expect.stringMatching(/^PUT \/orders already uses CUSTOM authorization with another authorizer;/),
        expect.stringMatching(
          /^DELETE \(ProviderStack\/BareIamMethod\/?\) already uses AWS_IAM authorization;/,
        ),
      ]),
    );
    expect(errors).toHaveLength(3);
  });
});

describe('unprotectedMethods', () => {
  function protectedWith(options: ProtectOptions) {
    const { stack, api, access } = providerStack({
      defaultCorsPreflightOptions: { allowOrigins: Cors.ALL_ORIGINS },
    });
    api.root.addResource('health').addMethod('GET', new MockIntegration());
    access.protect(api, options);
    return { stack, methods: methodsOf(Template.fromStack(stack)) };
  }
  const typeOf = (methods: MethodProperties[], httpMethod: string) => [
    ...new Set(methods.filter((m) => m.HttpMethod === httpMethod).map((m) => m.AuthorizationType)),
  ];

  it('leave CORS preflights open by default', () => {
    const { methods } = protectedWith({});
    expect(typeOf(methods, 'OPTIONS')).toEqual(['NONE']);
    expect(typeOf(methods, 'GET')).toEqual(['CUSTOM']);
  });

  it('leave exactly the listed method open', () => {
    const { methods } = protectedWith({ unprotectedMethods: ['OPTIONS', 'GET /health'] });
    const gets = methods.filter((m) => m.HttpMethod === 'GET').map((m) => m.AuthorizationType);
    expect(gets.sort()).toEqual(['CUSTOM', 'NONE']);
  });

  it('protect preflights too when the list leaves OPTIONS out', () => {
    const { methods } = protectedWith({ unprotectedMethods: [] });
    expect(typeOf(methods, 'OPTIONS')).toEqual(['CUSTOM']);
  });

  it('refuse an entry that is not a method and a path, naming it', () => {
    expect(() => protectedWith({ unprotectedMethods: ['OPTIONS', 'health'] })).toThrow(
      /unprotectedMethods\[1\] must be an HTTP method or ANY/,
    );
  });

  it('fail synthesis on an entry that names no method', () => {
    expect(() => protectedWith({ unprotectedMethods: ['OPTIONS', 'GET /helth'] })).toThrow(
      /unprotectedMethods entry "GET \/helth" names no method of ProviderStack\/OrdersApi/,
    );
  });
});

describe('a method that keeps apiKeyRequired (API Gateway usage-plan keys)', () => {
  function withApiKeyRequired(options: ProtectOptions = {}) {
    const { stack, api, access } = providerStack();
    api.root.addResource('legacy').addMethod('GET', new MockIntegration(), { apiKeyRequired: true });
    access.protect(api, options);
    const template = Template.fromStack(stack);
    const warnings = Annotations.fromStack(stack)
      .findWarning('*', Match.stringLikeRegexp('apiKeyRequired'))
      .map((warning) => String(warning.entry.data));
    const legacy = methodsOf(template).filter((method) => 'ApiKeyRequired' in method);
    const deployments = Object.keys(resourcesOfType(template, 'AWS::ApiGateway::Deployment'));
    return { warnings, legacy, deployments };
  }

  it('is a synthesis warning naming it, and keeps the flag', () => {
    const { warnings, legacy } = withApiKeyRequired();
    expect(warnings).toEqual([
      expect.stringMatching(
        /^GET \/legacy keeps apiKeyRequired: API Gateway still demands one of its own usage-plan API keys/,
      ),
    ]);
    expect(legacy).toEqual([expect.objectContaining({ ApiKeyRequired: true, AuthorizationType: 'CUSTOM' })]);
  });

  it("has the flag turned off with apiKeyRequired: 'turnOff', without a warning, in a new deployment", () => {
    const { warnings, legacy, deployments } = withApiKeyRequired({ apiKeyRequired: 'turnOff' });
    expect(warnings).toEqual([]);
    expect(legacy).toEqual([expect.objectContaining({ ApiKeyRequired: false, AuthorizationType: 'CUSTOM' })]);
    expect(deployments).not.toEqual(withApiKeyRequired().deployments);
  });

  it('refuses another choice, naming the option', () => {
    expect(() => withApiKeyRequired({ apiKeyRequired: 'off' as never })).toThrow(
      /apiKeyRequired must be 'warn' or 'turnOff' \(got "off"\)/,
    );
  });
});

describe('protecting an API a second time', () => {
  it('with the same options returns the same protection, key order and undefined values aside', () => {
    const { api, access } = providerStack();
    const first = access.protect(api, { unprotectedMethods: ['OPTIONS'], gatewayResponses: true });
    expect(
      access.protect(api, { gatewayResponses: true, unprotectedMethods: ['OPTIONS'], cors: undefined }),
    ).toBe(first);
  });

  it('with other options fails, naming both, so that no entry is silently kept or dropped', () => {
    const { api, access } = providerStack();
    api.root.addResource('health').addMethod('GET', new MockIntegration());
    access.protect(api, { unprotectedMethods: ['GET /health'] });
    expect(() => access.protect(api)).toThrow(
      'ProviderStack/OrdersApi is already protected with other options: protect() was called with {"unprotectedMethods":["GET /health"]} and then with {}.',
    );
  });
});

describe('a Deployment the provider owns (deploy: false)', () => {
  function deploymentId(options?: ProtectOptions): string {
    const { stack, api, access } = providerStack({ deploy: false });
    const deployment = new Deployment(stack, 'ProviderDeployment', { api });
    new Stage(stack, 'ProviderStage', { deployment, stageName: 'live' });
    if (options) access.protect(api, options);
    return logicalId(Template.fromStack(stack), 'AWS::ApiGateway::Deployment', 'ProviderDeployment');
  }

  it('gets a new logical id when the API is protected, so the stage serves the protected methods', () => {
    expect(deploymentId({})).not.toBe(deploymentId());
  });

  it('gets a new logical id when the methods left open change', () => {
    expect(deploymentId({ unprotectedMethods: ['OPTIONS', 'GET /orders'] })).not.toBe(deploymentId({}));
  });
});

describe('a RestApi in another stack', () => {
  const app = testApp();
  const apiStack = new Stack(app, 'ApiStack');
  const api = new RestApi(apiStack, 'OrdersApi');
  api.root.addResource('orders').addMethod('GET', new MockIntegration());
  const accessStack = new Stack(app, 'AccessStack');
  accessIn(accessStack).protect(api);
  const assembly = app.synth();
  const apiTemplate = Template.fromStack(apiStack);

  it('synthesizes without a cycle: only the API stack depends on the construct stack', () => {
    expect(apiStack.dependencies.map((stack) => stack.stackName)).toEqual(['AccessStack']);
    expect(accessStack.dependencies).toEqual([]);
    expect(assembly.getStackByName('ApiStack').template).toBeDefined();
  });

  it("puts the authorizer and its invoke permission in the API's stack", () => {
    const [authorizer] = Object.values(resourcesOfType(apiTemplate, 'AWS::ApiGateway::Authorizer'));
    expect(authorizer?.Properties).toMatchObject({ Type: 'REQUEST', AuthorizerResultTtlInSeconds: 0 });
    expect(JSON.stringify(authorizer?.Properties.AuthorizerUri)).toMatch(/Fn::ImportValue.*AccessStack/);
    apiTemplate.hasResourceProperties('AWS::Lambda::Permission', {
      Principal: 'apigateway.amazonaws.com',
      FunctionName: { 'Fn::ImportValue': Match.stringLikeRegexp('AccessStack') },
    });
    const method = methodsOf(apiTemplate).find((m) => m.HttpMethod === 'GET');
    expect(method?.AuthorizationType).toBe('CUSTOM');
  });
});

describe('an API whose methods are in nested stacks (RestApi.fromRestApiAttributes)', () => {
  function parentWithNestedMethods(protectImported: boolean) {
    const stack = new Stack(testApp(), 'ParentStack');
    const api = new RestApi(stack, 'OrdersApi', { deploy: false });
    api.root.addMethod('GET', new MockIntegration());
    const nested = new NestedStack(stack, 'PetsStack');
    const imported = RestApi.fromRestApiAttributes(nested, 'OrdersApi', {
      restApiId: api.restApiId,
      rootResourceId: api.restApiRootResourceId,
    });
    imported.root.addResource('pets').addMethod('GET', new MockIntegration());
    const access = accessIn(stack);
    const protection = access.protect(protectImported ? imported : api);
    return { stack, nested, protection, access, api };
  }

  it('protects the nested methods when the parent API is protected', () => {
    const { nested } = parentWithNestedMethods(false);
    const [method] = methodsOf(Template.fromStack(nested));
    expect(method).toMatchObject({ AuthorizationType: 'CUSTOM', AuthorizerId: { Ref: expect.any(String) } });
  });

  it('protects every method when it is given the imported API, with one authorizer for both', () => {
    const { stack, nested, access, api } = parentWithNestedMethods(true);
    expect(access.protect(api).node.path).toBe('ParentStack/PetsStack/OrdersApi/AccessProtection');
    const nestedTemplate = Template.fromStack(nested);
    nestedTemplate.resourceCountIs('AWS::ApiGateway::Authorizer', 1);
    expect(methodsOf(nestedTemplate)[0]?.AuthorizationType).toBe('CUSTOM');
    expect(methodsOf(Template.fromStack(stack))[0]?.AuthorizationType).toBe('CUSTOM');
  });
});

describe('an imported RestApi', () => {
  const stack = new Stack(testApp(), 'ProviderStack');
  const api = RestApi.fromRestApiAttributes(stack, 'ExistingApi', {
    restApiId: 'a1b2c3d4e5',
    rootResourceId: 'r00tr00t1d',
  });
  api.root.addResource('orders').addMethod('POST', new MockIntegration());
  const deployment = new Deployment(stack, 'ExistingApiDeployment', { api });
  new Stage(stack, 'ExistingApiStage', { deployment, stageName: 'live' });
  accessIn(stack).protect(api);
  const template = Template.fromStack(stack);

  it('gets an authorizer on that API and its methods behind it', () => {
    template.hasResourceProperties('AWS::ApiGateway::Authorizer', {
      RestApiId: 'a1b2c3d4e5',
      Type: 'REQUEST',
    });
    expect(methodsOf(template)).toEqual([expect.objectContaining({ AuthorizationType: 'CUSTOM' })]);
    template.resourcePropertiesCountIs('AWS::ApiGateway::GatewayResponse', { RestApiId: 'a1b2c3d4e5' }, 4);
  });
});

describe('an imported RestApi whose methods this app does not define', () => {
  function protectedAlone(options?: ProtectOptions) {
    const stack = new Stack(testApp(), 'ProviderStack');
    const api = RestApi.fromRestApiId(stack, 'ExistingApi', 'a1b2c3d4e5');
    accessIn(stack).protect(api, options);
    return () => Template.fromStack(stack);
  }

  it('fails synthesis saying what to do: its authorizer would guard nothing', () => {
    expect(protectedAlone()).toThrow(
      /ProviderStack\/ExistingApi is imported and this app defines none of its methods, so its authorizer would guard nothing.*Define the methods in this app.*methodsAttachedElsewhere/,
    );
  });

  it('synthesizes the authorizer when methodsAttachedElsewhere names the methods', () => {
    const template = protectedAlone({ methodsAttachedElsewhere: ['GET /orders', 'POST /orders'] })();
    template.hasResourceProperties('AWS::ApiGateway::Authorizer', {
      RestApiId: 'a1b2c3d4e5',
      Type: 'REQUEST',
    });
  });

  it('refuses a methodsAttachedElsewhere entry without a resource path, naming the option', () => {
    expect(() => protectedAlone({ methodsAttachedElsewhere: ['GET'] })).toThrow(
      /methodsAttachedElsewhere entries must each name a method and a resource path, such as GET \/orders \(got "GET"\)/,
    );
  });
});

describe('a SpecRestApi', () => {
  const document = {
    openapi: '3.0.1',
    info: { title: 'Pets', version: '1' },
    paths: {
      '/pets': {
        get: { 'x-amazon-apigateway-integration': { type: 'mock' } },
        options: { 'x-amazon-apigateway-integration': { type: 'mock' } },
      },
    },
  };
  const stack = new Stack(testApp(), 'ProviderStack');
  const api = new SpecRestApi(stack, 'PetsApi', { apiDefinition: ApiDefinition.fromInline(document) });
  api.root.addResource('extra').addMethod('DELETE', new MockIntegration());
  accessIn(stack).protect(api);
  const template = Template.fromStack(stack);
  const [restApi] = Object.values(resourcesOfType(template, 'AWS::ApiGateway::RestApi'));
  const body = restApi?.Properties.Body as {
    components: { securitySchemes: Record<string, Record<string, unknown>> };
    paths: Record<string, Record<string, { security?: unknown }>>;
  };

  it('gets the authorizer as a security scheme in its OpenAPI definition', () => {
    expect(body.components.securitySchemes.ApiAccessAuthorizer).toMatchObject({
      type: 'apiKey',
      in: 'header',
      name: 'apikey',
      'x-amazon-apigateway-authtype': 'custom',
      'x-amazon-apigateway-authorizer': {
        type: 'request',
        identitySource: 'method.request.header.apikey',
        authorizerResultTtlInSeconds: 0,
      },
    });
    expect(JSON.stringify(body.components.securitySchemes)).toMatch(/AccessAuthorizerFunction/);
  });

  it('requires the scheme on every operation but the preflight', () => {
    expect(body.paths['/pets']?.get?.security).toEqual([{ ApiAccessAuthorizer: [] }]);
    expect(body.paths['/pets']?.options?.security).toBeUndefined();
  });

  it('protects methods CDK adds to it with an authorizer of its own', () => {
    template.hasResourceProperties('AWS::ApiGateway::Method', {
      HttpMethod: 'DELETE',
      AuthorizationType: 'CUSTOM',
      AuthorizerId: { Ref: logicalId(template, 'AWS::ApiGateway::Authorizer', 'PetsApiAccessProtection') },
    });
  });

  it('gets its gateway responses in the definition, not as resources an import would replace', () => {
    const responses = (body as unknown as Record<string, Record<string, unknown>>)[
      'x-amazon-apigateway-gateway-responses'
    ];
    expect(Object.keys(responses ?? {}).sort()).toEqual([
      'ACCESS_DENIED',
      'AUTHORIZER_CONFIGURATION_ERROR',
      'AUTHORIZER_FAILURE',
      'UNAUTHORIZED',
    ]);
    expect(responses?.ACCESS_DENIED).toEqual({
      statusCode: 403,
      responseTemplates: {
        'application/json':
          '{"message":"Access denied","reason":"$context.authorizer.reason","metric":"$context.authorizer.limitMetric","period":"$context.authorizer.limitPeriod","max":"$context.authorizer.limit","reset":"$context.authorizer.reset"}',
      },
      responseParameters: { 'gatewayresponse.header.Retry-After': 'context.authorizer.retryAfter' },
    });
    template.resourceCountIs('AWS::ApiGateway::GatewayResponse', 0);
  });

  it('lets API Gateway invoke the authorizer', () => {
    template.hasResourceProperties('AWS::Lambda::Permission', { Principal: 'apigateway.amazonaws.com' });
  });

  it('refuses an operation that requires other security, naming it', () => {
    const other = new Stack(testApp(), 'Other');
    const conflicting = new SpecRestApi(other, 'PetsApi', {
      apiDefinition: ApiDefinition.fromInline({
        ...document,
        paths: { '/pets': { get: { security: [{ cognito: [] }] } } },
      }),
    });
    expect(() => accessIn(other).protect(conflicting)).toThrow(/GET \/pets already requires security/);
  });

  it('refuses a definition it cannot change (an asset)', () => {
    const other = new Stack(testApp(), 'Other');
    const fromAsset = new SpecRestApi(other, 'PetsApi', {
      apiDefinition: ApiDefinition.fromAsset(path.join(__dirname, 'fixtures.ts')),
    });
    expect(() => accessIn(other).protect(fromAsset)).toThrow(
      /needs an inline one \(ApiDefinition.fromInline\)/,
    );
  });
});

describe('anything else', () => {
  it('refuses a construct that is no API at synthesis with a message that says so', () => {
    const stack = new Stack(testApp(), 'ProviderStack');
    const topic = new Topic(stack, 'Topic');
    expect(() => accessIn(stack).protect(topic as unknown as RestApi)).toThrow(
      /protects API Gateway REST APIs .* and HTTP APIs .*; ProviderStack\/Topic \(aws-cdk-lib.aws_sns.Topic\) is neither\./,
    );
  });
});

describe('gateway responses', () => {
  function responseParameters(apiProps: ConstructorParameters<typeof RestApi>[2]) {
    const { stack, api, access } = providerStack(apiProps);
    access.protect(api);
    return Object.values(resourcesOfType(Template.fromStack(stack), 'AWS::ApiGateway::GatewayResponse')).map(
      (response) => response.Properties.ResponseParameters,
    );
  }

  it("carry the API's CORS origin when CORS is configured, so a browser can read a refusal", () => {
    const parameters = responseParameters({
      defaultCorsPreflightOptions: { allowOrigins: ['https://app.example'], allowCredentials: true },
    });
    expect(parameters).toHaveLength(4);
    for (const headers of parameters) {
      const { 'gatewayresponse.header.Retry-After': _retryAfter, ...cors } = (headers ?? {}) as Record<
        string,
        unknown
      >;
      expect(cors).toEqual({
        'gatewayresponse.header.Access-Control-Allow-Origin': "'https://app.example'",
        'gatewayresponse.header.Vary': "'Origin'",
        'gatewayresponse.header.Access-Control-Allow-Credentials': "'true'",
      });
    }
  });

  it('carry no CORS header when the API has no CORS; the 403 maps Retry-After from the context', () => {
    const parameters = responseParameters({});
    expect(parameters.filter((headers) => headers === undefined)).toHaveLength(3);
    expect(parameters.filter((headers) => headers !== undefined)).toEqual([
      { 'gatewayresponse.header.Retry-After': 'context.authorizer.retryAfter' },
    ]);
  });
});

describe('a route a part serves with its own authentication', () => {
  it('stays open when the part exempts it, and the template says why', () => {
    const { stack, api, access } = providerStack();
    const jwks = api.root.addResource('jwks').addMethod('GET', new MockIntegration());
    access.protect(api).exemptMethod(jwks, 'public keys are public');
    const template = Template.fromStack(stack);
    const [id] = Object.keys(
      template.findResources('AWS::ApiGateway::Method', {
        Metadata: { ApiAccessAuthorizerExempt: 'public keys are public' },
      }),
    );
    expect(id).toBeDefined();
    expect(
      resourcesOfType(template, 'AWS::ApiGateway::Method')[id as string]?.Properties.AuthorizationType,
    ).toBe('NONE');
  });
});

describe('the constructs', () => {
  it('use no internal aws-cdk-lib member (names starting with an underscore)', () => {
    const root = path.join(__dirname, '..', '..', 'lib');
    const sources = readdirSync(root, { recursive: true, encoding: 'utf8' }).filter((file) =>
      file.endsWith('.ts'),
    );
    const uses = sources.flatMap((file) =>
      [...readFileSync(path.join(root, file), 'utf8').matchAll(/\.(_[A-Za-z]\w*)\(/g)].map(
        (m) => `${file}: ${m[1]}`,
      ),
    );
    expect(uses).toEqual([]);
  });
});
