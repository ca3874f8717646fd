import { describe, expect, it } from 'vitest';
import { findRoute, parseRoute } from '../../contract/routes';
import { ConfigError } from '../../core/settings/config';
import { evaluateAuthorizerResult, MalformedAuthorizerResultError } from '../../local/policy';

const ARN = 'arn:aws:execute-api:us-east-1:123456789012:local/prod/GET/v1/words/hello.json';

function result(statements: unknown, context?: unknown) {
  return {
    principalId: 'app-1',
    policyDocument: { Version: '2012-10-17', Statement: statements },
    ...(context !== undefined && { context }),
  };
}

const allow = (resource: unknown) => ({ Effect: 'Allow', Action: 'execute-api:Invoke', Resource: resource });
const deny = (resource: unknown) => ({ Effect: 'Deny', Action: 'execute-api:Invoke', Resource: resource });

describe('authorizer policy evaluation against the methodArn', () => {
  it.each([
    ['exact Allow', [allow(ARN)], 'allow'],
    ['Allow by wildcard', [allow('arn:aws:execute-api:us-east-1:123456789012:local/prod/*')], 'allow'],
    ['Allow by ? wildcard', [allow(ARN.replace('GET', 'G?T'))], 'allow'],
    ['Allow for another path only', [allow(ARN.replace('hello', 'other'))], 'implicit_deny'],
    ['Allow for another method only', [allow(ARN.replace('GET', 'POST'))], 'implicit_deny'],
    ['Deny', [deny(ARN)], 'explicit_deny'],
    ['Deny wins over Allow', [allow(ARN), deny('*')], 'explicit_deny'],
    [
      'Allow of another action',
      [{ Effect: 'Allow', Action: 's3:GetObject', Resource: ARN }],
      'implicit_deny',
    ],
    ['Allow of execute-api:*', [{ Effect: 'Allow', Action: 'execute-api:*', Resource: [ARN] }], 'allow'],
    ['NotResource Allow', [{ Effect: 'Allow', Action: '*', NotResource: 'arn:aws:s3:::*' }], 'allow'],
    ['resource case matters', [allow(ARN.toUpperCase())], 'implicit_deny'],
  ])('%s -> %s', (_, statements, decision) => {
    expect(evaluateAuthorizerResult(result(statements), ARN).decision).toBe(decision);
  });

  it('accepts a single statement object and returns the principal and context', () => {
    const verdict = evaluateAuthorizerResult(
      result(allow(ARN), { applicationId: 'app-1', remaining: 4, soft: false }),
      ARN,
    );
    expect(verdict).toEqual({
      decision: 'allow',
      principalId: 'app-1',
      context: { applicationId: 'app-1', remaining: 4, soft: false },
    });
  });

  it.each([
    ['no principalId', { policyDocument: { Statement: [allow(ARN)] } }],
    ['no policyDocument', { principalId: 'p' }],
    ['an empty Statement list', result([])],
    ['an Effect other than Allow or Deny', result([{ Effect: 'allow', Action: '*', Resource: '*' }])],
    ['a statement without Resource', result([{ Effect: 'Allow', Action: '*' }])],
    ['a nested object in the context', result([allow(ARN)], { usage: { hits: 1 } })],
    ['a null in the context', result([allow(ARN)], { plan: null })],
    ['not an object at all', 'Allow'],
  ])('refuses a result with %s as API Gateway does (500)', (_, malformed) => {
    expect(() => evaluateAuthorizerResult(malformed, ARN)).toThrow(MalformedAuthorizerResultError);
  });
});

describe('API Gateway resources and route matching', () => {
  const routes = [
    'GET /v1/words/{word}.json',
    'POST /v1/words/{word}.json',
    'GET /v1/words/special.json',
    'GET /v1/{section}',
    'ANY /{proxy+}',
    'GET /',
  ].map((text, i) => parseRoute(text, `routes[${i}]`));

  it.each([
    ['GET', '/v1/words/hello.json', 'GET /v1/words/{word}.json', { word: 'hello' }],
    ['GET', '/v1/words/special.json', 'GET /v1/words/special.json', null],
    ['POST', '/v1/words/hello.json', 'POST /v1/words/{word}.json', { word: 'hello' }],
    ['GET', '/v1/words/h%C3%A9llo.json', 'GET /v1/words/{word}.json', { word: 'héllo' }],
    ['GET', '/v1/about', 'GET /v1/{section}', { section: 'about' }],
    ['DELETE', '/v1/words/hello.json', 'ANY /{proxy+}', { proxy: 'v1/words/hello.json' }],
    ['GET', '/', 'GET /', null],
  ])('%s %s -> %s', (method, path, expected, pathParameters) => {
    const match = findRoute(routes, method, path);
    expect(match && `${match.route.method} ${match.route.resource}`).toBe(expected);
    expect(match?.pathParameters).toEqual(pathParameters);
  });

  it('finds no route for a path or method the API does not have', () => {
    const strict = ['GET /v1/words/{word}.json'].map((text) => parseRoute(text, 'routes[0]'));
    expect(findRoute(strict, 'GET', '/v1/words/hello.xml')).toBeUndefined();
    expect(findRoute(strict, 'GET', '/v1/words/hello.json/more')).toBeUndefined();
    expect(findRoute(strict, 'POST', '/v1/words/hello.json')).toBeUndefined();
    expect(findRoute(strict, 'GET', '/v1/words')).toBeUndefined();
  });

  it.each([
    ['GET v1/words', 'resource must start with /'],
    ['FETCH /v1', 'unknown HTTP method'],
    ['GET /{proxy+}/more', 'greedy'],
    ['GET /v1/{a}/{a}', 'repeats a path parameter'],
    ['GET /v1/{word', 'unbalanced braces'],
    ['GET /v1/a b', 'must be "METHOD /resource"'],
    ['GET /v1/a%zz', 'invalid path segment'],
    ['GET', 'must be "METHOD /resource"'],
  ])('refuses the route %j naming the setting', (text, problem) => {
    expect(() => parseRoute(text, 'gateway.routes[3]')).toThrow(ConfigError);
    expect(() => parseRoute(text, 'gateway.routes[3]')).toThrow(/gateway\.routes\[3\]/);
    expect(() => parseRoute(text, 'gateway.routes[3]')).toThrow(problem);
  });
});
