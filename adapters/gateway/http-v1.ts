/**
 * An HTTP API's Lambda authorizer with payload format 1.0: the REST event's shape (plus `version`
 * "1.0" and `identitySource` as one comma-joined string), answered with an IAM policy. An HTTP API has no
 * documented 401 from its authorizer, so a refused credential is a Deny naming it (docs/http-api.md).
 */
import type { APIGatewayAuthorizerResult, APIGatewayRequestAuthorizerEvent } from 'aws-lambda';
import { INVALID_CREDENTIAL } from '../../contract/authorizer-context';
import type { GatewayFormat } from './format';
import { authorizerErrorPolicy, policyOf, reasonPolicy } from './policy';
import { restRequestOf } from './rest-request';

export type HttpApiV1AuthorizerEvent = APIGatewayRequestAuthorizerEvent & {
  readonly version: '1.0';
  readonly identitySource?: string;
};

export const httpV1Format: GatewayFormat<HttpApiV1AuthorizerEvent, APIGatewayAuthorizerResult> = {
  name: 'http-1.0',
  requestOf: restRequestOf,
  answerOf(event, decision, now) {
    if (decision.effect === 'unauthorized') return reasonPolicy(event.methodArn, INVALID_CREDENTIAL);
    return policyOf(event.methodArn, decision, now);
  },
  failureOf: (event) => authorizerErrorPolicy(event.methodArn),
};
