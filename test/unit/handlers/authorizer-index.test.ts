import type { APIGatewayRequestAuthorizerEvent } from 'aws-lambda';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { ENV, LOCAL_SECRET_ENV } from '../../../core/settings/config';
import { freePort as closedPort } from '../../../local/redis';

const ARN = 'arn:aws:execute-api:us-east-1:123456789012:abc/prod/GET/';

function event(): APIGatewayRequestAuthorizerEvent {
  return {
    type: 'REQUEST',
    methodArn: ARN,
    resource: '/',
    path: '/',
    httpMethod: 'GET',
    headers: { apikey: 'k' },
    multiValueHeaders: null,
    pathParameters: null,
    queryStringParameters: null,
    multiValueQueryStringParameters: null,
    stageVariables: null,
    requestContext: {} as APIGatewayRequestAuthorizerEvent['requestContext'],
  };
}

afterEach(() => {
  vi.unstubAllEnvs();
});

describe('authorizer Lambda entry', () => {
  it('a container that cannot start refuses with a Deny (not a 5xx), then starts once configured', async () => {
    vi.spyOn(process.stdout, 'write').mockImplementation(() => true);
    vi.stubEnv(ENV.serviceId, '');
    const { handler } = await import('../../../lambdas/authorizer/index');
    const refused = await handler(event());
    expect(refused.policyDocument.Statement).toEqual([
      { Action: 'execute-api:Invoke', Effect: 'Deny', Resource: ARN },
    ]);
    expect(refused.context).toEqual({ reason: 'authorizer_error' });

    vi.stubEnv(ENV.serviceId, 's1');
    vi.stubEnv(ENV.platformUrl, `http://127.0.0.1:${await closedPort()}`);
    vi.stubEnv(LOCAL_SECRET_ENV.providerKey, 'pk-local');
    const answered = await handler(event());
    expect(answered.context).toMatchObject({ reason: 'platform_unavailable' });
    vi.restoreAllMocks();
  });
});
