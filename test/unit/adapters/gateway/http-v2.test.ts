import { describe, expect, it } from 'vitest';
import { httpV2Format } from '../../../../adapters/gateway/http-v2';
import { extractCredential } from '../../../../core/credentials';
import { compileMappingRules } from '../../../../core/decision/mapping';
import { parseConfig } from '../../../../core/settings/config';
import { httpV2SampleEvent } from './sample-events';

describe('HTTP API payload 2.0 as the core request', () => {
  it('reads the sample event: the method of requestContext.http, repeated query values apart from rawQueryString', () => {
    expect(httpV2Format.requestOf(httpV2SampleEvent())).toEqual({
      method: 'POST',
      path: '/my/path',
      query: { parameter1: ['value1', 'value2'], parameter2: ['value'] },
      headers: { header1: ['value1'], header2: ['value2'] },
      // The source address, which the first-call gate shares its bound by.
      sourceAddress: 'IP',
    });
  });

  it('decodes query values as a form does, and reads an empty query string as no parameters', () => {
    const request = httpV2Format.requestOf(
      httpV2SampleEvent({ rawQueryString: 'q=a%20b+c&e=%E2%82%AC&flag' }),
    );
    expect(request.query).toEqual({ q: ['a b c'], e: ['€'], flag: [''] });
    expect(httpV2Format.requestOf(httpV2SampleEvent({ rawQueryString: '' })).query).toEqual({});
  });

  it('removes a named stage from rawPath; the $default stage has none', () => {
    const named = httpV2SampleEvent({ stage: 'prod', rawPath: '/prod/v1/words/hello.json' });
    expect(httpV2Format.requestOf(named).path).toBe('/v1/words/hello.json');
    expect(httpV2Format.requestOf(httpV2SampleEvent({ stage: 'prod', rawPath: '/prod' })).path).toBe('/');
    const atRoot = httpV2SampleEvent({ rawPath: '/prod/v1' });
    expect(httpV2Format.requestOf(atRoot).path).toBe('/prod/v1');
  });

  it('keeps a route of its own that starts like the stage', () => {
    const event = httpV2SampleEvent({ stage: 'prod', rawPath: '/prod/7', routeKey: 'GET /prod/{id}' });
    expect(httpV2Format.requestOf(event).path).toBe('/prod/7');
  });

  it('mapping rules match on repeated query values and never see the stage', () => {
    const rules = parseConfig({
      serviceId: 's',
      mappingRules: [{ method: 'GET', pattern: '/v1/words/{w}?lang=fr', metric: 'french', delta: 1 }],
    }).mappingRules;
    const event = httpV2SampleEvent({
      method: 'GET',
      stage: 'prod',
      rawPath: '/prod/v1/words/x',
      rawQueryString: 'lang=en&lang=fr',
    });
    expect(compileMappingRules(rules).usageOf(httpV2Format.requestOf(event))).toEqual({ french: 1 });
  });

  it('refuses a header the gateway joined with commas as several values', () => {
    const config = parseConfig({ serviceId: 's' });
    const joined = httpV2Format.requestOf(httpV2SampleEvent({ headers: { apikey: 'k-1,k-2' } }));
    expect(extractCredential(config, joined)).toEqual({
      ok: false,
      header: 'apikey',
      reason: 'several_values',
    });
  });
});

describe('HTTP API payload 2.0 simple responses', () => {
  const event = httpV2SampleEvent();

  it('answers isAuthorized with the decision as context', () => {
    const allow = { effect: 'allow', credentialId: 'c1', plan: 'Basic', metrics: 'hits' } as const;
    expect(httpV2Format.answerOf(event, allow, 0)).toEqual({
      isAuthorized: true,
      context: { credentialId: 'c1', plan: 'Basic', metrics: 'hits' },
    });
    const deny = { ...allow, effect: 'deny', reason: 'limits_exceeded' } as const;
    expect(httpV2Format.answerOf(event, deny, 0)).toEqual({
      isAuthorized: false,
      context: { credentialId: 'c1', plan: 'Basic', metrics: 'hits', reason: 'limits_exceeded' },
    });
  });

  it('refuses a bad credential and a failure with isAuthorized false and a reason, never by throwing', () => {
    expect(httpV2Format.answerOf(event, { effect: 'unauthorized' }, 0)).toEqual({
      isAuthorized: false,
      context: { reason: 'invalid_credential' },
    });
    expect(httpV2Format.failureOf(event)).toEqual({
      isAuthorized: false,
      context: { reason: 'authorizer_error' },
    });
  });
});
