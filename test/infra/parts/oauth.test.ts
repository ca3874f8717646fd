import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { MockIntegration, RestApi } from 'aws-cdk-lib/aws-apigateway';
import { Secret } from 'aws-cdk-lib/aws-secretsmanager';
import { describe, expect, it } from 'vitest';
import { ENV } from '../../../core/settings/config';
import { DISCOVERY_PATH, JWKS_PATH, TOKEN_PATH } from '../../../lambdas/token/routes';
import { ApiAccessAuthorizer } from '../../../lib/api-access-authorizer';
import { bundleDirectory } from '../../../lib/lambda-bundles';
import {
  exemptMethodIds,
  logicalId,
  methodPath,
  type Resources,
  resourcesOfType,
  stackFromContext,
  testApp,
  variablesOf,
} from '../fixtures';

const SERVICE = '2555417735062';
const EXTERNAL = {
  oidcIssuer: 'https://idp.example.com/realms/api',
  oidcJwksUrl: 'https://idp.example.com/realms/api/protocol/openid-connect/certs',
  oidcAudience: 'words-api',
};

const builtIn = Template.fromStack(stackFromContext({ serviceId: SERVICE, credentialMode: 'oauth' }));
const external = Template.fromStack(
  stackFromContext({ serviceId: SERVICE, credentialMode: 'oauth', ...EXTERNAL }),
);

type Statement = { Effect: string; Action: string | string[]; Principal?: unknown; Condition?: unknown };

function actionsOf(statement: Statement): string[] {
  return Array.isArray(statement.Action) ? statement.Action : [statement.Action];
}

/** Every role that an identity policy of the template allows `action`, by the policy's Roles refs. */
function rolesAllowed(template: Template, action: string): string[] {
  const policies = resourcesOfType(template, 'AWS::IAM::Policy');
  return Object.values(policies).flatMap((policy) => {
    const document = policy.Properties.PolicyDocument as { Statement: Statement[] };
    const allows = document.Statement.some(
      (statement) =>
        statement.Effect === 'Allow' &&
        actionsOf(statement).some((a) => a === action || a === 'kms:*' || a === '*'),
    );
    return allows ? (policy.Properties.Roles as { Ref: string }[]).map((role) => role.Ref) : [];
  });
}

/** The properties of one resource, or a clear failure. */
function propertiesOf(resources: Resources, id: string): Record<string, unknown> {
  const resource = resources[id];
  if (resource === undefined) throw new Error(`no resource ${id}`);
  return resource.Properties;
}

/** `METHOD /path` of each method the authorizer leaves open, with its resource. */
function openRoutes(template: Template): Record<string, Resources[string]> {
  const methods = resourcesOfType(template, 'AWS::ApiGateway::Method');
  return Object.fromEntries(
    exemptMethodIds(template).map((id) => {
      const method = methods[id] as Resources[string];
      return [`${method.Properties.HttpMethod} ${methodPath(template, method)}`, method];
    }),
  );
}

/** Logical ids a resource's properties and DependsOn point at. */
function dependenciesOf(resource: { Properties?: unknown; DependsOn?: string | string[] }): string[] {
  const found = new Set<string>();
  const walk = (value: unknown): void => {
    if (Array.isArray(value)) value.forEach(walk);
    else if (typeof value === 'object' && value !== null) {
      for (const [key, inner] of Object.entries(value)) {
        if (key === 'Ref' && typeof inner === 'string') found.add(inner);
        else if (key === 'Fn::GetAtt' && Array.isArray(inner)) found.add(String(inner[0]));
        else walk(inner);
      }
    }
  };
  walk(resource.Properties);
  for (const id of [resource.DependsOn ?? []].flat()) found.add(id);
  return [...found];
}

/** A dependency cycle among the template's resources, as CloudFormation would refuse it; [] when none. */
function dependencyCycle(template: Template): string[] {
  const resources = template.toJSON().Resources as Record<
    string,
    { Properties?: unknown; DependsOn?: string[] }
  >;
  const state = new Map<string, 'visiting' | 'done'>();
  const visit = (id: string, path: string[]): string[] => {
    if (state.get(id) === 'done' || !(id in resources)) return [];
    if (state.get(id) === 'visiting') return [...path, id];
    state.set(id, 'visiting');
    for (const next of dependenciesOf(resources[id] as never)) {
      const cycle = visit(next, [...path, id]);
      if (cycle.length > 0) return cycle;
    }
    state.set(id, 'done');
    return [];
  };
  for (const id of Object.keys(resources)) {
    const cycle = visit(id, []);
    if (cycle.length > 0) return cycle;
  }
  return [];
}

describe('oauth mode with the built-in issuer (-c credentialMode=oauth)', () => {
  const keyId = logicalId(builtIn, 'AWS::KMS::Key', 'AccessTokenSigningKey');
  const tokenFunctionId = logicalId(builtIn, 'AWS::Lambda::Function', 'AccessTokenFunction');
  const functions = resourcesOfType(builtIn, 'AWS::Lambda::Function');
  const tokenFunction = functions[tokenFunctionId];
  const authorizerId = logicalId(builtIn, 'AWS::Lambda::Function', 'AccessAuthorizerFunction');
  const tokenRoleId = (propertiesOf(functions, tokenFunctionId).Role as { 'Fn::GetAtt': string[] })[
    'Fn::GetAtt'
  ][0];

  it('signs with a KMS asymmetric P-256 key, deleted with the stack after a 7-day waiting period', () => {
    builtIn.resourceCountIs('AWS::KMS::Key', 1);
    builtIn.hasResource('AWS::KMS::Key', {
      Properties: { KeySpec: 'ECC_NIST_P256', KeyUsage: 'SIGN_VERIFY', PendingWindowInDays: 7 },
      DeletionPolicy: 'Delete',
    });
  });

  it('lets only the token function sign: its role alone may kms:Sign, and the key policy denies everyone else', () => {
    expect(rolesAllowed(builtIn, 'kms:Sign')).toEqual([tokenRoleId]);
    const tokenPolicy = Object.values(resourcesOfType(builtIn, 'AWS::IAM::Policy')).find((policy) =>
      JSON.stringify(policy.Properties.Roles).includes(tokenRoleId),
    );
    const kmsStatements = (
      (tokenPolicy as Resources[string]).Properties.PolicyDocument as { Statement: Statement[] }
    ).Statement.filter((statement) => actionsOf(statement).some((action) => action.startsWith('kms:')));
    expect(kmsStatements).toEqual([
      expect.objectContaining({
        Action: ['kms:Sign', 'kms:GetPublicKey'],
        Resource: { 'Fn::GetAtt': [keyId, 'Arn'] },
      }),
    ]);
    const keyPolicy = (
      propertiesOf(resourcesOfType(builtIn, 'AWS::KMS::Key'), keyId).KeyPolicy as {
        Statement: Statement[];
      }
    ).Statement;
    expect(keyPolicy).toContainEqual(
      expect.objectContaining({
        Effect: 'Deny',
        Action: 'kms:Sign',
        Principal: { AWS: '*' },
        Condition: { ArnNotEquals: { 'aws:PrincipalArn': { 'Fn::GetAtt': [tokenRoleId, 'Arn'] } } },
      }),
    );
    // Besides the account's administration statement, the key policy allows no one to sign.
    const allowsSign = keyPolicy.filter(
      (statement) => statement.Effect === 'Allow' && actionsOf(statement).includes('kms:Sign'),
    );
    expect(allowsSign).toEqual([]);
  });

  it('serves POST /oauth/token, the JWKS and the discovery document through the token function, without the authorizer', () => {
    const open = openRoutes(builtIn);
    expect(Object.keys(open).sort()).toEqual(
      [
        `POST ${TOKEN_PATH}`,
        `GET ${JWKS_PATH}`,
        `GET ${DISCOVERY_PATH}`,
        'GET /docs',
        'GET /docs/{file}',
      ].sort(),
    );
    for (const route of [`POST ${TOKEN_PATH}`, `GET ${JWKS_PATH}`, `GET ${DISCOVERY_PATH}`]) {
      expect(open[route]?.Properties).toMatchObject({
        AuthorizationType: 'NONE',
        Integration: { Type: 'AWS_PROXY' },
      });
      expect(open[route]?.Properties.AuthorizerId).toBeUndefined();
      expect(JSON.stringify(open[route]?.Properties.Integration)).toContain(tokenFunctionId);
    }
  });

  it('keeps every other method behind the authorizer, with no identity source: a token travels in the Authorization header or the access_token parameter', () => {
    const open = new Set(exemptMethodIds(builtIn));
    const others = Object.entries(resourcesOfType(builtIn, 'AWS::ApiGateway::Method')).filter(
      ([id, method]) => !open.has(id) && method.Properties.HttpMethod !== 'OPTIONS',
    );
    expect(others.length).toBeGreaterThanOrEqual(3);
    for (const [, method] of others) expect(method.Properties.AuthorizationType).toBe('CUSTOM');
    const [authorizer] = Object.values(resourcesOfType(builtIn, 'AWS::ApiGateway::Authorizer'));
    expect(authorizer?.Properties).toMatchObject({ Type: 'REQUEST', AuthorizerResultTtlInSeconds: 0 });
    expect(authorizer?.Properties.IdentitySource).toBeUndefined();
  });

  it("gives the token function the signing key, the platform and Redis, in the VPC, and the API's own URL as the issuer", () => {
    const variables = variablesOf(tokenFunction);
    expect(variables[ENV.tokenSigningKeyId]).toEqual({ 'Fn::GetAtt': [keyId, 'Arn'] });
    expect(variables[ENV.platformCredentialSecretArn]).toBeDefined();
    expect(variables[ENV.redisHost]).toBeDefined();
    expect(variables[ENV.topicArn]).toBeUndefined();
    expect(tokenFunction?.Properties.VpcConfig).toBeDefined();
    const apiId = logicalId(builtIn, 'AWS::ApiGateway::RestApi', 'Api');
    const issuer = {
      'Fn::Join': [
        '',
        [
          'https://',
          { Ref: apiId },
          '.execute-api.',
          { Ref: 'AWS::Region' },
          '.',
          { Ref: 'AWS::URLSuffix' },
          '/prod',
        ],
      ],
    };
    expect(variables[ENV.oidcIssuer]).toEqual(issuer);
    expect(variablesOf(functions[authorizerId])[ENV.oidcIssuer]).toEqual(issuer);
    expect(variablesOf(functions[authorizerId])[ENV.oidcJwksUrl]).toBeUndefined();
  });

  it('runs the prebuilt token bundle, which leaves the KMS client to the Lambda runtime', () => {
    const directory = bundleDirectory('token');
    const code = readFileSync(path.join(directory, 'index.js'), 'utf8');
    expect(code).toMatch(/require\("@aws-sdk\/client-kms"\)/);
    const bundle = require(path.join(directory, 'index.js')) as { handler?: unknown };
    expect(typeof bundle.handler).toBe('function');
  });

  it('has no dependency cycle between the API, its methods and the functions that hold its URL', () => {
    expect(dependencyCycle(builtIn)).toEqual([]);
  });

  it('answers a missing token with the Bearer challenge of the issuer', () => {
    const [unauthorized] = Object.values(resourcesOfType(builtIn, 'AWS::ApiGateway::GatewayResponse')).filter(
      (response) => response.Properties.ResponseType === 'UNAUTHORIZED',
    );
    const challenge = JSON.stringify(
      ((unauthorized as Resources[string]).Properties.ResponseParameters as Record<string, unknown>)[
        'gatewayresponse.header.WWW-Authenticate'
      ],
    );
    expect(challenge).toContain('Bearer realm=');
    expect(challenge).toContain('error=\\"invalid_token\\"');
  });

  it('outputs the token URL', () => {
    expect(JSON.stringify(builtIn.toJSON().Outputs.TokenUrl.Value)).toContain(TOKEN_PATH);
  });

  it('takes a given oidcIssuer (a custom domain) as the issuer, still deploying the key and the token routes', () => {
    const issuer = 'https://api.example.com/words';
    const template = Template.fromStack(
      stackFromContext({ serviceId: SERVICE, credentialMode: 'oauth', oidcIssuer: issuer }),
    );
    template.resourceCountIs('AWS::KMS::Key', 1);
    const tokenId = logicalId(template, 'AWS::Lambda::Function', 'AccessTokenFunction');
    expect(variablesOf(resourcesOfType(template, 'AWS::Lambda::Function')[tokenId])[ENV.oidcIssuer]).toBe(
      issuer,
    );
    expect(Object.keys(openRoutes(template))).toContain(`POST ${TOKEN_PATH}`);
  });
});

describe('oauth mode with an external issuer (-c oidcIssuer -c oidcJwksUrl -c oidcAudience)', () => {
  it('deploys no key, no token function and no token routes', () => {
    external.resourceCountIs('AWS::KMS::Key', 0);
    const functions = Object.keys(resourcesOfType(external, 'AWS::Lambda::Function'));
    expect(functions.filter((id) => id.includes('Token'))).toEqual([]);
    expect(Object.keys(openRoutes(external)).sort()).toEqual(['GET /docs', 'GET /docs/{file}']);
    expect(rolesAllowed(external, 'kms:Sign')).toEqual([]);
    expect(external.toJSON().Outputs.TokenUrl).toBeUndefined();
  });

  it("gives the authorizer the provider's issuer, keys URL and audience", () => {
    const authorizerId = logicalId(external, 'AWS::Lambda::Function', 'AccessAuthorizerFunction');
    const variables = variablesOf(resourcesOfType(external, 'AWS::Lambda::Function')[authorizerId]);
    expect(variables).toMatchObject({
      [ENV.credentialMode]: 'oauth',
      [ENV.oidcIssuer]: EXTERNAL.oidcIssuer,
      [ENV.oidcJwksUrl]: EXTERNAL.oidcJwksUrl,
      [ENV.oidcAudience]: EXTERNAL.oidcAudience,
    });
  });

  it("reaches the provider's keys over HTTPS through the VPC's NAT, and opens another port when the keys URL names one", () => {
    const egress = (template: Template) =>
      Object.values(resourcesOfType(template, 'AWS::EC2::SecurityGroup')).flatMap(
        (group) => (group.Properties.SecurityGroupEgress as { FromPort: number }[] | undefined) ?? [],
      );
    expect(egress(external).map((rule) => rule.FromPort)).toContain(443);
    external.resourceCountIs('AWS::EC2::NatGateway', 2);
    const onPort = Template.fromStack(
      stackFromContext({
        serviceId: SERVICE,
        credentialMode: 'oauth',
        ...EXTERNAL,
        oidcJwksUrl: 'https://idp.example.com:8443/certs',
      }),
    );
    expect(egress(onPort)).toContainEqual(expect.objectContaining({ FromPort: 8443, ToPort: 8443 }));
  });

  it('refuses keys or an issuer over http, which could be replaced on the way', () => {
    expect(() =>
      stackFromContext({
        serviceId: SERVICE,
        credentialMode: 'oauth',
        ...EXTERNAL,
        oidcJwksUrl: 'http://idp/certs',
      }),
    ).toThrow(/oidcJwksUrl must be an https:\/\/ URL in AWS/);
    expect(() =>
      stackFromContext({ serviceId: SERVICE, credentialMode: 'oauth', oidcIssuer: 'http://api.example.com' }),
    ).toThrow(/oidcIssuer must be an https:\/\/ URL in AWS/);
  });

  it('still needs the issuer its tokens name', () => {
    expect(() =>
      stackFromContext({ serviceId: SERVICE, credentialMode: 'oauth', oidcJwksUrl: EXTERNAL.oidcJwksUrl }),
    ).toThrow(/oidcIssuer is required in oauth mode/);
  });
});

describe('the built-in issuer on provider APIs', () => {
  function provider(props: { oidcIssuer?: string } = {}) {
    const stack = new Stack(testApp(), 'Provider');
    const access = new ApiAccessAuthorizer(stack, 'Access', {
      serviceId: SERVICE,
      credentialMode: 'oauth',
      platformCredential: new Secret(stack, 'Credential'),
      docs: false,
      ...props,
    });
    const api = (id: string) => {
      const restApi = new RestApi(stack, id);
      restApi.root.addResource('orders').addMethod('GET', new MockIntegration());
      return restApi;
    };
    return { stack, access, api };
  }

  it('exposes the token function and the signing key', () => {
    const { access } = provider();
    expect(access.tokenFunction).toBeDefined();
    expect(access.tokenSigningKey).toBeDefined();
  });

  it('serves one API when its URL is the issuer, and says how to serve several', () => {
    const { access, api } = provider();
    access.protect(api('First'));
    expect(() => access.protect(api('Second'))).toThrow(
      /serves one API: to protect Provider\/Second too, set oidcIssuer/,
    );
  });

  it('adds the token routes to every API when oidcIssuer names the issuer', () => {
    const { stack, access, api } = provider({ oidcIssuer: 'https://api.example.com' });
    access.protect(api('First'));
    access.protect(api('Second'));
    const template = Template.fromStack(stack);
    const methods = resourcesOfType(template, 'AWS::ApiGateway::Method');
    const tokenRoutes = exemptMethodIds(template).filter(
      (id) => methodPath(template, methods[id] as Resources[string]) === TOKEN_PATH,
    );
    expect(tokenRoutes).toHaveLength(2);
    expect(dependencyCycle(template)).toEqual([]);
  });

  it('fails synthesis, naming the way out, when no API was protected to take the issuer URL from', () => {
    const { stack } = provider();
    expect(() => Template.fromStack(stack)).toThrow(
      /protect a RestApi or an HttpApi with this ApiAccessAuthorizer, or set oidcIssuer/,
    );
  });
});
