/**
 * A REST API's REQUEST authorizer: an IAM policy for exactly the called method. A refused credential is
 * `throw new Error('Unauthorized')`, which API Gateway answers 401 (its UNAUTHORIZED gateway response).
 */
import type { APIGatewayAuthorizerResult, APIGatewayRequestAuthorizerEvent } from 'aws-lambda';
import type { GatewayFormat } from './format';
import { authorizerErrorPolicy, policyOf } from './policy';
import { restRequestOf } from './rest-request';

export const restFormat: GatewayFormat<APIGatewayRequestAuthorizerEvent, APIGatewayAuthorizerResult> = {
  name: 'rest',
  requestOf: restRequestOf,
  answerOf(event, decision, now) {
    if (decision.effect === 'unauthorized') throw new Error('Unauthorized');
    return policyOf(event.methodArn, decision, now);
  },
  failureOf: (event) => authorizerErrorPolicy(event.methodArn),
};
