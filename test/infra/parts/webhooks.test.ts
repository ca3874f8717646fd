/** The webhook receiver in the deployed stack: `-c webhooks=true` adds it, nothing of it without. */
import * as path from 'node:path';
import { Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { ApiDefinition, SpecRestApi } from 'aws-cdk-lib/aws-apigateway';
import { Secret } from 'aws-cdk-lib/aws-secretsmanager';
import type { APIGatewayProxyEvent } from 'aws-lambda';
import { describe, expect, it } from 'vitest';
import { METRIC, SERVICE_NAME } from '../../../core/observability/metric-names';
import { ENV } from '../../../core/settings/config';
import { WEBHOOK_ENV, WEBHOOK_PATH } from '../../../lambdas/webhooks/route';
import { ApiAccessAuthorizer } from '../../../lib/api-access-authorizer';
import { bundleDirectory } from '../../../lib/lambda-bundles';
import {
  exemptMethodIds,
  logicalId,
  methodPath,
  resourcesOfType,
  stackFromContext,
  testApp,
} from '../fixtures';

type Properties = Record<string, unknown>;

function synth(context: Record<string, unknown> = {}): Template {
  return Template.fromStack(stackFromContext({ serviceId: '2555417735060', ...context }));
}

function propertiesOf(template: Template, type: string, id: string): Properties {
  const resource = resourcesOfType(template, type)[id];
  if (!resource) throw new Error(`no ${type} ${id}`);
  return resource.Properties;
}

/** The logical ids of the roles whose inline policies name a resource. */
function rolesThatMayUse(template: Template, resourceId: string): string[] {
  return Object.values(resourcesOfType(template, 'AWS::IAM::Policy'))
    .filter((policy) => JSON.stringify(policy.Properties.PolicyDocument).includes(`"${resourceId}"`))
    .flatMap((policy) => (policy.Properties.Roles as { Ref: string }[]).map((role) => role.Ref));
}

const roleOf = (fn: Properties) => (fn.Role as { 'Fn::GetAtt': [string, string] })['Fn::GetAtt'][0];
const variablesOf = (fn: Properties) => (fn.Environment as { Variables: Properties }).Variables;

describe('with -c webhooks=true', () => {
  const template = synth({ webhooks: 'true' });
  const functionId = logicalId(template, 'AWS::Lambda::Function', 'AccessWebhooksFunction');
  const receiver = propertiesOf(template, 'AWS::Lambda::Function', functionId);
  const authorizer = propertiesOf(
    template,
    'AWS::Lambda::Function',
    logicalId(template, 'AWS::Lambda::Function', 'AccessAuthorizerFunction'),
  );
  const secretId = logicalId(template, 'AWS::SecretsManager::Secret', 'AccessWebhookToken');

  it('serves POST /webhooks/platform through the receiver, without the authorizer, and says why', () => {
    const methods = resourcesOfType(template, 'AWS::ApiGateway::Method');
    const routed = Object.entries(methods).filter(([, method]) =>
      JSON.stringify(method.Properties.Integration ?? {}).includes(functionId),
    );
    expect(
      routed.map(([, method]) => `${method.Properties.HttpMethod} ${methodPath(template, method)}`),
    ).toEqual([`POST ${WEBHOOK_PATH}`]);
    const [methodId, method] = routed[0] as [string, { Properties: Properties }];
    expect(method.Properties).toMatchObject({
      AuthorizationType: 'NONE',
      Integration: { Type: 'AWS_PROXY', IntegrationHttpMethod: 'POST' },
    });
    expect(method.Properties.AuthorizerId).toBeUndefined();
    expect(exemptMethodIds(template)).toContain(methodId);
    const metadata = template.toJSON().Resources[methodId].Metadata;
    expect(metadata.ApiAccessAuthorizerExempt).toMatch(/Platform webhook receiver/);
  });

  it('leaves every other method but the documentation behind the authorizer', () => {
    const open = new Set(exemptMethodIds(template));
    const methods = resourcesOfType(template, 'AWS::ApiGateway::Method');
    const openPaths = [...open].map((id) => methodPath(template, methods[id] as never)).sort();
    expect(openPaths).toEqual(['/docs', '/docs/{file}', WEBHOOK_PATH]);
    for (const [id, method] of Object.entries(methods)) {
      if (!open.has(id) && method.Properties.HttpMethod !== 'OPTIONS') {
        expect(method.Properties.AuthorizationType).toBe('CUSTOM');
      }
    }
  });

  it("runs in the VPC in the authorizer's security group, the one Redis admits", () => {
    expect(receiver.VpcConfig).toBeDefined();
    expect(receiver.VpcConfig).toEqual(authorizer.VpcConfig);
    const [functionGroup] = (receiver.VpcConfig as { SecurityGroupIds: unknown[] }).SecurityGroupIds;
    const redisGroupId = logicalId(template, 'AWS::EC2::SecurityGroup', 'AccessRedisSecurityGroup');
    const ingress = Object.values(resourcesOfType(template, 'AWS::EC2::SecurityGroupIngress')).map(
      (rule) => rule.Properties,
    );
    expect(ingress).toContainEqual(
      expect.objectContaining({
        GroupId: { 'Fn::GetAtt': [redisGroupId, 'GroupId'] },
        SourceSecurityGroupId: functionGroup,
        FromPort: 6379,
      }),
    );
  });

  it("has the authorizer's settings (platform, provider key secret, Redis) and the token's ARN, no topic", () => {
    const { [ENV.topicArn]: _topic, ...shared } = variablesOf(authorizer);
    expect(variablesOf(receiver)).toEqual({ ...shared, [WEBHOOK_ENV.tokenSecretArn]: { Ref: secretId } });
    expect(variablesOf(receiver)[ENV.platformCredentialSecretArn]).toBeDefined();
    expect(variablesOf(receiver)[ENV.redisHost]).toBeDefined();
  });

  it('generates the token in Secrets Manager: no value in the template', () => {
    const secret = propertiesOf(template, 'AWS::SecretsManager::Secret', secretId);
    expect(secret.GenerateSecretString).toMatchObject({ ExcludePunctuation: true, PasswordLength: 48 });
    expect(secret.SecretString).toBeUndefined();
    // The value is read by the receiver only: no resource takes it (a dynamic reference), only its ARN.
    const { Resources, Outputs } = template.toJSON() as Record<string, Record<string, unknown>>;
    const naming = (entries: Record<string, unknown>) =>
      Object.keys(entries).filter((id) => JSON.stringify(entries[id]).includes(`{"Ref":"${secretId}"}`));
    const policyId = logicalId(
      template,
      'AWS::IAM::Policy',
      'AccessWebhooksFunctionServiceRoleDefaultPolicy',
    );
    expect(naming(Resources as Record<string, unknown>).sort()).toEqual([functionId, policyId].sort());
    expect(naming(Outputs as Record<string, unknown>)).toEqual([expect.stringMatching(/WebhookUrlCommand/)]);
  });

  it('lets only the receiver read the token, and the receiver read the provider key too', () => {
    expect(rolesThatMayUse(template, secretId)).toEqual([roleOf(receiver)]);
    const credentialId = logicalId(template, 'AWS::SecretsManager::Secret', 'PlatformCredential');
    expect(rolesThatMayUse(template, credentialId)).toContain(roleOf(receiver));
  });

  it('outputs the URL without the token, and a command that prints it with the token', () => {
    const outputs = template.toJSON().Outputs as Record<string, { Value: unknown; Description: string }>;
    const urlOutput = Object.entries(outputs).find(([id]) => /WebhookUrl(?!Command)/.test(id))?.[1];
    const commandOutput = Object.entries(outputs).find(([id]) => id.includes('WebhookUrlCommand'))?.[1];
    if (!urlOutput || !commandOutput) throw new Error(`no webhook outputs in ${Object.keys(outputs)}`);
    const url = JSON.stringify(urlOutput.Value);
    expect(url).toContain(WEBHOOK_PATH);
    expect(url).not.toMatch(/token|Secret/i);
    const command = JSON.stringify(commandOutput.Value);
    expect(command).toContain('aws secretsmanager get-secret-value');
    expect(command).toContain(`{"Ref":"${secretId}"}`);
    expect(command).toContain(`${WEBHOOK_PATH}?token=$(`);
    expect(urlOutput.Description).toMatch(/platform's webhook URL/);
  });

  it('alarms on the receiver failing or answering 503', () => {
    const alarms = Object.values(resourcesOfType(template, 'AWS::CloudWatch::Alarm')).filter((alarm) =>
      String(alarm.Properties.AlarmDescription).startsWith('The webhook receiver failed'),
    );
    expect(alarms).toHaveLength(1);
    const metrics = JSON.stringify(alarms[0]?.Properties.Metrics);
    expect(metrics).toContain(functionId);
    expect(metrics).toContain(METRIC.webhookFailed);
    expect(metrics).toContain(SERVICE_NAME.webhooks);
  });

  it('runs the receiver bundle, which refuses to start without its token secret', async () => {
    const bundle = require(path.join(bundleDirectory('webhooks'), 'index.js')) as {
      handler: (event: APIGatewayProxyEvent) => Promise<unknown>;
    };
    await expect(bundle.handler({} as APIGatewayProxyEvent)).rejects.toThrow(
      new RegExp(`${WEBHOOK_ENV.tokenSecretArn}.*required`),
    );
  });
});

describe('without -c webhooks', () => {
  it('refuses a value that is not true or false, naming the key', () => {
    expect(() => synth({ webhooks: 'yes' })).toThrow(/Invalid context webhooks: must be true or false/);
  });

  it('creates nothing of the receiver: no route, function, secret, alarm or output', () => {
    const template = synth();
    const ids = (type: string) =>
      Object.keys(resourcesOfType(template, type)).filter((id) => /Webhook/.test(id));
    expect(ids('AWS::Lambda::Function')).toEqual([]);
    expect(ids('AWS::SecretsManager::Secret')).toEqual([]);
    expect(ids('AWS::CloudWatch::Alarm')).toEqual([]);
    expect(Object.keys(template.toJSON().Outputs).filter((id) => id.includes('Webhook'))).toEqual([]);
    expect(
      Object.values(resourcesOfType(template, 'AWS::ApiGateway::Resource')).map((r) => r.Properties.PathPart),
    ).not.toContain('webhooks');
  });
});

describe('the webhooks prop on a provider API', () => {
  it('refuses an API whose methods it cannot add, naming what to do', () => {
    const stack = new Stack(testApp(), 'Provider');
    const access = new ApiAccessAuthorizer(stack, 'Access', {
      serviceId: '1',
      platformCredential: new Secret(stack, 'Credential'),
      webhooks: true,
    });
    const api = new SpecRestApi(stack, 'Api', {
      apiDefinition: ApiDefinition.fromInline({
        openapi: '3.0.1',
        info: { title: 'a', version: '1' },
        paths: {},
      }),
    });
    expect(() => access.protect(api)).toThrow(/webhook route is added to a RestApi only/);
    expect(access.webhooksFunction).toBeDefined();
    expect(access.webhookTokenSecret).toBeDefined();
  });
});
