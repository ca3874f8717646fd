/** The SOAP route in the deployed stack: `-c soapBackendUrl=https://...` adds it, nothing SOAP without. */
import { createRequire } from 'node:module';
import * as path from 'node:path';
import { Match, Template } from 'aws-cdk-lib/assertions';
import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import { describe, expect, it } from 'vitest';
import { SOAP_ENV } from '../../core/soap/settings';
import { bundleDirectory } from '../../lib/lambda-bundles';
import { type Resources, resourcesOfType, stackFromContext } from './fixtures';

const BACKEND = 'https://soap.example.com/quotes';

function synth(context: Record<string, unknown> = {}) {
  return Template.fromStack(stackFromContext({ serviceId: '2555417735060', ...context }));
}

type FunctionProperties = {
  Environment: { Variables: Record<string, unknown> };
  VpcConfig?: unknown;
  Role: { 'Fn::GetAtt': [string, string] };
};

function functionsOf(template: Template): Record<string, FunctionProperties> {
  return Object.fromEntries(
    Object.entries(resourcesOfType(template, 'AWS::Lambda::Function')).map(([id, resource]) => [
      id,
      resource.Properties as unknown as FunctionProperties,
    ]),
  );
}

function onlyFunction(template: Template, prefix: string): [string, FunctionProperties] {
  const found = Object.entries(functionsOf(template)).filter(([id]) => id.startsWith(prefix));
  expect(found).toHaveLength(1);
  return found[0] as [string, FunctionProperties];
}

function resourcePaths(template: Template): string[] {
  return Object.values(resourcesOfType(template, 'AWS::ApiGateway::Resource')).map((resource) =>
    String(resource.Properties.PathPart),
  );
}

function policyActionsOf(template: Template, roleId: string): string[] {
  const policies: Resources = resourcesOfType(template, 'AWS::IAM::Policy');
  return Object.values(policies)
    .filter((policy) => JSON.stringify(policy.Properties.Roles).includes(roleId))
    .flatMap(
      (policy) =>
        (policy.Properties.PolicyDocument as { Statement: { Action: string | string[] }[] }).Statement,
    )
    .flatMap((statement) => [statement.Action].flat());
}

describe('with -c soapBackendUrl', () => {
  const template = synth({ soapBackendUrl: BACKEND });
  const [soapId, soap] = onlyFunction(template, 'AccessSoapProxyFunction');
  const [, authorizer] = onlyFunction(template, 'AccessAuthorizerFunction');

  it('serves POST /soap through the proxy function, without the authorizer, and says why', () => {
    expect(resourcePaths(template)).toContain('soap');
    const methods = Object.values(resourcesOfType(template, 'AWS::ApiGateway::Method')).filter((method) =>
      JSON.stringify(method.Properties.Integration ?? {}).includes(soapId),
    );
    expect(methods).toHaveLength(1);
    expect(methods[0]?.Properties).toMatchObject({
      HttpMethod: 'POST',
      AuthorizationType: 'NONE',
      Integration: { Type: 'AWS_PROXY', IntegrationHttpMethod: 'POST' },
    });
    template.hasResource('AWS::ApiGateway::Method', {
      Metadata: { ApiAccessAuthorizerExempt: Match.stringLikeRegexp('SOAP access proxy') },
    });
  });

  it('runs the proxy in the VPC with the authorizer environment and the SOAP settings', () => {
    expect(soap.VpcConfig).toEqual(authorizer.VpcConfig);
    expect(soap.VpcConfig).toBeDefined();
    expect(soap.Environment.Variables).toEqual({
      ...authorizer.Environment.Variables,
      [SOAP_ENV.soapBackendUrl]: BACKEND,
      [SOAP_ENV.soapNamespace]: 'urn:apigw-access-management:soap',
      [SOAP_ENV.soapBackendTimeoutMs]: '10000',
      [SOAP_ENV.soapMaxBodyBytes]: String(1024 * 1024),
      [SOAP_ENV.soapMaxDepth]: '64',
      [SOAP_ENV.soapMaxAttributes]: '256',
      [SOAP_ENV.soapMaxNamespaces]: '256',
    });
  });

  it('grants the proxy what the authorizer has: publish usage, read the provider key and Redis AUTH', () => {
    const actions = policyActionsOf(template, soap.Role['Fn::GetAtt'][0]);
    expect(actions).toContain('sns:Publish');
    expect(actions).toContain('secretsmanager:GetSecretValue');
  });

  it('lets API Gateway invoke the proxy', () => {
    template.hasResourceProperties('AWS::Lambda::Permission', {
      Action: 'lambda:InvokeFunction',
      FunctionName: { 'Fn::GetAtt': [soapId, 'Arn'] },
      Principal: 'apigateway.amazonaws.com',
    });
  });

  it('takes the path and the proxy settings from context', () => {
    const tuned = synth({
      soapBackendUrl: BACKEND,
      soapPath: '/services/quotes',
      soapNamespace: 'urn:example:access',
      soapBackendTimeoutMs: '5000',
      soapMaxDepth: '32',
    });
    expect(resourcePaths(tuned)).toEqual(expect.arrayContaining(['services', 'quotes']));
    expect(resourcePaths(tuned)).not.toContain('soap');
    const [, fn] = onlyFunction(tuned, 'AccessSoapProxyFunction');
    expect(fn.Environment.Variables).toMatchObject({
      [SOAP_ENV.soapNamespace]: 'urn:example:access',
      [SOAP_ENV.soapBackendTimeoutMs]: '5000',
      [SOAP_ENV.soapMaxDepth]: '32',
    });
  });
});

describe('the SOAP settings it refuses', () => {
  it('a backend over http: the envelope carries the credential', () => {
    expect(() => synth({ soapBackendUrl: 'http://soap.example.com/quotes' })).toThrow(
      /soapBackendUrl.*https/,
    );
  });

  it('a path that is not literal', () => {
    expect(() => synth({ soapBackendUrl: BACKEND, soapPath: '/soap/{id}' })).toThrow(/soapPath/);
  });

  it('SOAP tuning without a backend, rather than ignoring it', () => {
    expect(() => synth({ soapPath: '/soap' })).toThrow(/Missing context soapBackendUrl/);
  });
});

describe('without soapBackendUrl', () => {
  it('creates nothing SOAP: no function, no route, no SOAP setting anywhere', () => {
    const template = synth();
    expect(Object.keys(functionsOf(template)).filter((id) => id.includes('Soap'))).toEqual([]);
    expect(resourcePaths(template)).not.toContain('soap');
    expect(JSON.stringify(template.toJSON())).not.toContain('SOAP_');
  });
});

describe('the prebuilt soap bundle', () => {
  it('loads on its own and answers a Receiver Fault when it cannot start (no configuration here)', async () => {
    const bundle = createRequire(__filename)(path.join(bundleDirectory('soap'), 'index.js')) as {
      handler: (event: Partial<APIGatewayProxyEvent>) => Promise<APIGatewayProxyResult>;
    };
    const result = await bundle.handler({
      headers: { 'content-type': 'application/soap+xml' },
      body: '<x/>',
      isBase64Encoded: false,
    });
    expect(result.statusCode).toBe(500);
    expect(result.body).toContain('<env:Value>env:Receiver</env:Value>');
    expect(result.body).toContain('t:proxy_error');
  });
});
