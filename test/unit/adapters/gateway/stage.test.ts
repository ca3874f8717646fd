import { describe, expect, it } from 'vitest';
import { httpV1Format } from '../../../../adapters/gateway/http-v1';
import { httpV2Format } from '../../../../adapters/gateway/http-v2';
import { restFormat } from '../../../../adapters/gateway/rest';
import { apiPathOf } from '../../../../adapters/gateway/stage';
import { compileMappingRules } from '../../../../core/decision/mapping';
import { parseConfig } from '../../../../core/settings/config';
import { httpV1SampleEvent, httpV2SampleEvent, restCustomDomainEvent } from './sample-events';

const CUSTOM_DOMAIN = 'api.example.com';

describe('the API path of a REST call through a custom domain', () => {
  it('drops the base path the event carries, and keeps a route named like the stage', () => {
    const event = restCustomDomainEvent({
      basePath: 'orders',
      stage: 'v1',
      resource: '/v1/words/{word}',
      apiPath: '/v1/words/hello',
      pathParameters: { word: 'hello' },
    });
    expect(event.path).toBe('/orders/v1/words/hello');
    expect(restFormat.requestOf(event).path).toBe('/v1/words/hello');
  });

  it('never reads the stage off a greedy route on the (none) mapping', () => {
    const event = restCustomDomainEvent({
      basePath: '',
      stage: 'v1',
      resource: '/{proxy+}',
      apiPath: '/v1/words/hello',
      pathParameters: { proxy: 'v1/words/hello' },
    });
    expect(event.path).toBe('/v1/words/hello');
    expect(restFormat.requestOf(event).path).toBe('/v1/words/hello');
  });

  it('reads a multi-level base path off a greedy route, and the root resource as /', () => {
    const greedy = restCustomDomainEvent({
      basePath: 'orders/v2/items',
      stage: 'prod',
      resource: '/items/{proxy+}',
      apiPath: '/items/7/parts/',
      pathParameters: { proxy: '7/parts/' },
    });
    expect(restFormat.requestOf(greedy).path).toBe('/items/7/parts/');
    const root = restCustomDomainEvent({ basePath: 'orders', stage: 'prod', resource: '/', apiPath: '' });
    expect(restFormat.requestOf(root).path).toBe('/');
  });
});

describe('the API path of an HTTP API call', () => {
  it('2.0 on a custom domain: rawPath has no mapping key and no stage, so a route like the stage stays', () => {
    const event = httpV2SampleEvent({
      method: 'GET',
      stage: 'v1',
      domainName: CUSTOM_DOMAIN,
      rawPath: '/v1/words/hello',
      routeKey: 'GET /{proxy+}',
      pathParameters: { proxy: 'v1/words/hello' },
    });
    expect(httpV2Format.requestOf(event).path).toBe('/v1/words/hello');
  });

  it('2.0 on the execute-api endpoint: a named stage is read off a greedy route', () => {
    const event = httpV2SampleEvent({
      stage: 'v1',
      rawPath: '/v1/v1/words/hello',
      routeKey: 'ANY /{proxy+}',
      pathParameters: { proxy: 'v1/words/hello' },
    });
    expect(httpV2Format.requestOf(event).path).toBe('/v1/words/hello');
  });

  it('2.0 $default route: the stage is removed on execute-api only, never on a custom domain', () => {
    const onEndpoint = httpV2SampleEvent({ stage: 'v1', rawPath: '/v1/words/hello' });
    expect(httpV2Format.requestOf(onEndpoint).path).toBe('/words/hello');
    const onDomain = httpV2SampleEvent({
      stage: 'v1',
      rawPath: '/v1/words/hello',
      domainName: CUSTOM_DOMAIN,
    });
    expect(httpV2Format.requestOf(onDomain).path).toBe('/v1/words/hello');
  });

  it('1.0 on a custom domain: the mapping key in path is dropped', () => {
    const sample = httpV1SampleEvent();
    const event = httpV1SampleEvent({
      resource: '/request',
      path: '/orders/request',
      requestContext: { ...sample.requestContext, stage: 'prod', domainName: CUSTOM_DOMAIN },
    });
    expect(httpV1Format.requestOf(event).path).toBe('/request');
  });
});

describe('mapping rules under a custom domain', () => {
  const rules = compileMappingRules(
    parseConfig({
      serviceId: 's',
      mappingRules: [
        { method: 'GET', pattern: '/v1/words/{w}$', metric: 'words', delta: 1 },
        { method: 'GET', pattern: '/orders/', metric: 'orders', delta: 1 },
      ],
    }).mappingRules,
  );

  it('match the API path: neither the base path nor the stage', () => {
    const event = restCustomDomainEvent({
      basePath: 'orders',
      stage: 'v1',
      resource: '/{proxy+}',
      apiPath: '/v1/words/hello',
      pathParameters: { proxy: 'v1/words/hello' },
    });
    expect(rules.usageOf(restFormat.requestOf(event))).toEqual({ words: 1 });
  });
});

describe('apiPathOf', () => {
  it('keeps a path shorter than its template as it is, and drops a query string left in it', () => {
    expect(apiPathOf({ path: '/a', template: '/a/{b}' })).toBe('/a');
    expect(apiPathOf({ path: '/base/a/b?x=1', template: '/a/{b}' })).toBe('/a/b');
  });

  it('reads a greedy route whose value the event lacks as the $default route', () => {
    expect(apiPathOf({ path: '/prod/a', template: '/{proxy+}', stage: 'prod' })).toBe('/a');
    expect(
      apiPathOf({ path: '/prod/a', template: '/{proxy+}', stage: 'prod', domainName: CUSTOM_DOMAIN }),
    ).toBe('/prod/a');
  });
});

describe('the API path of a call spelled with empty or dot segments', () => {
  const TEMPLATE = '/v1/words/{word}.json';

  it('keeps the whole spelling, which the mapping rules resolve, when nothing stands before it', () => {
    for (const path of [
      '/v1//words/w.json',
      '/v1/x/../words/w.json',
      '/v1/./words/w.json',
      '/v1/words/w.json/',
    ])
      expect(apiPathOf({ path, template: TEMPLATE })).toBe(path);
  });

  it('drops only the stage or base path before such a spelling', () => {
    expect(apiPathOf({ path: '/prod/v1//words/w.json', template: TEMPLATE })).toBe('/v1//words/w.json');
    expect(apiPathOf({ path: '/orders/v1/x/../words/w.json', template: TEMPLATE })).toBe(
      '/v1/x/../words/w.json',
    );
  });
});
