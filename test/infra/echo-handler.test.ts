import type { APIGatewayProxyEvent, Context } from 'aws-lambda';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { ENV } from '../../core/settings/config';
import { type EchoBody, echo } from '../../lambdas/echo/handler';

function requestEvent(overrides: Partial<APIGatewayProxyEvent> = {}): APIGatewayProxyEvent {
  return {
    httpMethod: 'GET',
    path: '/v1/words/hello.json',
    resource: '/v1/words/{word}',
    pathParameters: { word: 'hello.json' },
    queryStringParameters: { lang: 'en' },
    multiValueQueryStringParameters: { lang: ['en'] },
    headers: { Accept: 'application/json', apikey: 'consumer-secret-key', app_id: 'app-1' },
    multiValueHeaders: {},
    body: null,
    isBase64Encoded: false,
    stageVariables: null,
    requestContext: {
      accountId: '123456789012',
      apiId: 'abc123',
      authorizer: { principalId: 'app-1', applicationId: 'app-1', plan: 'Basic', metric: 'get_word' },
      httpMethod: 'GET',
      identity: {} as APIGatewayProxyEvent['requestContext']['identity'],
      path: '/prod/v1/words/hello.json',
      protocol: 'HTTP/1.1',
      requestId: 'request-1',
      requestTimeEpoch: 0,
      resourceId: 'res1',
      resourcePath: '/v1/words/{word}',
      stage: 'prod',
    },
    ...overrides,
  };
}

function bodyOf(result: { body: string }): EchoBody {
  return JSON.parse(result.body) as EchoBody;
}

describe('echo', () => {
  it('answers 200 JSON with the method, path, resource, parameters, headers and authorizer context', () => {
    const result = echo(requestEvent());
    expect(result.statusCode).toBe(200);
    expect(result.headers?.['content-type']).toBe('application/json; charset=utf-8');
    expect(bodyOf(result)).toEqual({
      method: 'GET',
      path: '/v1/words/hello.json',
      resource: '/v1/words/{word}',
      pathParameters: { word: 'hello.json' },
      queryStringParameters: { lang: 'en' },
      headers: { Accept: 'application/json', app_id: 'app-1' },
      authorizer: { principalId: 'app-1', applicationId: 'app-1', plan: 'Basic', metric: 'get_word' },
    });
  });

  it('never reflects credential headers, whatever their case', () => {
    const result = echo(
      requestEvent({
        headers: {
          APIKEY: 'k1',
          App_Key: 'k2',
          Authorization: 'Bearer t',
          'X-Api-Key': 'k3',
          Host: 'example',
        },
      }),
    );
    expect(bodyOf(result).headers).toEqual({ Host: 'example' });
    expect(result.body).not.toMatch(/k1|k2|k3|Bearer/);
  });

  it('never reflects credential query parameters', () => {
    const result = echo(
      requestEvent({ queryStringParameters: { user_key: 'k1', access_token: 't', q: 'x' } }),
    );
    expect(bodyOf(result).queryStringParameters).toEqual({ q: 'x' });
  });

  it('hides the extra names it is given', () => {
    const result = echo(requestEvent({ headers: { 'X-Consumer-Key': 'k1', Accept: '*/*' } }), {
      hiddenNames: ['x-consumer-key'],
    });
    expect(bodyOf(result).headers).toEqual({ Accept: '*/*' });
  });

  it('answers empty objects when the request has no parameters', () => {
    const body = bodyOf(echo(requestEvent({ pathParameters: null, queryStringParameters: null })));
    expect(body.pathParameters).toEqual({});
    expect(body.queryStringParameters).toEqual({});
  });
});

describe('echo Lambda handler', () => {
  afterEach(() => {
    vi.unstubAllEnvs();
    vi.resetModules();
  });

  it('hides the credential headers the deployment is configured with', async () => {
    vi.stubEnv(ENV.credentialHeader, 'x-consumer-key');
    vi.stubEnv(ENV.appKeyHeader, 'x-consumer-secret');
    const { handler } = await import('../../lambdas/echo/index');
    const result = await handler(
      requestEvent({ headers: { 'X-Consumer-Key': 'k1', 'X-Consumer-Secret': 'k2', Accept: '*/*' } }),
      {} as Context,
      () => undefined,
    );
    expect(result && bodyOf(result).headers).toEqual({ Accept: '*/*' });
  });
});
