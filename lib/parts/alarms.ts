import { Duration } from 'aws-cdk-lib';
import {
  Alarm,
  ComparisonOperator,
  type IMetric,
  MathExpression,
  Metric,
  TreatMissingData,
} from 'aws-cdk-lib/aws-cloudwatch';
import { SnsAction } from 'aws-cdk-lib/aws-cloudwatch-actions';
import type { IFunction } from 'aws-cdk-lib/aws-lambda';
import type { ITopic } from 'aws-cdk-lib/aws-sns';
import { Construct } from 'constructs';
import { INSTANCE_DIMENSION, METRICS_NAMESPACE, SERVICE_NAME } from '../../core/observability/metric-names';
import type { AlarmSpec } from './part';

/** The period every alarm evaluates over. */
export const ALARM_PERIOD = Duration.minutes(5);

/**
 * A count the access Lambdas of one instance publish (Powertools EMF), summed over the alarm period: the
 * `instance` dimension keeps another instance's counts (another service, dev beside prod) out.
 */
export function accessMetric(
  service: keyof typeof SERVICE_NAME,
  metricName: string,
  instance: string | undefined,
): Metric {
  return new Metric({
    namespace: METRICS_NAMESPACE,
    metricName,
    dimensionsMap: {
      service: SERVICE_NAME[service],
      ...(instance !== undefined && { [INSTANCE_DIMENSION]: instance }),
    },
    statistic: 'Sum',
    period: ALARM_PERIOD,
  });
}

/** One series computed from several; a single metric is used as it is. */
function combined(
  label: string,
  metrics: readonly IMetric[],
  expression: (ids: string[]) => string,
): IMetric {
  if (metrics.length === 1) return metrics[0] as IMetric;
  const usingMetrics = Object.fromEntries(metrics.map((metric, i) => [`m${i}`, metric]));
  return new MathExpression({
    label,
    expression: expression(Object.keys(usingMetrics)),
    usingMetrics,
    period: ALARM_PERIOD,
  });
}

/** The sum of counts that may each be missing in a period (a missing count is zero, not unknown). */
export function sumOf(label: string, metrics: readonly IMetric[]): IMetric {
  return combined(label, metrics, (ids) => ids.map((id) => `FILL(${id}, 0)`).join(' + '));
}

/** A function's errors (crashes, timeouts) over the alarm period, plus the failures it counts itself. */
export function functionErrorsOf(label: string, fn: IFunction, countedFailures?: IMetric): IMetric {
  return sumOf(label, [
    fn.metricErrors({ period: ALARM_PERIOD }),
    ...(countedFailures ? [countedFailures] : []),
  ]);
}

/** The highest of several gauges (for example the CPU of each cache node). */
export function maxOf(label: string, metrics: readonly IMetric[]): IMetric {
  return combined(label, metrics, (ids) => `MAX([${ids.join(', ')}])`);
}

export interface AccessAlarmsProps {
  readonly specs: readonly AlarmSpec[];
  /**
   * Where alarms and their recoveries are sent.
   * @default no action: the alarms show in the CloudWatch console only
   */
  readonly topic?: ITopic;
}

/** One CloudWatch alarm per spec; missing data (no traffic) is not a breach. */
export class AccessAlarms extends Construct {
  public readonly alarms: readonly Alarm[];

  constructor(scope: Construct, id: string, props: AccessAlarmsProps) {
    super(scope, id);
    const action = props.topic && new SnsAction(props.topic);
    this.alarms = props.specs.map((spec) => {
      const alarm = new Alarm(this, spec.id, {
        alarmDescription: spec.description,
        metric: spec.metric,
        threshold: spec.threshold,
        evaluationPeriods: spec.evaluationPeriods ?? 1,
        comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
        treatMissingData: TreatMissingData.NOT_BREACHING,
      });
      if (action) {
        alarm.addAlarmAction(action);
        alarm.addOkAction(action);
      }
      return alarm;
    });
  }
}
