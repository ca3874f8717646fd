import { describe, expect, it } from 'vitest';
import type { PolicyDecision } from '../../../../adapters/gateway/format';
import { restFormat } from '../../../../adapters/gateway/rest';
import {
  endpointOf,
  mergedValues,
  requestPathOf,
  restRequestOf,
} from '../../../../adapters/gateway/rest-request';
import { restSampleEvent } from './sample-events';

const ALLOW: PolicyDecision = { effect: 'allow', credentialId: 'c1', plan: 'Basic', metrics: 'hits' };

describe('the REST event as the core request', () => {
  it('reads the sample event: method, path without the stage, every query and header value', () => {
    expect(restRequestOf(restSampleEvent())).toEqual({
      method: 'GET',
      path: '/request',
      query: { QueryString1: ['queryValue1'] },
      headers: { Accept: ['*/*'], HeaderAuth1: ['headerValue1'], 'X-Forwarded-Port': ['443'] },
    });
  });

  it("reads the client's address from identity.sourceIp, and none when the event has none", () => {
    const event = restSampleEvent();
    const requestContext = {
      ...event.requestContext,
      identity: { ...event.requestContext.identity, sourceIp: '198.51.100.7' },
    };
    expect(restRequestOf({ ...event, requestContext }).sourceAddress).toBe('198.51.100.7');
    expect(restRequestOf(event)).not.toHaveProperty('sourceAddress');
  });

  it('keeps repeated query values apart, and a single value the multi-value map lacks as one more value', () => {
    const event = restSampleEvent({
      queryStringParameters: { a: '2', b: 'x' },
      multiValueQueryStringParameters: { a: ['1', '2'] },
    });
    expect(restRequestOf(event).query).toEqual({ a: ['1', '2'], b: ['x'] });
    expect(mergedValues({ k: 'b' }, { k: ['a'] })).toEqual({ k: ['a', 'b'] });
    expect(mergedValues(null, null)).toEqual({});
  });
});

describe('request path and endpoint', () => {
  const event = {
    httpMethod: 'GET',
    resource: '/v1/words/{word}.json',
    path: '/v1/words/hello.json',
    queryStringParameters: { a: '1' },
    multiValueQueryStringParameters: { a: ['0', '1'] },
    headers: null,
    multiValueHeaders: null,
    requestContext: { stage: 'prod' },
  };

  it('endpoint is method and resource template, never the raw path', () => {
    expect(endpointOf(event)).toBe('GET /v1/words/{word}.json');
    expect(endpointOf({ ...event, httpMethod: 'post' })).toBe('POST /v1/words/{word}.json');
  });

  it('path is taken as is when it has no stage', () => {
    expect(requestPathOf(event)).toBe('/v1/words/hello.json');
  });

  it('a stage prefix is removed', () => {
    expect(requestPathOf({ ...event, path: '/prod/v1/words/hello.json' })).toBe('/v1/words/hello.json');
    expect(requestPathOf({ ...event, resource: '/', path: '/prod' })).toBe('/');
  });

  it('a resource that starts like the stage keeps its path', () => {
    expect(requestPathOf({ ...event, resource: '/prod/{id}', path: '/prod/7' })).toBe('/prod/7');
  });

  it('a query string left in the path is dropped', () => {
    expect(requestPathOf({ ...event, path: '/v1/words/x.json?y=1' })).toBe('/v1/words/x.json');
  });

  it('query parameters keep every value', () => {
    expect(restRequestOf(event)).toMatchObject({
      method: 'GET',
      path: '/v1/words/hello.json',
      query: { a: ['0', '1'] },
    });
    expect(restRequestOf({ ...event, multiValueQueryStringParameters: null }).query).toEqual({ a: ['1'] });
  });
});

describe('the REST answer', () => {
  it('is an IAM policy on exactly the method ARN, with the decision in its context', () => {
    const event = restSampleEvent();
    expect(restFormat.answerOf(event, ALLOW, 0)).toEqual({
      principalId: 'c1',
      policyDocument: {
        Version: '2012-10-17',
        Statement: [{ Action: 'execute-api:Invoke', Effect: 'Allow', Resource: event.methodArn }],
      },
      context: { credentialId: 'c1', plan: 'Basic', metrics: 'hits' },
    });
  });

  it('throws Unauthorized for a refused credential (API Gateway answers 401), and denies on failure', () => {
    const event = restSampleEvent();
    expect(() => restFormat.answerOf(event, { effect: 'unauthorized' }, 0)).toThrow(/^Unauthorized$/);
    expect(restFormat.failureOf(event)).toMatchObject({
      policyDocument: { Statement: [{ Effect: 'Deny', Resource: event.methodArn }] },
      context: { reason: 'authorizer_error' },
    });
  });
});
