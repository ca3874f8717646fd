/** The developer portal in the deployed stack: `-c portal={...}` adds it on REST and HTTP APIs, at $0 at rest. */
import { Template } from 'aws-cdk-lib/assertions';
import { describe, expect, it } from 'vitest';
import { PORTAL_ENV } from '../../../lambdas/portal/env';
import { priceTemplate } from '../../../scripts/cost/price';
import {
  exemptMethodIds,
  logicalId,
  methodPath,
  resourcesOfType,
  stackFromContext,
  variablesOf,
} from '../fixtures';

const TOKEN_ARN = 'arn:aws:secretsmanager:eu-west-1:123456789012:secret:portal-token-AbC123';
const PORTAL = { adminTokenSecretArn: TOKEN_ARN, mail: { sesIdentity: 'example.com' }, keyReveal: 'always' };
const BASE = { serviceId: '2555417735060', adminApiUrl: 'https://acme-admin.3scale.net' };

function synth(context: Record<string, unknown>): Template {
  return Template.fromStack(stackFromContext({ ...BASE, ...context }));
}

describe('the portal on a REST API', () => {
  const template = synth({ portal: JSON.stringify(PORTAL) });
  const functionId = logicalId(template, 'AWS::Lambda::Function', 'AccessPortalFunction');
  const fn = resourcesOfType(template, 'AWS::Lambda::Function')[functionId];

  it('serves GET /portal and ANY /portal/{proxy+} through its function, open, saying why', () => {
    const methods = Object.entries(resourcesOfType(template, 'AWS::ApiGateway::Method')).filter(
      ([, method]) => JSON.stringify(method.Properties.Integration ?? {}).includes(functionId),
    );
    expect(methods.map(([, m]) => `${m.Properties.HttpMethod} ${methodPath(template, m)}`).sort()).toEqual([
      'ANY /portal/{proxy+}',
      'GET /portal',
    ]);
    for (const [id, method] of methods) {
      expect(method.Properties.AuthorizationType).toBe('NONE');
      expect(exemptMethodIds(template)).toContain(id);
    }
  });

  it('gives the function its settings and the token secret ARN, never a secret value', () => {
    const variables = variablesOf(fn);
    expect(JSON.parse(variables[PORTAL_ENV.settings] as string)).toMatchObject({
      keyReveal: 'always',
      mailFrom: 'no-reply@example.com',
      multipleApplications: false,
    });
    expect(variables[PORTAL_ENV.adminTokenSecretArn]).toBe(TOKEN_ARN);
  });

  it('may read the admin token and send e-mail as the SES identity only', () => {
    const policies = JSON.stringify(resourcesOfType(template, 'AWS::IAM::Policy'));
    expect(policies).toContain(TOKEN_ARN);
    expect(policies).toContain(':identity/example.com');
    expect(policies).toContain('ses:SendEmail');
  });

  it('runs in the VPC, where Redis is', () => {
    expect(fn?.Properties.VpcConfig).toBeDefined();
  });

  it('costs nothing at rest', () => {
    const without = priceTemplate(synth({}).toJSON() as never).total;
    expect(priceTemplate(template.toJSON() as never).total).toBe(without);
  });
});

describe('the portal on an HTTP API', () => {
  const template = synth({ apiType: 'http', portal: JSON.stringify(PORTAL) });

  it('adds GET /portal and ANY /portal/{proxy+} routes without the authorizer', () => {
    const routes = Object.values(resourcesOfType(template, 'AWS::ApiGatewayV2::Route'))
      .map((route) => route.Properties)
      .filter((route) => String(route.RouteKey).includes('/portal'));
    expect(routes.map((route) => route.RouteKey).sort()).toEqual(['ANY /portal/{proxy+}', 'GET /portal']);
    for (const route of routes) expect(route.AuthorizationType ?? 'NONE').toBe('NONE');
  });
});

describe('without the portal prop', () => {
  it('has no portal function', () => {
    const ids = Object.keys(resourcesOfType(synth({}), 'AWS::Lambda::Function'));
    expect(ids.filter((id) => id.includes('Portal'))).toEqual([]);
  });

  it('refuses a portal without adminApiUrl, naming it', () => {
    expect(() => stackFromContext({ serviceId: '2555417735060', portal: JSON.stringify(PORTAL) })).toThrow(
      /adminApiUrl/,
    );
  });
});
