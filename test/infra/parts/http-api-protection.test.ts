/**
 * protect(httpApi): one Lambda REQUEST authorizer per HTTP API (payload 2.0, simple responses, no identity
 * source, no cache), on every route wherever it was created; anything else fails synthesis naming the route.
 */
import { Stack } from 'aws-cdk-lib';
import { Annotations, Match, Template } from 'aws-cdk-lib/assertions';
import {
  CfnIntegration,
  CfnRoute,
  HttpApi,
  HttpMethod,
  HttpRoute,
  HttpRouteKey,
  WebSocketApi,
} from 'aws-cdk-lib/aws-apigatewayv2';
import { HttpIamAuthorizer, HttpJwtAuthorizer } from 'aws-cdk-lib/aws-apigatewayv2-authorizers';
import { HttpUrlIntegration } from 'aws-cdk-lib/aws-apigatewayv2-integrations';
import { Secret } from 'aws-cdk-lib/aws-secretsmanager';
import { describe, expect, it } from 'vitest';
import { ApiAccessAuthorizer } from '../../../lib/api-access-authorizer';
import type { HttpProtectOptions } from '../../../lib/parts/http-api-protection';
import { logicalId, resourcesOfType, testApp } from '../fixtures';

const BACKEND = 'https://orders.example.com';

function accessIn(stack: Stack, props: { docs?: boolean } = {}): ApiAccessAuthorizer {
  return new ApiAccessAuthorizer(stack, 'Access', {
    serviceId: '2555417735060',
    platformCredential: new Secret(stack, 'ProviderKey'),
    // The docs routes are open by design (test/infra/parts/docs.test.ts); here every open route is a choice.
    docs: props.docs ?? false,
  });
}

/** A stack with an HttpApi (GET /orders, ANY /health) and the construct. */
function providerStack() {
  const stack = new Stack(testApp(), 'ProviderStack');
  const api = new HttpApi(stack, 'OrdersApi');
  const integration = new HttpUrlIntegration('Orders', BACKEND);
  api.addRoutes({ path: '/orders', methods: [HttpMethod.GET], integration });
  api.addRoutes({ path: '/health', methods: [HttpMethod.GET], integration });
  return { stack, api, integration, access: accessIn(stack) };
}

type RouteProperties = { RouteKey: string; AuthorizationType?: string; AuthorizerId?: unknown };

function routesOf(stack: Stack): Record<string, RouteProperties> {
  return Object.fromEntries(
    Object.values(resourcesOfType(Template.fromStack(stack), 'AWS::ApiGatewayV2::Route')).map((route) => {
      const properties = route.Properties as RouteProperties;
      return [properties.RouteKey, properties];
    }),
  );
}

function errorsOf(stack: Stack): string[] {
  return Annotations.fromStack(stack)
    .findError('*', Match.anyValue())
    .map((error) => String(error.entry.data));
}

function authorizerRef(stack: Stack) {
  return {
    Ref: logicalId(Template.fromStack(stack), 'AWS::ApiGatewayV2::Authorizer', 'OrdersApiAccessProtection'),
  };
}

describe('the authorizer', () => {
  const { stack, api, access } = providerStack();
  const protection = access.protect(api);
  const template = Template.fromStack(stack);

  it('is a Lambda REQUEST authorizer with payload 2.0, simple responses, no cache and no identity source', () => {
    const authorizers = Object.values(resourcesOfType(template, 'AWS::ApiGatewayV2::Authorizer'));
    expect(authorizers).toHaveLength(1);
    const properties = authorizers[0]?.Properties ?? {};
    expect(properties).toMatchObject({
      ApiId: { Ref: logicalId(template, 'AWS::ApiGatewayV2::Api', 'OrdersApi') },
      AuthorizerType: 'REQUEST',
      Name: 'ApiAccessAuthorizer',
      AuthorizerPayloadFormatVersion: '2.0',
      EnableSimpleResponses: true,
      AuthorizerResultTtlInSeconds: 0,
    });
    expect(properties).not.toHaveProperty('IdentitySource');
    expect(JSON.stringify(properties.AuthorizerUri)).toContain('AccessAuthorizerFunction');
  });

  it('may invoke the authorizer function, from this API only', () => {
    template.hasResourceProperties('AWS::Lambda::Permission', {
      Principal: 'apigateway.amazonaws.com',
      SourceArn: {
        'Fn::Join': [
          '',
          Match.arrayWith([
            Match.stringLikeRegexp(':execute-api:'),
            { Ref: logicalId(template, 'AWS::ApiGatewayV2::Api', 'OrdersApi') },
            '/authorizers/*',
          ]),
        ],
      },
    });
  });

  it('is one per API: protecting the API again returns the same protection', () => {
    expect(access.protect(api)).toBe(protection);
    expect(
      Object.keys(resourcesOfType(Template.fromStack(stack), 'AWS::ApiGatewayV2::Authorizer')),
    ).toHaveLength(1);
  });

  it('refuses the options of a REST API, which an HTTP API has no gateway responses for', () => {
    const other = providerStack();
    expect(() =>
      other.access.protect(other.api, { gatewayResponses: false } as unknown as HttpProtectOptions),
    ).toThrow(/is an HTTP API, which has no gateway responses: gatewayResponses apply to REST APIs only/);
  });
});

describe('every route', () => {
  const { stack, api, integration, access } = providerStack();
  access.protect(api);
  // Created after protect(): a route of the API, an HttpRoute outside it, a bare CfnRoute, $default.
  api.addRoutes({ path: '/late', methods: [HttpMethod.POST], integration });
  new HttpRoute(stack, 'OutsideRoute', {
    httpApi: api,
    routeKey: HttpRouteKey.with('/outside', HttpMethod.DELETE),
    integration,
  });
  new CfnRoute(stack, 'BareRoute', { apiId: api.apiId, routeKey: 'PATCH /bare', authorizationType: 'NONE' });
  new CfnRoute(stack, 'DefaultRoute', { apiId: api.apiId, routeKey: '$default' });
  const routes = routesOf(stack);

  it.each(['GET /orders', 'GET /health', 'POST /late', 'DELETE /outside', 'PATCH /bare', '$default'])(
    '%s gets the authorizer (CUSTOM)',
    (key) => {
      expect(routes[key]).toMatchObject({ AuthorizationType: 'CUSTOM', AuthorizerId: authorizerRef(stack) });
    },
  );

  it('leaves nothing else and reports no error', () => {
    expect(Object.keys(routes)).toHaveLength(6);
    expect(errorsOf(stack)).toEqual([]);
  });
});

describe('fail closed', () => {
  const { stack, api, integration, access } = providerStack();
  access.protect(api);
  api.addRoutes({
    path: '/iam',
    methods: [HttpMethod.GET],
    integration,
    authorizer: new HttpIamAuthorizer(),
  });
  api.addRoutes({
    path: '/jwt',
    methods: [HttpMethod.GET],
    integration,
    authorizer: new HttpJwtAuthorizer('Jwt', 'https://idp.example.com', { jwtAudience: ['orders'] }),
  });
  new CfnRoute(stack, 'BareIamRoute', {
    apiId: api.apiId,
    routeKey: 'PUT /bare',
    authorizationType: 'AWS_IAM',
  });
  const errors = errorsOf(stack);

  it('fails synthesis on a route that uses another authorization, naming each', () => {
    expect(errors).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^GET \/iam already uses AWS_IAM authorization;/),
        expect.stringMatching(/^GET \/jwt already uses JWT authorization with another authorizer;/),
        expect.stringMatching(/^PUT \/bare already uses AWS_IAM authorization;/),
      ]),
    );
    expect(errors).toHaveLength(3);
  });
});

describe('unprotectedMethods', () => {
  function protectedWith(options: HttpProtectOptions) {
    const { stack, api, integration, access } = providerStack();
    api.addRoutes({ path: '/orders', methods: [HttpMethod.OPTIONS], integration });
    access.protect(api, options);
    return { stack, routes: routesOf(stack) };
  }

  it('leaves OPTIONS routes open by default and nothing else', () => {
    const { routes } = protectedWith({});
    expect(routes['OPTIONS /orders']?.AuthorizationType).toBe('NONE');
    expect(routes['GET /orders']?.AuthorizationType).toBe('CUSTOM');
    expect(routes['GET /health']?.AuthorizationType).toBe('CUSTOM');
  });

  it('leaves a route named by method and path open, and protects the rest', () => {
    const { routes, stack } = protectedWith({ unprotectedMethods: ['GET /health'] });
    expect(routes['GET /health']?.AuthorizationType).toBe('NONE');
    expect(routes['GET /orders']?.AuthorizationType).toBe('CUSTOM');
    expect(routes['OPTIONS /orders']?.AuthorizationType).toBe('CUSTOM');
    expect(errorsOf(stack)).toEqual([]);
  });

  it('fails synthesis on an entry that names no route (a misspelt path)', () => {
    expect(() => protectedWith({ unprotectedMethods: ['GET /healht'] })).toThrow(
      'unprotectedMethods entry "GET /healht" names no route of ProviderStack/OrdersApi',
    );
  });

  it('refuses an entry that is not a method and a path', () => {
    expect(() => protectedWith({ unprotectedMethods: ['health'] })).toThrow(/unprotectedMethods\[0\]/);
  });
});

describe('a WebSocket API', () => {
  it('is refused: its authorizer runs on $connect, so it would meter connections, not messages', () => {
    const stack = new Stack(testApp(), 'ProviderStack');
    const api = new WebSocketApi(stack, 'ChatApi');
    expect(() => accessIn(stack).protect(api as unknown as HttpApi)).toThrow(
      /ProviderStack\/ChatApi is a WebSocket API: .* on \$connect only, so an authorizer there would meter connections, not messages/,
    );
  });
});

describe('limit feedback', () => {
  type Integration = { IntegrationUri?: unknown; ResponseParameters?: Record<string, unknown> };

  function integrationsOf(stack: Stack): Integration[] {
    return Object.values(resourcesOfType(Template.fromStack(stack), 'AWS::ApiGatewayV2::Integration')).map(
      (integration) => integration.Properties as Integration,
    );
  }

  const RATE_LIMIT_MAP = {
    ResponseParameters: [
      { Destination: 'overwrite:header.RateLimit-Policy', Source: '$context.authorizer.rateLimitPolicy' },
      { Destination: 'overwrite:header.RateLimit', Source: '$context.authorizer.rateLimit' },
    ],
  };

  it("maps RateLimit-Policy and RateLimit from the authorizer's context onto the 2xx answers of every backend", () => {
    const { stack, api, access } = providerStack();
    access.protect(api);
    const [orders] = integrationsOf(stack);
    expect(Object.keys(orders?.ResponseParameters ?? {})).toEqual([
      '200',
      '201',
      '202',
      '203',
      '204',
      '205',
      '206',
    ]);
    expect(orders?.ResponseParameters?.['200']).toEqual(RATE_LIMIT_MAP);
  });

  it("leaves the open routes' integrations (the documentation) and a mapping of the provider's own alone", () => {
    const stack = new Stack(testApp(), 'ProviderStack');
    const api = new HttpApi(stack, 'OrdersApi');
    api.addRoutes({
      path: '/orders',
      methods: [HttpMethod.GET],
      integration: new HttpUrlIntegration('Orders', BACKEND),
    });
    new CfnIntegration(stack, 'OwnIntegration', {
      apiId: api.apiId,
      integrationType: 'HTTP_PROXY',
      integrationUri: BACKEND,
      integrationMethod: 'GET',
      payloadFormatVersion: '1.0',
      responseParameters: {
        '200': { ResponseParameters: [{ Destination: 'remove:header.server', Source: "''" }] },
      },
    });
    accessIn(stack, { docs: true }).protect(api);
    const integrations = integrationsOf(stack);
    expect(integrations).toHaveLength(3);
    const mapped = integrations.filter(
      (integration) => integration.ResponseParameters?.['200'] !== undefined,
    );
    expect(mapped.map((integration) => integration.ResponseParameters?.['200'])).toEqual([
      RATE_LIMIT_MAP,
      { ResponseParameters: [{ Destination: 'remove:header.server', Source: "''" }] },
    ]);
  });

  it('sends nothing with rateLimitFields: false', () => {
    const { stack, api, access } = providerStack();
    access.protect(api, { rateLimitFields: false });
    expect(integrationsOf(stack).map((integration) => integration.ResponseParameters)).toEqual([undefined]);
  });
});

describe('an imported HTTP API', () => {
  function imported(options?: HttpProtectOptions, addRoute = false) {
    const stack = new Stack(testApp(), 'ProviderStack');
    const api = HttpApi.fromHttpApiAttributes(stack, 'Imp', { httpApiId: 'abc123' });
    if (addRoute) {
      new HttpRoute(stack, 'Orders', {
        httpApi: api,
        routeKey: HttpRouteKey.with('/orders', HttpMethod.GET),
        integration: new HttpUrlIntegration('Orders', BACKEND),
      });
    }
    const access = accessIn(stack);
    access.protect(api, options);
    return { stack, synth: () => Template.fromStack(stack) };
  }

  it('with no route in this app fails synthesis, as an imported RestApi does: its authorizer would guard nothing', () => {
    expect(imported().synth).toThrow(
      /ProviderStack\/Imp is imported and this app defines none of its routes, so its authorizer would guard nothing.*api\.addRoutes.*methodsAttachedElsewhere/,
    );
  });

  it('synthesizes the authorizer when methodsAttachedElsewhere names the routes', () => {
    imported({ methodsAttachedElsewhere: ['GET /orders'] })
      .synth()
      .hasResourceProperties('AWS::ApiGatewayV2::Authorizer', { ApiId: 'abc123', AuthorizerType: 'REQUEST' });
  });

  it('refuses a methodsAttachedElsewhere entry without a path, naming the option', () => {
    expect(() => imported({ methodsAttachedElsewhere: ['GET'] })).toThrow(
      /methodsAttachedElsewhere entries must each name a method and a resource path/,
    );
  });

  it('puts a route this app defines on it behind the authorizer', () => {
    const { stack, synth } = imported({}, true);
    synth();
    expect(routesOf(stack)['GET /orders']).toMatchObject({ AuthorizationType: 'CUSTOM' });
  });
});

describe('protecting an HTTP API a second time', () => {
  it('with the same options returns the same protection; with others fails, naming both', () => {
    const { api, access } = providerStack();
    const first = access.protect(api, { unprotectedMethods: ['GET /health'] });
    expect(access.protect(api, { unprotectedMethods: ['GET /health'] })).toBe(first);
    expect(() => access.protect(api, { rateLimitFields: false })).toThrow(
      /ProviderStack\/OrdersApi is already protected with other options: protect\(\) was called with \{"unprotectedMethods":\["GET \/health"\]\} and then with \{"rateLimitFields":false\}/,
    );
  });
});
