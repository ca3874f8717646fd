import { Template } from 'aws-cdk-lib/assertions';
import { Metric } from 'aws-cdk-lib/aws-cloudwatch';
import { Topic } from 'aws-cdk-lib/aws-sns';
import { describe, expect, it } from 'vitest';
import { AccessAlarms, ALARM_PERIOD } from '../../../lib/parts/alarms';
import type { AlarmSpec } from '../../../lib/parts/part';
import { logicalId, resourcesOfType } from '../fixtures';
import { partScope } from './fixtures';

const spec: AlarmSpec = {
  id: 'Example',
  description: 'what it means',
  metric: new Metric({ namespace: 'Test', metricName: 'Failures', statistic: 'Sum', period: ALARM_PERIOD }),
  threshold: 3,
  evaluationPeriods: 2,
};

describe('AccessAlarms', () => {
  it('makes one alarm per spec that treats missing data as fine', () => {
    const { stack, scope } = partScope();
    new AccessAlarms(scope, 'Alarms', { specs: [spec, { ...spec, id: 'Other' }] });
    const alarms = Object.values(resourcesOfType(Template.fromStack(stack), 'AWS::CloudWatch::Alarm'));
    expect(alarms).toHaveLength(2);
    expect(alarms[0]?.Properties).toMatchObject({
      AlarmDescription: 'what it means',
      Threshold: 3,
      EvaluationPeriods: 2,
      ComparisonOperator: 'GreaterThanOrEqualToThreshold',
      TreatMissingData: 'notBreaching',
    });
    expect(alarms[0]?.Properties.AlarmActions).toBeUndefined();
  });

  it('sends alarms and recoveries to the topic it is given', () => {
    const { stack, scope } = partScope();
    new AccessAlarms(scope, 'Alarms', { specs: [spec], topic: new Topic(stack, 'AlarmTopic') });
    const template = Template.fromStack(stack);
    const topic = { Ref: logicalId(template, 'AWS::SNS::Topic', 'AlarmTopic') };
    template.hasResourceProperties('AWS::CloudWatch::Alarm', { AlarmActions: [topic], OKActions: [topic] });
  });
});
