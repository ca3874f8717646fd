/**
 * What a protected API does around the access authorizer: which methods it guards, and the JSON answers API
 * Gateway gives when the authorizer refuses a call or fails. Plain data with no aws-cdk-lib import, so the
 * local gateway serves exactly what a deployed API serves.
 */
import type { AccessConfig } from '../lambdas/core/config';
import { CREDENTIAL_SCHEMES } from '../lambdas/core/credentials';

export type AccessGatewayResponseType =
  | 'UNAUTHORIZED'
  | 'ACCESS_DENIED'
  | 'AUTHORIZER_FAILURE'
  | 'AUTHORIZER_CONFIGURATION_ERROR';

export interface AccessGatewayResponse {
  readonly type: AccessGatewayResponseType;
  readonly statusCode: number;
  /** Body template; API Gateway fills `$context.authorizer.reason` from the Deny's context. */
  readonly template: string;
}

type CredentialSettings = Pick<
  AccessConfig,
  'credentialMode' | 'credentialHeader' | 'appIdHeader' | 'appKeyHeader'
>;

function credentialHint(config: CredentialSettings): string {
  return CREDENTIAL_SCHEMES[config.credentialMode].hint(config);
}

/** Every method but OPTIONS: a CORS preflight carries no credential. */
export function isProtectedMethod(httpMethod: string): boolean {
  return httpMethod !== 'OPTIONS';
}

const UNAVAILABLE = JSON.stringify({
  message: 'The access check is unavailable; try again later',
  reason: 'authorizer_unavailable',
});

export function accessGatewayResponses(config: CredentialSettings): readonly AccessGatewayResponse[] {
  return [
    {
      type: 'UNAUTHORIZED',
      statusCode: 401,
      template: JSON.stringify({
        message: `Missing or invalid credential: ${credentialHint(config)}`,
        reason: 'invalid_credential',
      }),
    },
    {
      type: 'ACCESS_DENIED',
      statusCode: 403,
      template: '{"message":"Access denied","reason":"$context.authorizer.reason"}',
    },
    { type: 'AUTHORIZER_FAILURE', statusCode: 500, template: UNAVAILABLE },
    { type: 'AUTHORIZER_CONFIGURATION_ERROR', statusCode: 500, template: UNAVAILABLE },
  ];
}
