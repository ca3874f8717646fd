import { Match, Template } from 'aws-cdk-lib/assertions';
import { Schedule } from 'aws-cdk-lib/aws-events';
import { RetentionDays } from 'aws-cdk-lib/aws-logs';
import { describe, expect, it } from 'vitest';
import { METRIC, METRICS_NAMESPACE } from '../../../core/observability/observability';
import { REPORTER_SERVICE_NAME } from '../../../lambdas/reporter/handler';
import { AccessAlarms } from '../../../lib/parts/alarms';
import { UsagePipeline } from '../../../lib/parts/usage-pipeline';
import { logicalId } from '../fixtures';
import { bindingsIn, networkIn, partScope } from './fixtures';

describe('UsagePipeline', () => {
  const { stack, scope } = partScope();
  const pipeline = new UsagePipeline(scope, {
    bindings: bindingsIn(scope),
    network: networkIn(scope),
    sweepSchedule: Schedule.cron({ minute: '*/5' }),
    logRetention: RetentionDays.ONE_MONTH,
    tracing: false,
  });
  new AccessAlarms(scope, 'Alarms', { specs: pipeline.alarms });
  const template = Template.fromStack(stack);
  const deadLetterQueueId = logicalId(template, 'AWS::SQS::Queue', 'AccessUsageDeadLetterQueue');

  it('carries usage from a TLS-only topic to a delayed queue with a dead-letter queue', () => {
    template.hasResourceProperties('AWS::SNS::Subscription', { Protocol: 'sqs', RawMessageDelivery: true });
    template.hasResourceProperties('AWS::SQS::Queue', {
      DelaySeconds: 10,
      RedrivePolicy: Match.objectLike({ maxReceiveCount: 5 }),
    });
  });

  it('runs the sweep on the schedule it is given', () => {
    template.hasResourceProperties('AWS::Events::Rule', { ScheduleExpression: 'cron(*/5 * * * ? *)' });
  });

  it('leaves X-Ray off when tracing is off', () => {
    for (const fn of [pipeline.reporterFunction, pipeline.sweepFunction]) {
      const id = stack.getLogicalId(fn.node.defaultChild as never);
      expect(template.toJSON().Resources[id].Properties.TracingConfig).toBeUndefined();
    }
  });

  it('alarms on the depth of the dead-letter queue', () => {
    template.hasResourceProperties('AWS::CloudWatch::Alarm', {
      MetricName: 'ApproximateNumberOfMessagesVisible',
      Namespace: 'AWS/SQS',
      Dimensions: [{ Name: 'QueueName', Value: { 'Fn::GetAtt': [deadLetterQueueId, 'QueueName'] } }],
      Statistic: 'Maximum',
      Threshold: 1,
      ComparisonOperator: 'GreaterThanOrEqualToThreshold',
      TreatMissingData: 'notBreaching',
    });
  });

  it('alarms on errors of the reporter and the sweep together', () => {
    template.hasResourceProperties('AWS::CloudWatch::Alarm', {
      Threshold: 1,
      Metrics: Match.arrayWith([
        Match.objectLike({ Expression: 'FILL(m0, 0) + FILL(m1, 0)' }),
        ...['AccessReporterFunction', 'AccessSweepFunction'].map((prefix) =>
          Match.objectLike({
            MetricStat: Match.objectLike({
              Metric: Match.objectLike({
                MetricName: 'Errors',
                Dimensions: [
                  {
                    Name: 'FunctionName',
                    Value: { Ref: logicalId(template, 'AWS::Lambda::Function', prefix) },
                  },
                ],
              }),
            }),
          }),
        ),
      ]),
    });
  });

  it('alarms on every UsageRejected the reporter publishes: usage of a metric the platform does not have', () => {
    template.hasResourceProperties('AWS::CloudWatch::Alarm', {
      Namespace: METRICS_NAMESPACE,
      MetricName: METRIC.usageRejected,
      Dimensions: [{ Name: 'service', Value: REPORTER_SERVICE_NAME }],
      Statistic: 'Sum',
      Period: 300,
      Threshold: 1,
    });
  });
});
