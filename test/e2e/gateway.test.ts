/**
 * The local gateway's API Gateway behaviour, with authorizers that answer what a test needs (a Deny, a
 * malformed policy, an error) in front of the real echo backend. The real authorizer runs in stack.test.ts.
 */

import { type IncomingHttpHeaders, type OutgoingHttpHeaders, request } from 'node:http';
import type {
  APIGatewayAuthorizerResult,
  APIGatewayProxyEvent,
  APIGatewayRequestAuthorizerEvent,
} from 'aws-lambda';
import { afterEach, describe, expect, it } from 'vitest';
import { accessGatewayResponses } from '../../contract/gateway-responses';
import { parseRoute, type Route } from '../../contract/routes';
import { credentialPromptOf } from '../../core/credentials';
import { parseConfig } from '../../core/settings/config';
import { corsPreflightOptions, gatewayResponseCorsHeaders } from '../../core/settings/cors';
import { type EchoBody, echo } from '../../lambdas/echo/handler';
import { corsPreflightMethods } from '../../local/cors-preflight';
import {
  type ApiMethod,
  type AuthorizerFunction,
  type BackendFunction,
  type LocalGateway,
  openMethods,
  protectedMethods,
  type RestGatewayApi,
  startGateway,
} from '../../local/gateway';
import { withHeaders, withOverrides } from '../../local/gateway-responses';

const routes = ['GET /v1/words/{word}', 'POST /v1/words/{word}', 'ANY /files/{path+}'].map((route, i) =>
  parseRoute(route, `routes[${i}]`),
);
const PORTAL = 'https://portal.example.com';
const DOCS_ORIGIN = 'http://127.0.0.1:8080';
const responses = withOverrides(accessGatewayResponses(credentialPromptOf(parseConfig({ serviceId: 's1' }))));

function policy(
  effect: 'Allow' | 'Deny',
  resource: string,
  context: Record<string, string | number | boolean>,
) {
  return {
    principalId: 'app-1',
    policyDocument: {
      Version: '2012-10-17',
      Statement: [{ Effect: effect, Action: 'execute-api:Invoke', Resource: resource }],
    },
    context,
  } satisfies APIGatewayAuthorizerResult;
}

const gateways: LocalGateway[] = [];

function rawGet(
  url: string,
  headers: OutgoingHttpHeaders,
): Promise<{ status: number | undefined; headers: IncomingHttpHeaders }> {
  return new Promise((resolve, reject) => {
    const outgoing = request(url, { headers, timeout: 5000 }, (response) => {
      response.resume();
      response.on('end', () => resolve({ status: response.statusCode, headers: response.headers }));
    });
    outgoing.on('timeout', () => outgoing.destroy(new Error('no answer within 5 s')));
    outgoing.on('error', reject);
    outgoing.end();
  });
}

async function gatewayWith(
  authorizer: AuthorizerFunction,
  {
    routes: apiRoutes = routes,
    backend = echo,
    extraMethods = [],
    ...overrides
  }: Partial<Omit<RestGatewayApi, 'methods'>> & {
    routes?: readonly Route[];
    backend?: BackendFunction;
    extraMethods?: readonly ApiMethod[];
  } = {},
): Promise<{
  url: string;
  events: APIGatewayRequestAuthorizerEvent[];
  backendEvents: APIGatewayProxyEvent[];
}> {
  const events: APIGatewayRequestAuthorizerEvent[] = [];
  const backendEvents: APIGatewayProxyEvent[] = [];
  const gateway = await startGateway({
    apis: [
      {
        basePath: '',
        apiId: 'local',
        stage: 'prod',
        methods: [
          ...protectedMethods(apiRoutes, (event) => {
            backendEvents.push(event);
            return backend(event);
          }),
          ...extraMethods,
        ],
        identitySources: [{ location: 'header', name: 'apikey' }],
        authorizer: (event) => {
          events.push(event);
          return authorizer(event);
        },
        responses,
        ...overrides,
      },
    ],
  });
  gateways.push(gateway);
  return { url: `${gateway.url}${overrides.basePath ?? ''}`, events, backendEvents };
}

const allowMethod: AuthorizerFunction = async (event) =>
  policy('Allow', event.methodArn, { applicationId: 'app-1', plan: 'Basic', remaining: 7, soft: false });

afterEach(async () => {
  await Promise.all(gateways.splice(0).map((gateway) => gateway.stop()));
});

describe('local API Gateway', () => {
  it('sends the authorizer the REQUEST event API Gateway builds', async () => {
    const { url, events } = await gatewayWith(allowMethod);
    // fetch folds repeated headers into one line; node:http sends each value on its own line.
    const response = await rawGet(`${url}/v1/words/hello.json?lang=en&tag=a&tag=b`, {
      apikey: 'k-1',
      'x-repeated': ['first', 'second'],
      'User-Agent': 'e2e-test',
    });
    expect(response.status).toBe(200);
    expect(events).toHaveLength(1);
    const event = events[0] as APIGatewayRequestAuthorizerEvent;
    expect(event).toMatchObject({
      type: 'REQUEST',
      methodArn: 'arn:aws:execute-api:us-east-1:123456789012:local/prod/GET/v1/words/hello.json',
      resource: '/v1/words/{word}',
      path: '/v1/words/hello.json',
      httpMethod: 'GET',
      queryStringParameters: { lang: 'en', tag: 'b' },
      multiValueQueryStringParameters: { lang: ['en'], tag: ['a', 'b'] },
      pathParameters: { word: 'hello.json' },
      stageVariables: null,
      requestContext: {
        accountId: '123456789012',
        apiId: 'local',
        stage: 'prod',
        httpMethod: 'GET',
        resourcePath: '/v1/words/{word}',
        path: '/prod/v1/words/hello.json',
        identity: { sourceIp: '127.0.0.1', userAgent: 'e2e-test' },
      },
    });
    expect(event.headers?.apikey).toBe('k-1');
    expect(event.headers?.['x-repeated']).toBe('second');
    expect(event.multiValueHeaders?.['x-repeated']).toEqual(['first', 'second']);
    expect(event.headers?.['X-Forwarded-For']).toBe('127.0.0.1');
    expect(event.requestContext.requestId).toMatch(/^[0-9a-f-]{36}$/);
    expect(response.headers['x-amzn-requestid']).toBe(event.requestContext.requestId);
  });

  it('hands the authorizer the path as the client sent it, still percent-encoded', async () => {
    const { url, events } = await gatewayWith(allowMethod);
    expect((await rawGet(`${url}/v1/words/%68ello.json`, { apikey: 'k-1' })).status).toBe(200);
    expect(
      events.map((event) => [(event as APIGatewayRequestAuthorizerEvent).path, event.pathParameters]),
    ).toEqual([['/v1/words/%68ello.json', { word: 'hello.json' }]]);
  });

  it('forwards an allowed call to the echo backend with the authorizer context', async () => {
    const { url, backendEvents } = await gatewayWith(allowMethod);
    const response = await fetch(`${url}/v1/words/hello.json`, { headers: { apikey: 'k-1' } });
    expect(response.status).toBe(200);
    const body = (await response.json()) as EchoBody;
    expect(body).toMatchObject({
      method: 'GET',
      path: '/v1/words/hello.json',
      resource: '/v1/words/{word}',
      pathParameters: { word: 'hello.json' },
      authorizer: {
        applicationId: 'app-1',
        plan: 'Basic',
        remaining: '7',
        soft: 'false',
        principalId: 'app-1',
      },
    });
    expect(body.headers.apikey).toBeUndefined();
    expect(backendEvents[0]?.requestContext.authorizer).toMatchObject({
      principalId: 'app-1',
      remaining: '7',
    });
  });

  it('answers 401 without invoking the authorizer when the identity source header is missing or empty', async () => {
    const { url, events } = await gatewayWith(allowMethod);
    for (const headers of [{}, { apikey: '' }] as Record<string, string>[]) {
      const response = await fetch(`${url}/v1/words/hello.json`, { headers });
      expect(response.status).toBe(401);
      expect(response.headers.get('x-amzn-errortype')).toBe('UnauthorizedException');
      expect(await response.json()).toEqual({
        message: 'Missing or invalid credential: send your key in the apikey header',
        reason: 'invalid_credential',
      });
    }
    expect(events).toEqual([]);
  });

  it('serves an OPTIONS method (CORS preflight) without the authorizer, as protect() leaves it open', async () => {
    const { url, events, backendEvents } = await gatewayWith(allowMethod, {
      routes: [...routes, parseRoute('OPTIONS /v1/words/{word}', 'routes[3]')],
    });
    const response = await fetch(`${url}/v1/words/hello.json`, { method: 'OPTIONS' });
    expect(response.status).toBe(200);
    expect(events).toEqual([]);
    expect(backendEvents.map((event) => event.httpMethod)).toEqual(['OPTIONS']);
  });

  it("answers 401 when the authorizer throws 'Unauthorized'", async () => {
    const { url, backendEvents } = await gatewayWith(async () => {
      throw new Error('Unauthorized');
    });
    const response = await fetch(`${url}/v1/words/hello.json`, { headers: { apikey: 'bad' } });
    expect(response.status).toBe(401);
    expect(await response.json()).toMatchObject({ reason: 'invalid_credential' });
    expect(backendEvents).toEqual([]);
  });

  it('answers 403 with the reason from the context on a Deny', async () => {
    const { url, backendEvents } = await gatewayWith(async (event) =>
      policy('Deny', event.methodArn, {
        reason: 'limits_exceeded',
        limit: 100,
        remaining: 0,
        reset: 42,
        limitMetric: 'hits',
        limitPeriod: 'hour',
      }),
    );
    const response = await fetch(`${url}/v1/words/hello.json`, { headers: { apikey: 'k-1' } });
    // API Gateway's status is per response type (ACCESS_DENIED), and its header mappings take request
    // parameters or static values only: no 429, no Retry-After; the body names the limit.
    expect(response.status).toBe(403);
    expect(response.headers.get('x-amzn-errortype')).toBe('AccessDeniedException');
    expect(response.headers.get('retry-after')).toBeNull();
    expect(await response.json()).toEqual({
      message: 'Access denied',
      reason: 'limits_exceeded',
      metric: 'hits',
      period: 'hour',
      max: '100',
      reset: '42',
    });
    expect(backendEvents).toEqual([]);
  });

  it('answers 403 when the Allow does not cover the methodArn', async () => {
    const { url, backendEvents } = await gatewayWith(async (event) =>
      policy('Allow', event.methodArn.replace('/GET/', '/POST/'), {}),
    );
    const response = await fetch(`${url}/v1/words/hello.json`, { headers: { apikey: 'k-1' } });
    expect(response.status).toBe(403);
    expect(backendEvents).toEqual([]);
  });

  it('answers 500 AuthorizerConfigurationException when the authorizer fails or answers a malformed policy', async () => {
    const failing: AuthorizerFunction[] = [
      async () => {
        throw new Error('redis exploded');
      },
      async (event) => ({ ...policy('Allow', event.methodArn, {}), principalId: '' }),
      async (event) =>
        ({
          ...policy('Allow', event.methodArn, {}),
          context: { nested: { a: 1 } },
        }) as unknown as APIGatewayAuthorizerResult,
    ];
    for (const authorizer of failing) {
      const { url, backendEvents } = await gatewayWith(authorizer);
      const response = await fetch(`${url}/v1/words/hello.json`, { headers: { apikey: 'k-1' } });
      expect(response.status).toBe(500);
      expect(response.headers.get('x-amzn-errortype')).toBe('AuthorizerConfigurationException');
      expect(await response.json()).toEqual({
        message: 'The access check is unavailable; try again later',
        reason: 'authorizer_unavailable',
      });
      expect(backendEvents).toEqual([]);
    }
  });

  it('answers 404 Missing Authentication Token for a route the API does not have, without the authorizer', async () => {
    const { url, events } = await gatewayWith(allowMethod);
    for (const [method, path] of [
      ['GET', '/v2/words/hello.json'],
      ['DELETE', '/v1/words/hello.json'],
      ['GET', '/'],
    ] as const) {
      const response = await fetch(`${url}${path}`, { method, headers: { apikey: 'k-1' } });
      expect(response.status).toBe(404);
      expect(response.headers.get('x-amzn-errortype')).toBe('MissingAuthenticationTokenException');
      expect(await response.json()).toEqual({ message: 'Missing Authentication Token' });
    }
    expect(events).toEqual([]);
  });

  it('serves a greedy {path+} resource and passes a request body through', async () => {
    const { url, backendEvents } = await gatewayWith(allowMethod);
    const response = await fetch(`${url}/files/a/b/c.txt`, {
      method: 'PUT',
      headers: { apikey: 'k-1', 'content-type': 'text/plain' },
      body: 'payload',
    });
    expect(response.status).toBe(200);
    expect(backendEvents[0]).toMatchObject({
      resource: '/files/{path+}',
      pathParameters: { path: 'a/b/c.txt' },
      body: 'payload',
      isBase64Encoded: false,
    });
  });

  it('mounts an API under its base path, which the API itself does not see', async () => {
    const { url, events } = await gatewayWith(allowMethod, { basePath: '/appid' });
    const response = await fetch(`${url}/v1/words/hello.json`, { headers: { apikey: 'k-1' } });
    expect(response.status).toBe(200);
    expect(events[0]?.path).toBe('/v1/words/hello.json');
    expect(events[0]?.methodArn).toMatch(/\/prod\/GET\/v1\/words\/hello\.json$/);
    const unmounted = await fetch(`${url.replace('/appid', '')}/v1/words/hello.json`, {
      headers: { apikey: 'k-1' },
    });
    expect(unmounted.status).toBe(404);
  });

  it('serves open methods without the authorizer or its identity sources, beside protected ones', async () => {
    const { url, events } = await gatewayWith(allowMethod, {
      extraMethods: openMethods(['GET /docs'], () => ({ statusCode: 200, body: '<html></html>' })),
    });
    const open = await fetch(`${url}/docs`);
    expect(open.status).toBe(200);
    expect(await open.text()).toBe('<html></html>');
    expect(events).toEqual([]);
    expect((await fetch(`${url}/v1/words/hello.json`)).status).toBe(401);
  });

  it('answers CORS preflights like the MOCK of defaultCorsPreflightOptions, on every resource and parent', async () => {
    const cors = corsPreflightOptions({ allowOrigins: [PORTAL, DOCS_ORIGIN] }, ['apikey']);
    const { url, events, backendEvents } = await gatewayWith(allowMethod, {
      extraMethods: corsPreflightMethods(protectedMethods(routes, echo), cors),
    });
    const preflight = (path: string, origin: string) =>
      fetch(`${url}${path}`, {
        method: 'OPTIONS',
        headers: {
          Origin: origin,
          'Access-Control-Request-Method': 'GET',
          'Access-Control-Request-Headers': 'apikey',
        },
      });
    const answer = await preflight('/v1/words/hello.json', DOCS_ORIGIN);
    expect(answer.status).toBe(204);
    expect(Object.fromEntries(answer.headers)).toMatchObject({
      'access-control-allow-origin': DOCS_ORIGIN,
      'access-control-allow-methods': 'OPTIONS,GET,PUT,POST,DELETE,PATCH,HEAD',
      'access-control-allow-headers': expect.stringMatching(/^Content-Type,.*,apikey$/),
      vary: 'Origin',
    });
    // The MOCK checks nothing: an origin it does not know gets the first origin, and the browser refuses.
    expect(
      (await preflight('/files/a/b', 'https://evil.example')).headers.get('access-control-allow-origin'),
    ).toBe(PORTAL);
    for (const path of ['/', '/v1', '/v1/words', '/files'])
      expect((await preflight(path, PORTAL)).status).toBe(204);
    expect((await preflight('/v2/none', PORTAL)).status).toBe(404);
    expect(events).toEqual([]);
    expect(backendEvents).toEqual([]);
  });

  it('puts the static CORS headers of its gateway responses on every refusal', async () => {
    const { url } = await gatewayWith(
      async (event) => policy('Deny', event.methodArn, { reason: 'limits_exceeded' }),
      {
        responses: withHeaders(responses, gatewayResponseCorsHeaders({ allowOrigins: [PORTAL] })),
      },
    );
    for (const [path, headers, status] of [
      ['/v1/words/hello.json', {}, 401],
      ['/v1/words/hello.json', { apikey: 'k-1' }, 403],
      ['/v2/none', {}, 404],
    ] as const) {
      const answer = await fetch(`${url}${path}`, { headers: { ...headers, Origin: PORTAL } });
      expect(answer.status).toBe(status);
      expect(answer.headers.get('access-control-allow-origin')).toBe(PORTAL);
      expect(answer.headers.get('vary')).toBe('Origin');
      expect(answer.headers.get('content-type')).toBe('application/json');
    }
  });

  it('answers no cross-origin headers when the API has no CORS', async () => {
    const { url } = await gatewayWith(allowMethod);
    const headers = { Origin: PORTAL };
    for (const answer of [
      await fetch(`${url}/v1/words/hello.json`, { headers: { ...headers, apikey: 'k-1' } }),
      await fetch(`${url}/v1/words/hello.json`, { headers }),
    ]) {
      expect(answer.headers.get('access-control-allow-origin')).toBeNull();
    }
    expect((await fetch(`${url}/v1/words/hello.json`, { method: 'OPTIONS', headers })).status).toBe(404);
  });

  it('answers 502 when the backend returns something that is not a proxy result', async () => {
    const { url } = await gatewayWith(allowMethod, {
      backend: () => ({ body: 'no status code' }) as never,
    });
    const response = await fetch(`${url}/v1/words/hello.json`, { headers: { apikey: 'k-1' } });
    expect(response.status).toBe(502);
    expect(await response.json()).toEqual({ message: 'Internal server error' });
  });
});
