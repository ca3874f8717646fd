/**
 * MappingRulesSource in the construct: the rules given fix the environment's MAPPING_RULES; the platform's
 * set the source, environment and refresh bound, and give the authorizer (and the SOAP proxy) read access
 * to the admin token's secret, never its value; settings that cannot apply stop synthesis naming them.
 */
import { Duration } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { describe, expect, it } from 'vitest';
import { ENV } from '../../core/settings/config';
import type { ApiAccessAuthorizerProps } from '../../lib/api-access-authorizer';
import { MappingRulesSource } from '../../lib/mapping-rules-source';
import { accessInStack, resourcesOfType, variablesOf } from './fixtures';

const ADMIN_SECRET = 'arn:aws:secretsmanager:eu-west-1:123456789012:secret:admin-token-AbC123';
const RULE = { method: 'GET', pattern: '/v1/words/{word}.json', metric: 'get_word', delta: 1 };

function synth(props: Partial<ApiAccessAuthorizerProps>) {
  const { stack, access } = accessInStack(props);
  const template = Template.fromStack(stack);
  const functionId = (fn: unknown) =>
    stack.getLogicalId((fn as { node: { defaultChild: never } }).node.defaultChild);
  return { template, access, functionId };
}

/** The secrets a function's role may read, by the function's logical id. */
function secretsReadBy(template: Template, functionId: string): unknown[] {
  const fn = resourcesOfType(template, 'AWS::Lambda::Function')[functionId];
  if (fn === undefined) throw new Error(`no function ${functionId}`);
  const role = (fn.Properties.Role as { 'Fn::GetAtt': [string] })['Fn::GetAtt'][0];
  return Object.values(resourcesOfType(template, 'AWS::IAM::Policy'))
    .filter((policy) => (policy.Properties.Roles as { Ref: string }[]).some((ref) => ref.Ref === role))
    .flatMap(
      (policy) =>
        (policy.Properties.PolicyDocument as { Statement: { Action: unknown; Resource: unknown }[] })
          .Statement,
    )
    .filter((statement) => JSON.stringify(statement.Action).includes('secretsmanager:GetSecretValue'))
    .map((statement) => statement.Resource);
}

describe('MappingRulesSource', () => {
  it('given: the rules travel in the environment, and the authorizer gets no admin token', () => {
    const { template, access, functionId } = synth({
      mappingRulesSource: MappingRulesSource.given([RULE]),
      adminApiUrl: 'https://acme-admin.3scale.net',
      adminTokenSecretArn: ADMIN_SECRET,
    });
    const authorizer = resourcesOfType(template, 'AWS::Lambda::Function')[
      functionId(access.authorizerFunction)
    ];
    expect(variablesOf(authorizer)).toMatchObject({
      [ENV.mappingRules]: JSON.stringify([RULE]),
      [ENV.mappingRulesSource]: 'given',
    });
    expect(variablesOf(authorizer)).not.toHaveProperty(ENV.mappingRulesEnvironment);
    expect(secretsReadBy(template, functionId(access.authorizerFunction))).not.toContainEqual(ADMIN_SECRET);
  });

  it('platform: the source, environment and bound in the environment, no rules, and the admin secret readable by the authorizer', () => {
    const { template, access, functionId } = synth({
      mappingRulesSource: MappingRulesSource.platform({
        environment: 'staging',
        refresh: Duration.minutes(1),
      }),
      adminApiUrl: 'https://acme-admin.3scale.net',
      adminTokenSecretArn: ADMIN_SECRET,
    });
    const id = functionId(access.authorizerFunction);
    const variables = variablesOf(resourcesOfType(template, 'AWS::Lambda::Function')[id]);
    expect(variables).toMatchObject({
      [ENV.mappingRulesSource]: 'platform',
      [ENV.mappingRulesEnvironment]: 'staging',
      [ENV.mappingRulesRefreshSeconds]: '60',
      [ENV.adminTokenSecretArn]: ADMIN_SECRET,
    });
    expect(variables[ENV.mappingRules]).toBe('[]');
    expect(secretsReadBy(template, id)).toContainEqual(ADMIN_SECRET);
    expect(JSON.stringify(template.toJSON())).not.toMatch(/admin-token-value/);
  });

  it('platform: defaults to production, refreshed every 5 minutes', () => {
    const { template, access, functionId } = synth({
      mappingRulesSource: MappingRulesSource.platform(),
      adminApiUrl: 'https://acme-admin.3scale.net',
      adminTokenSecretArn: ADMIN_SECRET,
    });
    const variables = variablesOf(
      resourcesOfType(template, 'AWS::Lambda::Function')[functionId(access.authorizerFunction)],
    );
    expect(variables).toMatchObject({
      [ENV.mappingRulesEnvironment]: 'production',
      [ENV.mappingRulesRefreshSeconds]: '300',
    });
  });

  it.each([
    [
      { mappingRulesSource: MappingRulesSource.platform() },
      /adminApiUrl is required with mappingRulesSource platform/,
    ],
    [
      { mappingRulesSource: MappingRulesSource.platform(), adminApiUrl: 'https://acme-admin.3scale.net' },
      /adminTokenSecretArn is required with mappingRulesSource platform/,
    ],
    [
      { mappingRulesSource: MappingRulesSource.given([RULE]), mappingRules: [RULE] },
      /mappingRules is given beside mappingRulesSource/,
    ],
    [
      { mappingRulesSource: 'platform' as never },
      /mappingRulesSource must be MappingRulesSource.given\(rules\)/,
    ],
  ])('refuses %#, naming the setting', (props, message) => {
    expect(() => synth(props as Partial<ApiAccessAuthorizerProps>)).toThrow(message);
  });

  it('refuses a refresh bound that is not whole seconds, naming it', () => {
    expect(() => MappingRulesSource.platform({ refresh: Duration.millis(1500) })).toThrow(
      /mappingRulesSource.refresh must be a whole number of seconds/,
    );
  });
});
