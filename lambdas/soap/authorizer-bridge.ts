/**
 * The access decision of a SOAP call, asked of the REST authorizer until the access core offers a
 * request-level entry point: the call becomes the REQUEST event of `POST /<method>` with the credential
 * in the configured headers, and the policy comes back as a decision. Same credential checks, cache,
 * limits, pending usage and reports as a REST call; the cache endpoint is `POST /<method>`.
 */
import type { APIGatewayRequestAuthorizerEvent } from 'aws-lambda';
import type { AuthorizerHandler } from '../authorizer/handler';
import type { AccessConfig } from '../core/config';
import type { SoapCredential } from '../core/soap/access-header';
import type { DecideAccess, SoapAccessRequest } from '../core/soap/proxy';

type CredentialHeaders = Pick<AccessConfig, 'credentialHeader' | 'appIdHeader' | 'appKeyHeader'>;

function credentialHeaders(config: CredentialHeaders, credential: SoapCredential): Record<string, string> {
  switch (credential.kind) {
    case 'user_key':
      return { [config.credentialHeader]: credential.userKey };
    case 'app_id':
      return {
        [config.appIdHeader]: credential.appId,
        ...(credential.appKey !== undefined && { [config.appKeyHeader]: credential.appKey }),
      };
    case 'access_token':
      throw new Error('access tokens need the access core of oauth mode');
  }
}

export function authorizerEventOf(
  config: CredentialHeaders,
  request: SoapAccessRequest,
): APIGatewayRequestAuthorizerEvent {
  const headers = credentialHeaders(config, request.credential);
  return {
    type: 'REQUEST',
    methodArn: `arn:aws:execute-api:local:000000000000:soap/proxy/${request.method}${request.path}`,
    resource: request.path,
    path: request.path,
    httpMethod: request.method,
    headers,
    multiValueHeaders: Object.fromEntries(Object.entries(headers).map(([name, value]) => [name, [value]])),
    pathParameters: null,
    queryStringParameters: null,
    multiValueQueryStringParameters: null,
    stageVariables: null,
    requestContext: {} as APIGatewayRequestAuthorizerEvent['requestContext'],
  };
}

/** The authorizer throws `Unauthorized` for a 401; everything else is an Allow or a Deny with its reason. */
export function decideThroughAuthorizer(
  authorize: AuthorizerHandler,
  config: CredentialHeaders,
): DecideAccess {
  return async (request) => {
    let result: Awaited<ReturnType<AuthorizerHandler>>;
    try {
      result = await authorize(authorizerEventOf(config, request));
    } catch (error) {
      if (error instanceof Error && error.message === 'Unauthorized') return { effect: 'unauthorized' };
      throw error;
    }
    const allowed = result.policyDocument.Statement.every(
      (statement) => 'Effect' in statement && statement.Effect === 'Allow',
    );
    if (allowed) return { effect: 'allow' };
    const reason = result.context?.reason;
    return { effect: 'deny', ...(typeof reason === 'string' && { reason }) };
  };
}
