/**
 * Usage alerts and the usage dashboard in the deployable stack, as `npx cdk synth -c ...` builds it:
 * only the functions that publish alerts may, the topic ARN is an output, and turning alerts off leaves
 * no topic.
 */
import { Template } from 'aws-cdk-lib/assertions';
import { describe, expect, it } from 'vitest';
import { METRIC } from '../../core/observability/metric-names';
import { ENV } from '../../core/settings/config';
import { logicalId, type Resources, resourcesOfType, stackFromContext } from './fixtures';
import { emailSubscribers, searchesOf } from './parts/fixtures';

interface Statement {
  readonly Effect: string;
  readonly Action: string | string[];
  readonly Resource: unknown;
}

/** The logical ids of the roles allowed sns:Publish on a topic. */
function publishersOf(template: Template, topicId: string): string[] {
  const policies = resourcesOfType(template, 'AWS::IAM::Policy') as Resources;
  return Object.values(policies)
    .filter((policy) => {
      const statements = (policy.Properties.PolicyDocument as { Statement: Statement[] }).Statement;
      return statements.some(
        (statement) =>
          statement.Effect === 'Allow' &&
          [statement.Action].flat().includes('sns:Publish') &&
          JSON.stringify(statement.Resource) === JSON.stringify({ Ref: topicId }),
      );
    })
    .flatMap((policy) => (policy.Properties.Roles as { Ref: string }[]).map((role) => role.Ref))
    .sort();
}

/** Logical ids of the functions whose environment names the alerts topic. */
function functionsTold(template: Template): string[] {
  const functions = resourcesOfType(template, 'AWS::Lambda::Function');
  return Object.entries(functions)
    .filter(([, fn]) => {
      const variables = (fn.Properties.Environment as { Variables?: object } | undefined)?.Variables;
      return variables !== undefined && ENV.alertsTopicArn in variables;
    })
    .map(([id]) => id)
    .sort();
}

describe('the stack with alerts on and -c alertEmails', () => {
  const stack = stackFromContext({
    serviceId: '2555417735060',
    alertEmails: 'ops@example.com, sales@example.com',
  });
  const template = Template.fromStack(stack);
  const topicId = logicalId(template, 'AWS::SNS::Topic', 'AccessAlertsTopic');
  const roleOf = (fn: (typeof stack.access)['reporterFunction']) =>
    stack.getLogicalId(fn.role?.node.defaultChild as never);

  it('subscribes the addresses to the TLS-only alerts topic', () => {
    expect(emailSubscribers(template, topicId)).toEqual(['ops@example.com', 'sales@example.com']);
    template.hasResourceProperties('AWS::SNS::TopicPolicy', { Topics: [{ Ref: topicId }] });
  });

  it('lets the reporter and the sweep publish alerts, and no other function', () => {
    expect(publishersOf(template, topicId)).toEqual(
      [roleOf(stack.access.reporterFunction), roleOf(stack.access.sweepFunction)].sort(),
    );
    const functionId = (fn: (typeof stack.access)['reporterFunction']) =>
      stack.getLogicalId(fn.node.defaultChild as never);
    expect(functionsTold(template)).toEqual(
      [functionId(stack.access.reporterFunction), functionId(stack.access.sweepFunction)].sort(),
    );
  });

  it('outputs the topic ARN and the dashboard URL', () => {
    template.hasOutput('AlertsTopicArn', { Value: { Ref: topicId } });
    const url = JSON.stringify(template.findOutputs('DashboardUrl'));
    expect(url).toContain('console.aws.amazon.com/cloudwatch/home');
    expect(url).toContain(logicalId(template, 'AWS::CloudWatch::Dashboard', 'AccessUsageDashboard'));
  });

  it('has the dashboard graph allowed, denied and alerts per metric', () => {
    const searches = Object.values(searchesOf(template));
    expect(searches).toHaveLength(3);
    for (const name of [METRIC.allowed, METRIC.denied, METRIC.alertPublished]) {
      expect(searches.some((search) => search.includes(`MetricName="${name}"`))).toBe(true);
    }
  });
});

describe('the stack with alerts off (-c alertLevels=[])', () => {
  const template = Template.fromStack(stackFromContext({ serviceId: '2555417735060', alertLevels: '[]' }));

  it('has no alerts topic, no output, no variable; the dashboard graphs calls only', () => {
    expect(Object.keys(resourcesOfType(template, 'AWS::SNS::Topic'))).toEqual([
      logicalId(template, 'AWS::SNS::Topic', 'AccessUsageTopic'),
    ]);
    expect(template.findOutputs('AlertsTopicArn')).toEqual({});
    expect(functionsTold(template)).toEqual([]);
    expect(Object.values(searchesOf(template))).toHaveLength(2);
  });
});

describe('the stack with -c adminApiUrl and -c adminTokenSecretArn', () => {
  it("gives the reporter the admin portal's URL and the secret's ARN, never a token", () => {
    const arn = 'arn:aws:secretsmanager:us-east-1:123456789012:secret:admin-token-AbCdEf';
    const template = Template.fromStack(
      stackFromContext({
        serviceId: '2555417735060',
        adminApiUrl: 'https://acme-admin.3scale.net/',
        adminTokenSecretArn: arn,
      }),
    );
    const reporter = Object.values(resourcesOfType(template, 'AWS::Lambda::Function')).find(
      (fn) => ENV.alertsTopicArn in ((fn.Properties.Environment as { Variables?: object })?.Variables ?? {}),
    );
    expect(
      (reporter?.Properties.Environment as { Variables?: Record<string, unknown> } | undefined)?.Variables,
    ).toMatchObject({
      [ENV.adminApiUrl]: 'https://acme-admin.3scale.net',
      [ENV.adminTokenSecretArn]: arn,
    });
  });
});

describe('the stack with -c dashboard=false', () => {
  it('has no dashboard and no dashboard output', () => {
    const template = Template.fromStack(stackFromContext({ serviceId: '2555417735060', dashboard: 'false' }));
    template.resourceCountIs('AWS::CloudWatch::Dashboard', 0);
    expect(template.findOutputs('DashboardUrl')).toEqual({});
  });
});

describe('alert settings from context that cannot be used', () => {
  it.each([
    [{ alertEmails: 'ops@example.com,ops' }, /alertEmails\[1\] must be an email address/],
    [{ alertLevels: '[]', alertEmails: 'ops@example.com' }, /alertEmails subscribe to the alerts topic/],
    [{ alertLevels: '[75]' }, /alertLevels\[0\] must be one of 50, 80, 90, 100/],
  ])('%j is refused', (context, message) => {
    expect(() => stackFromContext({ serviceId: '2555417735060', ...context })).toThrow(message);
  });
});
