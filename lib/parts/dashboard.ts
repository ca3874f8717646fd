import { Duration } from 'aws-cdk-lib';
import {
  Dashboard,
  GraphWidget,
  type IMetric,
  type IWidget,
  MathExpression,
  TextWidget,
} from 'aws-cdk-lib/aws-cloudwatch';
import type { Construct } from 'constructs';
import {
  INSTANCE_DIMENSION,
  METRIC,
  METRIC_DIMENSION,
  METRICS_NAMESPACE,
} from '../../core/observability/metric-names';
import type { AccessPart, AlarmSpec } from './part';

/** The period each dashboard point sums. */
export const DASHBOARD_PERIOD = Duration.minutes(5);

/**
 * Every series of a count kept per platform metric (dimensions `service` and `metric`), one line per
 * metric (and per function that counts it). A SEARCH finds the metrics as the Lambdas emit them, so the
 * dashboard needs no list of metric names: alerts name the limits' metrics, which may be parents the
 * mapping rules never mention, and metrics the provider adds on the platform appear without a deploy.
 * With an instance, the search reads that instance's series only (INSTANCE_DIMENSION).
 */
export function perMetricSeries(metricName: string, instance?: string): IMetric {
  const schema =
    instance === undefined
      ? `{${METRICS_NAMESPACE},${METRIC_DIMENSION},service}`
      : `{${METRICS_NAMESPACE},${INSTANCE_DIMENSION},${METRIC_DIMENSION},service}`;
  const own = instance === undefined ? '' : ` ${INSTANCE_DIMENSION}="${instance}"`;
  return new MathExpression({
    expression: `SEARCH('${schema} MetricName="${metricName}"${own}', 'Sum', ${DASHBOARD_PERIOD.toSeconds()})`,
    usingMetrics: {},
    // Empty: each series is labelled by its dimension values (the metric, the function's service).
    label: '',
    period: DASHBOARD_PERIOD,
  });
}

export interface UsageDashboardProps {
  /** Whether usage alerts are on: the alerts widget shows only then. */
  readonly alerts: boolean;
  /**
   * The instance whose series the widgets read (METRICS_INSTANCE).
   * @default every instance's
   */
  readonly instance?: string;
}

const WIDTH = 24;
const HEIGHT = 6;

/**
 * A CloudWatch dashboard of the service's traffic per platform metric: calls allowed, calls denied and
 * usage alerts published, each summed per 5 minutes, from the counts the authorizer core and the reporter
 * publish with the `metric` dimension (core/observability/observability.ts).
 */
export class UsageDashboard implements AccessPart {
  public readonly alarms: readonly AlarmSpec[] = [];
  public readonly dashboard: Dashboard;

  constructor(scope: Construct, props: UsageDashboardProps) {
    const graphs = [
      { title: 'Calls allowed per metric', metricName: METRIC.allowed },
      { title: 'Calls denied per metric (403 and 401)', metricName: METRIC.denied },
      ...(props.alerts ? [{ title: 'Usage alerts per metric', metricName: METRIC.alertPublished }] : []),
    ];
    const width = WIDTH / graphs.length;
    const widgets: IWidget[] = graphs.map(
      ({ title, metricName }) =>
        new GraphWidget({
          title,
          left: [perMetricSeries(metricName, props.instance)],
          leftYAxis: { min: 0, showUnits: false },
          period: DASHBOARD_PERIOD,
          width,
          height: HEIGHT,
        }),
    );
    this.dashboard = new Dashboard(scope, 'UsageDashboard', {
      defaultInterval: Duration.hours(3),
      widgets: [
        [
          new TextWidget({
            markdown: `Calls and usage alerts per platform metric, summed per 5 minutes (namespace \`${METRICS_NAMESPACE}\`, dimension \`${METRIC_DIMENSION}\`). Calls a mapping rule does not match, and malformed credentials, count under no metric.`,
            width: WIDTH,
            height: 2,
          }),
        ],
        widgets,
      ],
    });
  }
}
