import { Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { MockIntegration, RestApi } from 'aws-cdk-lib/aws-apigateway';
import { Secret } from 'aws-cdk-lib/aws-secretsmanager';
import type { APIGatewayProxyEvent } from 'aws-lambda';
import { describe, expect, it } from 'vitest';
import { DOCS_ENV, DOCS_PATH } from '../../../contract/docs';
import { ENV } from '../../../core/settings/config';
import { docsHandlerFromEnv } from '../../../lambdas/docs/index';
import { ApiAccessAuthorizer } from '../../../lib/api-access-authorizer';
import { bundleDirectory } from '../../../lib/lambda-bundles';
import {
  exemptMethodIds,
  methodPath,
  resourcesOfType,
  stackFromContext,
  testApp,
  variablesOf,
} from '../fixtures';

const template = Template.fromStack(stackFromContext({ serviceId: '2555417735060' }));
const methods = resourcesOfType(template, 'AWS::ApiGateway::Method');
const functions = resourcesOfType(template, 'AWS::Lambda::Function');

const docsFunctionId = (() => {
  const ids = Object.keys(functions).filter((id) => id.includes('DocsFunction'));
  expect(ids).toHaveLength(1);
  return ids[0] as string;
})();
const docsEnvironment = variablesOf(functions[docsFunctionId]);

function docsCall(file?: string): APIGatewayProxyEvent {
  return {
    httpMethod: 'GET',
    path: file === undefined ? DOCS_PATH : `${DOCS_PATH}/${file}`,
    headers: {},
    pathParameters: file === undefined ? null : { file },
  } as unknown as APIGatewayProxyEvent;
}

describe('AccessDocs in the stack', () => {
  it('serves GET /docs and GET /docs/{file} without an authorizer, through the docs function', () => {
    const open = exemptMethodIds(template);
    expect(
      open
        .map((id) => `${methods[id]?.Properties.HttpMethod} ${methodPath(template, methods[id] as never)}`)
        .sort(),
    ).toEqual(['GET /docs', 'GET /docs/{file}']);
    for (const id of open) {
      expect(methods[id]?.Properties).toMatchObject({
        AuthorizationType: 'NONE',
        Integration: { Type: 'AWS_PROXY' },
      });
      expect(methods[id]?.Properties.AuthorizerId).toBeUndefined();
      expect(JSON.stringify(methods[id]?.Properties.Integration)).toContain(docsFunctionId);
    }
  });

  it('leaves every other method behind the authorizer (CORS preflights aside)', () => {
    const open = new Set(exemptMethodIds(template));
    const others = Object.entries(methods).filter(
      ([id, method]) => !open.has(id) && method.Properties.HttpMethod !== 'OPTIONS',
    );
    expect(others.length).toBeGreaterThanOrEqual(3);
    for (const [, method] of others) expect(method.Properties.AuthorizationType).toBe('CUSTOM');
  });

  it('gives the docs function the protected routes and the stage, and no secret, Redis or topic', () => {
    expect(JSON.parse(docsEnvironment[DOCS_ENV.routes] as string)).toEqual([
      'ANY /',
      'ANY /{proxy+}',
      'GET /v1/words/{word}',
    ]);
    expect(docsEnvironment[DOCS_ENV.basePath]).toBe('/prod');
    for (const name of [
      ENV.platformCredentialSecretArn,
      ENV.redisHost,
      ENV.redisAuthSecretArn,
      ENV.topicArn,
    ]) {
      expect(docsEnvironment[name]).toBeUndefined();
    }
    expect(functions[docsFunctionId]?.Properties.VpcConfig).toBeUndefined();
  });

  it("runs the bundle on its environment: the page, Swagger UI's files and a document of every protected route", () => {
    const env = Object.fromEntries(
      Object.entries(docsEnvironment).map(([name, value]) => [name, String(value)]),
    );
    const docs = docsHandlerFromEnv(env, `${bundleDirectory('docs')}/swagger-ui`);
    expect(docs(docsCall()).body).toContain('swagger-ui-bundle.js');
    expect(docs(docsCall('swagger-ui-bundle.js')).statusCode).toBe(200);
    const document = JSON.parse(docs(docsCall('swagger.json')).body);
    expect(document).toMatchObject({ swagger: '2.0', basePath: '/prod', info: { version: 'v1' } });
    expect(Object.keys(document.paths)).toEqual(expect.arrayContaining(['/', '/v1/words/{word}']));
    expect(document.paths['/v1/words/{word}'].get['x-metrics']).toBeDefined();
    expect(Object.values(document.securityDefinitions)).toEqual([
      expect.objectContaining({ type: 'apiKey', in: 'header', name: 'apikey' }),
    ]);
  });

  it('outputs the docs URL', () => {
    template.hasOutput('DocsUrl', {});
    expect(JSON.stringify(template.toJSON().Outputs.DocsUrl.Value)).toContain('/docs');
  });

  it('is off with docs=false: no docs resource, function or output, and every method protected', () => {
    const off = Template.fromStack(stackFromContext({ serviceId: '2555417735060', docs: false }));
    expectNoDocumentation(off);
    expect(off.toJSON().Outputs.DocsUrl).toBeUndefined();
  });
});

/** No docs resource, no docs function, and no method left open. */
function expectNoDocumentation(template: Template): void {
  expect(exemptMethodIds(template)).toEqual([]);
  expect(
    Object.keys(resourcesOfType(template, 'AWS::Lambda::Function')).filter((id) => id.includes('Docs')),
  ).toEqual([]);
  expect(
    Object.values(resourcesOfType(template, 'AWS::ApiGateway::Resource')).map((r) => r.Properties.PathPart),
  ).not.toContain('docs');
}

describe('AccessDocs on a provider API', () => {
  function providerStack(build: (api: RestApi) => void, { docs }: { docs?: boolean } = { docs: true }) {
    const stack = new Stack(testApp(), 'Provider');
    const access = new ApiAccessAuthorizer(stack, 'Access', {
      serviceId: '1',
      platformCredential: new Secret(stack, 'Credential'),
      docs,
    });
    const api = new RestApi(stack, 'Api');
    build(api);
    return { stack, access, api };
  }

  it('is opt-in for a library user: no docs route, function or open method without docs: true', () => {
    const { stack, access, api } = providerStack(
      (api) => api.root.addProxy({ defaultIntegration: new MockIntegration() }),
      {},
    );
    access.protect(api);
    expectNoDocumentation(Template.fromStack(stack));
  });

  it('refuses an API that has its own /docs, naming the way out', () => {
    const { access, api } = providerStack((api) =>
      api.root.addResource('docs').addMethod('GET', new MockIntegration()),
    );
    expect(() => access.protect(api)).toThrow(
      /already has a \/docs resource: turn the access documentation off \(docs: false\)/,
    );
  });

  it('documents the routes added after protect()', () => {
    const { stack, access, api } = providerStack(() => undefined);
    access.protect(api);
    api.root.addResource('orders').addMethod('POST', new MockIntegration());
    const provider = Template.fromStack(stack);
    const docsFunction = Object.entries(resourcesOfType(provider, 'AWS::Lambda::Function')).find(([id]) =>
      id.includes('DocsFunction'),
    );
    const variables = variablesOf(docsFunction?.[1]);
    expect(JSON.parse(variables[DOCS_ENV.routes] as string)).toEqual(['POST /orders']);
  });
});
