import { Match, Template } from 'aws-cdk-lib/assertions';
import { RetentionDays } from 'aws-cdk-lib/aws-logs';
import { Topic } from 'aws-cdk-lib/aws-sns';
import { describe, expect, it } from 'vitest';
import { METRIC, METRICS_NAMESPACE } from '../../../core/observability/observability';
import { AUTHORIZER_SERVICE_NAME } from '../../../lambdas/authorizer/handler';
import { AccessAlarms } from '../../../lib/parts/alarms';
import { AuthorizerFunction } from '../../../lib/parts/authorizer-function';
import { logicalId } from '../fixtures';
import { bindingsIn, networkIn, partScope } from './fixtures';

function authorizer(tracing: boolean) {
  const { stack, scope } = partScope();
  const part = new AuthorizerFunction(scope, {
    bindings: bindingsIn(scope),
    network: networkIn(scope),
    topic: new Topic(stack, 'UsageTopic'),
    logRetention: RetentionDays.ONE_MONTH,
    tracing,
  });
  new AccessAlarms(scope, 'Alarms', { specs: part.alarms });
  return { part, template: Template.fromStack(stack) };
}

describe('AuthorizerFunction', () => {
  const { part, template } = authorizer(false);
  const functionId = logicalId(template, 'AWS::Lambda::Function', 'AccessAuthorizerFunction');

  it('runs the prebuilt authorizer bundle with 512 MB and a 10 s timeout, without X-Ray', () => {
    template.hasResourceProperties('AWS::Lambda::Function', {
      Handler: 'index.handler',
      MemorySize: 512,
      Timeout: 10,
      TracingConfig: Match.absent(),
    });
    expect(part.identitySources).toEqual(['method.request.header.apikey']);
  });

  it('runs with X-Ray active tracing when tracing is on', () => {
    authorizer(true).template.hasResourceProperties('AWS::Lambda::Function', {
      TracingConfig: { Mode: 'Active' },
    });
  });

  it('alarms on its errors: Lambda errors and the failures it answers with a Deny', () => {
    template.hasResourceProperties('AWS::CloudWatch::Alarm', {
      Metrics: Match.arrayWith([
        Match.objectLike({ Expression: 'FILL(m0, 0) + FILL(m1, 0)' }),
        Match.objectLike({
          MetricStat: Match.objectLike({
            Metric: Match.objectLike({
              MetricName: 'Errors',
              Dimensions: [{ Name: 'FunctionName', Value: { Ref: functionId } }],
            }),
          }),
        }),
        Match.objectLike({
          MetricStat: Match.objectLike({
            Metric: {
              Namespace: METRICS_NAMESPACE,
              MetricName: METRIC.authorizerError,
              Dimensions: [{ Name: 'service', Value: AUTHORIZER_SERVICE_NAME }],
            },
          }),
        }),
      ]),
    });
  });

  it.each([METRIC.platformUnavailable, METRIC.platformMisconfigured, METRIC.usageNotRecorded])(
    'alarms on every %s the authorizer publishes',
    (metricName) => {
      template.hasResourceProperties('AWS::CloudWatch::Alarm', {
        Namespace: METRICS_NAMESPACE,
        MetricName: metricName,
        Dimensions: [{ Name: 'service', Value: AUTHORIZER_SERVICE_NAME }],
        Statistic: 'Sum',
        Period: 300,
        Threshold: 1,
      });
    },
  );
});
