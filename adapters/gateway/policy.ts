/** The IAM policy answer, shared by the formats that answer with one (REST, HTTP API payload 1.0). */
import type { APIGatewayAuthorizerResult } from 'aws-lambda';
import type { AuthorizerContext } from '../../contract/authorizer-context';
import { decisionContext, FAILURE_CONTEXT } from './context';
import type { PolicyDecision } from './format';

function policy(
  principalId: string,
  effect: 'Allow' | 'Deny',
  methodArn: string,
  context: AuthorizerContext,
): APIGatewayAuthorizerResult {
  return {
    principalId,
    policyDocument: {
      Version: '2012-10-17',
      Statement: [{ Action: 'execute-api:Invoke', Effect: effect, Resource: methodArn }],
    },
    context: { ...context },
  };
}

/** The IAM policy for one decision: Allow or Deny execute-api:Invoke on exactly `methodArn`. */
export function policyOf(
  methodArn: string,
  decision: PolicyDecision,
  now: number = Date.now(),
): APIGatewayAuthorizerResult {
  const effect = decision.effect === 'allow' ? 'Allow' : 'Deny';
  return policy(decision.credentialId, effect, methodArn, decisionContext(decision, now));
}

/** A refusal that is not a 5xx, for when the authorizer cannot decide at all. */
export function authorizerErrorPolicy(methodArn: string): APIGatewayAuthorizerResult {
  return policy('unknown', 'Deny', methodArn, FAILURE_CONTEXT);
}

/** A Deny naming only its reason, for a refusal that has no credential id (a malformed credential). */
export function reasonPolicy(methodArn: string, reason: string): APIGatewayAuthorizerResult {
  return policy('unknown', 'Deny', methodArn, { reason });
}
