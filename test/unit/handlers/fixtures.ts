/** Configuration and events shared by the handler tests. */
import type { APIGatewayRequestAuthorizerEvent, SQSEvent } from 'aws-lambda';
import { restRequestOf } from '../../../adapters/gateway/rest-request';
import { credentialIdOf } from '../../../core/credentials';
import type { GatewayRequest } from '../../../core/decision/request';
import { type AccessConfigInput, parseConfig } from '../../../core/settings/config';

export const SERVICE = '2555417735060';
export const KEY = 'demo-key-1';
export const TOPIC = 'arn:aws:sns:us-east-1:123456789012:usage';
export const ARN = 'arn:aws:execute-api:us-east-1:123456789012:abc123/prod/GET/v1/words/hello.json';
export const T0 = Date.UTC(2030, 0, 1, 10, 0, 0);
export const END = Date.UTC(2030, 0, 1, 11, 0, 0);
export const ID = credentialIdOf(SERVICE, { kind: 'user_key', userKey: KEY });

export const RULES = [
  { method: 'GET', pattern: '/v1/words/{word}.json', metric: 'get_word', delta: 1 },
  { method: 'POST', pattern: '/v1/words/{word}.json', metric: 'post_word', delta: 1 },
];

export function accessConfig(overrides: Partial<AccessConfigInput> = {}) {
  return parseConfig({
    serviceId: SERVICE,
    platformCredential: 'pk-demo',
    topicArn: TOPIC,
    mappingRules: RULES,
    reportWindowSeconds: 10,
    redis: { host: '127.0.0.1' },
    ...overrides,
  });
}

export function authorizerEvent(
  overrides: Partial<APIGatewayRequestAuthorizerEvent> = {},
): APIGatewayRequestAuthorizerEvent {
  return {
    type: 'REQUEST',
    methodArn: ARN,
    resource: '/v1/words/{word}.json',
    path: '/v1/words/hello.json',
    httpMethod: 'GET',
    headers: { apikey: KEY },
    multiValueHeaders: { apikey: [KEY] },
    pathParameters: { word: 'hello' },
    queryStringParameters: null,
    multiValueQueryStringParameters: null,
    stageVariables: null,
    requestContext: { stage: 'prod' } as APIGatewayRequestAuthorizerEvent['requestContext'],
    ...overrides,
  };
}

/** An SQS event whose record bodies are the given SNS messages (raw message delivery). */
export function sqsEvent(bodies: readonly string[]): SQSEvent {
  return {
    Records: bodies.map((body, i) => ({
      messageId: `message-${i}`,
      receiptHandle: `receipt-${i}`,
      body,
      attributes: {
        ApproximateReceiveCount: '1',
        SentTimestamp: '0',
        SenderId: 'sns',
        ApproximateFirstReceiveTimestamp: '0',
      },
      messageAttributes: {},
      md5OfBody: '',
      eventSource: 'aws:sqs',
      eventSourceARN: 'arn:aws:sqs:us-east-1:123456789012:usage',
      awsRegion: 'us-east-1',
    })),
  };
}

/** The core's request of a REST authorizer event with these overrides, as the REST adapter reads it. */
export function gatewayRequest(overrides: Partial<APIGatewayRequestAuthorizerEvent> = {}): GatewayRequest {
  return restRequestOf(authorizerEvent(overrides));
}
