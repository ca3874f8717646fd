/**
 * The local gateway's HTTP API: the payload 2.0 event it sends the authorizer, the simple responses it
 * enforces, and the answers an HTTP API gives itself (docs/http-api.md), with authorizers that answer
 * what a test needs in front of the real echo backend.
 */
import { request } from 'node:http';
import type { APIGatewayRequestAuthorizerEventV2 } from 'aws-lambda';
import { afterEach, describe, expect, it } from 'vitest';
import { parseRoute } from '../../contract/routes';
import { type EchoBody, echo } from '../../lambdas/echo/handler';
import {
  type HttpAuthorizerFunction,
  type HttpGatewayApi,
  type LocalGateway,
  protectedMethods,
  startGateway,
} from '../../local/gateway';

const routes = ['GET /v1/words/{word}', 'ANY /files/{path+}'].map((route, i) =>
  parseRoute(route, `routes[${i}]`),
);
const gateways: LocalGateway[] = [];

afterEach(async () => {
  await Promise.all(gateways.splice(0).map((gateway) => gateway.stop()));
});

async function httpApiWith(
  authorizer: HttpAuthorizerFunction,
  overrides: Partial<HttpGatewayApi> = {},
): Promise<{ url: string; events: APIGatewayRequestAuthorizerEventV2[] }> {
  const events: APIGatewayRequestAuthorizerEventV2[] = [];
  const gateway = await startGateway({
    apis: [
      {
        apiType: 'http',
        basePath: '',
        stagePath: '/prod',
        apiId: 'local',
        stage: 'prod',
        methods: protectedMethods(routes, echo),
        identitySources: [],
        authorizer: async (event) => {
          events.push(event);
          return authorizer(event);
        },
        ...overrides,
      },
    ],
  });
  gateways.push(gateway);
  return { url: `${gateway.url}/prod`, events };
}

/** A GET with repeated header lines, as node:http sends an array value (fetch would fold them). */
function rawGet(url: string, headers: Record<string, string | string[]>): Promise<number> {
  return new Promise((resolve, reject) => {
    const outgoing = request(url, { headers, timeout: 5000 }, (response) => {
      response.resume();
      response.on('end', () => resolve(response.statusCode ?? 0));
    });
    outgoing.on('timeout', () => outgoing.destroy(new Error('no answer within 5 s')));
    outgoing.on('error', reject);
    outgoing.end();
  });
}

const allow: HttpAuthorizerFunction = async () => ({
  isAuthorized: true,
  context: { plan: 'Basic', limit: 5 },
});

describe('local HTTP API', () => {
  it('sends the authorizer the 2.0 event: rawPath with the stage, lower-case joined headers, cookies, raw query', async () => {
    const { url, events } = await httpApiWith(allow);
    const status = await rawGet(`${url}/v1/words/hello.json?tag=a&tag=b`, {
      ApiKey: 'k-1',
      'X-Repeated': ['first', 'second'],
      Cookie: 'a=1; b=2',
      'User-Agent': 'e2e-test',
    });
    expect(status).toBe(200);
    expect(events[0]).toMatchObject({
      version: '2.0',
      type: 'REQUEST',
      routeKey: 'GET /v1/words/{word}',
      routeArn: 'arn:aws:execute-api:us-east-1:123456789012:local/prod/GET/prod/v1/words/hello.json',
      rawPath: '/prod/v1/words/hello.json',
      rawQueryString: 'tag=a&tag=b',
      cookies: ['a=1', 'b=2'],
      queryStringParameters: { tag: 'a,b' },
      pathParameters: { word: 'hello.json' },
      requestContext: {
        stage: 'prod',
        routeKey: 'GET /v1/words/{word}',
        http: { method: 'GET', path: '/prod/v1/words/hello.json', userAgent: 'e2e-test' },
      },
    });
    expect(events[0]?.headers).toMatchObject({ apikey: 'k-1', 'x-repeated': 'first,second' });
    expect(events[0]?.headers?.cookie).toBeUndefined();
  });

  it('forwards an allowed call with the context, the path without the stage', async () => {
    const { url } = await httpApiWith(allow);
    const response = await fetch(`${url}/v1/words/hello.json`);
    expect(response.status).toBe(200);
    expect((await response.json()) as EchoBody).toMatchObject({
      path: '/v1/words/hello.json',
      authorizer: { plan: 'Basic', limit: '5' },
    });
  });

  it.each([
    [
      'isAuthorized false',
      async () => ({ isAuthorized: false, context: { reason: 'limits_exceeded' } }),
      403,
      'Forbidden',
    ],
    ['a thrown error', async () => Promise.reject(new Error('boom')), 500, 'Internal Server Error'],
    [
      'a thrown Unauthorized',
      async () => Promise.reject(new Error('Unauthorized')),
      500,
      'Internal Server Error',
    ],
    ['an IAM policy', async () => ({ principalId: 'x', policyDocument: {} }), 500, 'Internal Server Error'],
    [
      'a context that is no object',
      async () => ({ isAuthorized: true, context: 'x' }),
      500,
      'Internal Server Error',
    ],
  ] as const)('answers %s with %i and no gateway responses', async (_, authorizer, status, message) => {
    const { url } = await httpApiWith(authorizer);
    const response = await fetch(`${url}/v1/words/hello.json`);
    expect(response.status).toBe(status);
    expect(response.headers.get('x-amzn-errortype')).toBeNull();
    expect(await response.json()).toEqual({ message });
  });

  it('answers 401 Unauthorized without invoking the authorizer when an identity source is missing', async () => {
    const { url, events } = await httpApiWith(allow, {
      identitySources: [{ location: 'header', name: 'apikey' }],
    });
    const response = await fetch(`${url}/v1/words/hello.json`);
    expect([response.status, await response.json()]).toEqual([401, { message: 'Unauthorized' }]);
    expect(events).toEqual([]);
  });

  it('answers 404 Not Found off its routes', async () => {
    const { url } = await httpApiWith(allow);
    const offRoute = await fetch(`${url}/nothing`);
    expect([offRoute.status, await offRoute.json()]).toEqual([404, { message: 'Not Found' }]);
  });
});
