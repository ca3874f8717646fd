/**
 * Logging and metrics ports. Powertools Logger and Metrics satisfy them; tests and local runs inject
 * their own to capture or silence. Nothing here ever receives a raw credential: callers log the
 * credential id prefix at most.
 */
import { Logger } from '@aws-lambda-powertools/logger';
import { Metrics } from '@aws-lambda-powertools/metrics';
import { INSTANCE_DIMENSION, METRIC_DIMENSION, METRICS_NAMESPACE } from './metric-names';

export type LogAttributes = Record<string, unknown>;

export interface LogPort {
  debug(message: string, ...attributes: LogAttributes[]): void;
  info(message: string, ...attributes: LogAttributes[]): void;
  warn(message: string, ...attributes: LogAttributes[]): void;
  error(message: string, ...attributes: LogAttributes[]): void;
}

export type MetricUnitName = 'Count' | 'Milliseconds';

export interface MetricsPort {
  addMetric(name: string, unit: MetricUnitName, value: number): void;
  /**
   * A count kept per platform metric: published with the dimension `metric` (METRIC_DIMENSION) besides
   * `service`. `platformMetric` is a metric's system name (few per service); never an application id,
   * a credential or anything a consumer chooses, which would make a CloudWatch series per value.
   */
  addCountPerMetric(name: string, platformMetric: string, value: number): void;
  /** Flushes the buffered metrics (Powertools writes them as CloudWatch EMF lines). */
  publishStoredMetrics(): void;
}

export { INSTANCE_DIMENSION, METRIC, METRIC_DIMENSION, METRICS_NAMESPACE } from './metric-names';

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

  private readonly defaultDimensions: Record<string, string>;

  constructor(
    private readonly serviceName: string,
    instance: string | undefined,
  ) {
    this.defaultDimensions = instance === undefined ? {} : { [INSTANCE_DIMENSION]: instance };
    this.metrics = new Metrics({
      namespace: METRICS_NAMESPACE,
      serviceName,
      defaultDimensions: this.defaultDimensions,
    });
  }

  addMetric(name: string, unit: MetricUnitName, value: number): void {
    this.metrics.addMetric(name, unit, value);
  }

  addCountPerMetric(name: string, platformMetric: string, value: number): void {
    let entry = this.perMetric.get(platformMetric);
    if (entry === undefined) {
      entry = {
        line: new Metrics({
          namespace: METRICS_NAMESPACE,
          serviceName: this.serviceName,
          defaultDimensions: this.defaultDimensions,
        }),
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

/** Metrics of one function; `instance` (METRICS_INSTANCE) is the instance dimension of every one. */
export function createMetrics(serviceName: string, instance?: string): MetricsPort {
  return new PowertoolsMetrics(serviceName, instance);
}

export const silentLogger: LogPort = {
  debug() {},
  info() {},
  warn() {},
  error() {},
};

export const silentMetrics: MetricsPort = {
  addMetric() {},
  addCountPerMetric() {},
  publishStoredMetrics() {},
};

/** The message of an error, for logs; never its stack or any request data. */
export function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
