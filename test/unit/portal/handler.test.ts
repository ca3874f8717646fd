/** The portal's Lambda handler: the event mapped to the core's request, answers and cookies mapped back. */
import type { APIGatewayProxyEvent } from 'aws-lambda';
import { describe, expect, it } from 'vitest';
import { silentLogger } from '../../../core/observability/observability';
import type { PortalRequest } from '../../../core/portal/http';
import { createPortalHandler, portalRequest, proxyResult } from '../../../lambdas/portal/handler';

function event(overrides: Partial<APIGatewayProxyEvent>): APIGatewayProxyEvent {
  return {
    resource: '/portal/{proxy+}',
    path: '/portal/signup',
    httpMethod: 'POST',
    headers: { Host: 'abc.execute-api.eu-west-1.amazonaws.com', Cookie: 'a=b', 'X-Forwarded-Proto': 'https' },
    multiValueHeaders: {},
    queryStringParameters: { token: 't' },
    multiValueQueryStringParameters: null,
    pathParameters: { proxy: 'signup' },
    stageVariables: null,
    body: Buffer.from('email=a%40example.com').toString('base64'),
    isBase64Encoded: true,
    requestContext: { path: '/prod/portal/signup', identity: { sourceIp: '192.0.2.7' } } as never,
    ...overrides,
  };
}

describe('portalRequest', () => {
  it('takes the path under /portal, the base the browser sees, lower-case headers, the decoded body', () => {
    expect(portalRequest(event({}))).toEqual({
      method: 'POST',
      base: '/prod/portal',
      path: '/signup',
      query: { token: 't' },
      headers: {
        host: 'abc.execute-api.eu-west-1.amazonaws.com',
        cookie: 'a=b',
        'x-forwarded-proto': 'https',
      },
      body: 'email=a%40example.com',
      sourceAddress: '192.0.2.7',
    });
  });

  it('serves /portal itself as the empty path, and takes a base it is given', () => {
    const root = portalRequest(event({ path: '/portal', requestContext: { path: '/portal' } as never }));
    expect(root).toMatchObject({ base: '/portal', path: '' });
    expect(portalRequest(event({}), '/v1/portal').base).toBe('/v1/portal');
  });
});

describe('proxyResult', () => {
  it('sends each cookie as its own Set-Cookie', () => {
    const result = proxyResult({
      status: 303,
      headers: { location: '/portal/app' },
      cookies: ['a=1', 'b=2'],
      body: '',
    });
    expect(result).toEqual({
      statusCode: 303,
      headers: { location: '/portal/app' },
      multiValueHeaders: { 'Set-Cookie': ['a=1', 'b=2'] },
      body: '',
    });
  });
});

describe('createPortalHandler', () => {
  const seen: PortalRequest[] = [];
  const handler = createPortalHandler({
    portal: async () => async (request) => {
      seen.push(request);
      if (request.path === '/boom') throw new Error('redis is down');
      return { status: 200, headers: {}, cookies: [], body: 'portal' };
    },
    docs: () => (docsEvent) => ({ statusCode: 200, body: `docs ${docsEvent.pathParameters?.file}` }),
    logger: silentLogger,
  });

  it('hands Swagger UI’s files and the document to the docs handler, credentials.json to the portal', async () => {
    expect((await handler(event({ httpMethod: 'GET', path: '/portal/docs/swagger.json' }))).body).toBe(
      'docs swagger.json',
    );
    expect((await handler(event({ httpMethod: 'GET', path: '/portal/docs/credentials.json' }))).body).toBe(
      'portal',
    );
    expect(seen.at(-1)?.path).toBe('/docs/credentials.json');
  });

  it('answers 503 when the portal fails, saying nothing of why', async () => {
    const result = await handler(event({ path: '/portal/boom' }));
    expect(result.statusCode).toBe(503);
    expect(result.body).not.toContain('redis');
  });
});
