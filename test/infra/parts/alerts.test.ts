import { Duration } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import { Schedule } from 'aws-cdk-lib/aws-events';
import { RetentionDays } from 'aws-cdk-lib/aws-logs';
import { Topic } from 'aws-cdk-lib/aws-sns';
import { describe, expect, it } from 'vitest';
import { type AccessConfigInput, ENV, parseConfig } from '../../../core/settings/config';
import { AccessAlarms } from '../../../lib/parts/alarms';
import { UsageAlerts } from '../../../lib/parts/alerts';
import { UsagePipeline } from '../../../lib/parts/usage-pipeline';
import { logicalId } from '../fixtures';
import { bindingsIn, emailSubscribers, networkIn, partScope } from './fixtures';

/** The usage pipeline (whose reporter and sweep publish alerts) and the alerts part with these settings. */
function alertsPart(settings: Partial<AccessConfigInput> = {}, existingTopic = false) {
  const { stack, scope } = partScope();
  const usage = new UsagePipeline(scope, {
    bindings: bindingsIn(scope),
    network: networkIn(scope),
    sweepSchedule: Schedule.rate(Duration.minutes(1)),
    logRetention: RetentionDays.ONE_MONTH,
    tracing: false,
  });
  const part = UsageAlerts.of(scope, {
    config: parseConfig({ serviceId: '2555417735060', ...settings }),
    publishers: [usage.reporterFunction, usage.sweepFunction],
    ...(existingTopic && { topic: new Topic(stack, 'ProviderAlerts', { enforceSSL: true }) }),
  });
  if (part) new AccessAlarms(scope, 'Alarms', { specs: part.alarms });
  return { stack, usage, part, template: Template.fromStack(stack) };
}

describe('UsageAlerts with an admin token secret', () => {
  const arn = 'arn:aws:secretsmanager:us-east-1:123456789012:secret:admin-token-AbCdEf';
  const { stack, usage, template } = alertsPart({ adminTokenSecretArn: arn });

  it('lets only the publishers read it', () => {
    const readers = Object.values(template.findResources('AWS::IAM::Policy'))
      .filter((policy) => JSON.stringify(policy.Properties.PolicyDocument).includes(arn))
      .flatMap((policy) => (policy.Properties.Roles as { Ref: string }[]).map((role) => role.Ref))
      .sort();
    const roleOf = (fn: typeof usage.reporterFunction) =>
      stack.getLogicalId(fn.role?.node.defaultChild as never);
    expect(readers).toEqual([roleOf(usage.reporterFunction), roleOf(usage.sweepFunction)].sort());
  });
});

describe('UsageAlerts', () => {
  const { stack, usage, part, template } = alertsPart({
    alertEmails: ['ops@example.com', 'sales@example.com'],
  });
  const topicId = logicalId(template, 'AWS::SNS::Topic', 'AccessAlertsTopic');

  it('builds a topic that refuses publishers without TLS', () => {
    template.hasResourceProperties('AWS::SNS::Topic', { DisplayName: 'API usage alerts' });
    template.hasResourceProperties('AWS::SNS::TopicPolicy', {
      Topics: [{ Ref: topicId }],
      PolicyDocument: Match.objectLike({
        Statement: Match.arrayWith([
          Match.objectLike({
            Effect: 'Deny',
            Action: 'sns:Publish',
            Condition: { Bool: { 'aws:SecureTransport': 'false' } },
          }),
        ]),
      }),
    });
  });

  it('subscribes each address of alertEmails by e-mail', () => {
    expect(emailSubscribers(template, topicId)).toEqual(['ops@example.com', 'sales@example.com']);
  });

  it('tells the reporter and the sweep the topic, and lets them publish to it', () => {
    for (const fn of [usage.reporterFunction, usage.sweepFunction]) {
      const functionId = stack.getLogicalId(fn.node.defaultChild as never);
      const roleId = stack.getLogicalId(fn.role?.node.defaultChild as never);
      const properties = template.toJSON().Resources[functionId].Properties;
      expect(properties.Environment.Variables[ENV.alertsTopicArn]).toEqual({ Ref: topicId });
      template.hasResourceProperties('AWS::IAM::Policy', {
        Roles: [{ Ref: roleId }],
        PolicyDocument: Match.objectLike({
          Statement: Match.arrayWith([
            Match.objectLike({ Effect: 'Allow', Action: 'sns:Publish', Resource: { Ref: topicId } }),
          ]),
        }),
      });
    }
    expect(part?.topic.node.path).toBe('PartStack/Access/AlertsTopic');
  });

  it('alarms when alerts cannot be published', () => {
    template.hasResourceProperties('AWS::CloudWatch::Alarm', {
      Namespace: 'ApiAccessManagement',
      MetricName: 'AlertPublishFailed',
      Dimensions: [{ Name: 'service', Value: 'access-reporter' }],
      Threshold: 1,
    });
  });
});

describe('UsageAlerts with a topic of the provider', () => {
  it('uses it and builds none', () => {
    const { template } = alertsPart({ alertEmails: ['ops@example.com'] }, true);
    const providerTopic = logicalId(template, 'AWS::SNS::Topic', 'ProviderAlerts');
    template.resourceCountIs('AWS::SNS::Topic', 2); // the usage topic and the provider's
    template.hasResourceProperties('AWS::SNS::Subscription', {
      Protocol: 'email',
      TopicArn: { Ref: providerTopic },
    });
  });
});

describe('UsageAlerts with alerts off (alertLevels: [])', () => {
  it('gives no part: no topic, no variable, no grant', () => {
    const { part, template } = alertsPart({ alertLevels: [] });
    expect(part).toBeUndefined();
    template.resourceCountIs('AWS::SNS::Topic', 1); // the usage topic
    expect(JSON.stringify(template.toJSON())).not.toContain(ENV.alertsTopicArn);
  });

  it('refuses addresses or a topic that would get nothing', () => {
    expect(() => alertsPart({ alertLevels: [], alertEmails: ['ops@example.com'] })).toThrow(
      /alertEmails subscribe to the alerts topic, and alertLevels is \[\]/,
    );
    expect(() => alertsPart({ alertLevels: [] }, true)).toThrow(
      /alertsTopic is given, and alertLevels is \[\]/,
    );
  });
});
