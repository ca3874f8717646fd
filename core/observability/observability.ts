/**
 * Logging and metrics ports. Powertools Logger and Metrics satisfy them in the Lambdas
 * (adapters/powertools); tests, local runs and the plugin inject their own to capture or silence. Nothing here ever receives a raw credential: callers log the
 * credential id prefix at most.
 */

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
