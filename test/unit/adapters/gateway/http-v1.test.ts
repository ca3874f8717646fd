import { describe, expect, it } from 'vitest';
import { httpV1Format } from '../../../../adapters/gateway/http-v1';
import { httpV1SampleEvent } from './sample-events';

describe('HTTP API payload 1.0', () => {
  it('reads the sample event, which has no multi-value maps', () => {
    expect(httpV1Format.requestOf(httpV1SampleEvent())).toEqual({
      method: 'GET',
      path: '/request',
      query: { QueryString1: ['queryValue1'] },
      headers: { Accept: ['*/*'], HeaderAuth1: ['headerValue1'] },
    });
  });

  it('removes a named stage from the path', () => {
    const event = httpV1SampleEvent({ path: '/test/request' });
    expect(httpV1Format.requestOf(event).path).toBe('/request');
  });

  it('answers an IAM policy; a refused credential is a Deny naming it, never a thrown Unauthorized', () => {
    const event = httpV1SampleEvent();
    const allow = { effect: 'allow', credentialId: 'c1', plan: 'Basic', metrics: 'hits' } as const;
    expect(httpV1Format.answerOf(event, allow, 0)).toMatchObject({
      principalId: 'c1',
      policyDocument: { Statement: [{ Effect: 'Allow', Resource: event.methodArn }] },
    });
    expect(httpV1Format.answerOf(event, { effect: 'unauthorized' }, 0)).toMatchObject({
      policyDocument: { Statement: [{ Effect: 'Deny', Resource: event.methodArn }] },
      context: { reason: 'invalid_credential' },
    });
    expect(httpV1Format.failureOf(event)).toMatchObject({ context: { reason: 'authorizer_error' } });
  });
});
