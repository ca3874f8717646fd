/**
 * The Lambdas' logger and metrics: Powertools Logger, and Powertools Metrics (CloudWatch EMF) behind the
 * core's ports (core/observability/observability.ts). Outside the core, so that nothing deciding a call
 * loads Powertools: the plugin runs without it.
 */
import { Logger } from '@aws-lambda-powertools/logger';
import { Metrics } from '@aws-lambda-powertools/metrics';
import { METRIC_DIMENSION, METRICS_NAMESPACE } from '../../core/observability/metric-names';
import type { LogPort, MetricsPort, MetricUnitName } from '../../core/observability/observability';

export function createLogger(serviceName: string): LogPort {
  return new Logger({ serviceName });
}

/**
 * Powertools Metrics (CloudWatch EMF). The counts per platform metric are summed until the publish and
 * then written as one EMF line per platform metric, since a line's dimensions apply to all its metrics.
 */
class PowertoolsMetrics implements MetricsPort {
  private readonly metrics: Metrics;
  /** One instance per platform metric seen, carrying that metric's dimension at each publish. */
  private readonly perMetric = new Map<
    string,
    { readonly line: Metrics; readonly counts: Map<string, number> }
  >();

  constructor(private readonly serviceName: string) {
    this.metrics = new Metrics({ namespace: METRICS_NAMESPACE, serviceName });
  }

  addMetric(name: string, unit: MetricUnitName, value: number): void {
    this.metrics.addMetric(name, unit, value);
  }

  addCountPerMetric(name: string, platformMetric: string, value: number): void {
    let entry = this.perMetric.get(platformMetric);
    if (entry === undefined) {
      entry = {
        line: new Metrics({ namespace: METRICS_NAMESPACE, serviceName: this.serviceName }),
        counts: new Map(),
      };
      this.perMetric.set(platformMetric, entry);
    }
    entry.counts.set(name, (entry.counts.get(name) ?? 0) + value);
  }

  publishStoredMetrics(): void {
    this.metrics.publishStoredMetrics();
    for (const [platformMetric, { line, counts }] of this.perMetric) {
      if (counts.size === 0) continue;
      line.addDimension(METRIC_DIMENSION, platformMetric);
      for (const [name, value] of counts) line.addMetric(name, 'Count', value);
      counts.clear();
      line.publishStoredMetrics();
    }
  }
}

export function createMetrics(serviceName: string): MetricsPort {
  return new PowertoolsMetrics(serviceName);
}
