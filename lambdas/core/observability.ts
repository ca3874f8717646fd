/**
 * Logging and metrics ports. Powertools Logger and Metrics satisfy them; tests and local runs inject
 * their own to capture or silence. Nothing here ever receives a raw credential: callers log the
 * credential id prefix at most.
 */
import { Logger } from '@aws-lambda-powertools/logger';
import { Metrics } from '@aws-lambda-powertools/metrics';
import { METRICS_NAMESPACE } from './metric-names';

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
  /** Flushes the buffered metrics (Powertools writes them as CloudWatch EMF lines). */
  publishStoredMetrics(): void;
}

export { METRIC, METRICS_NAMESPACE } from './metric-names';

export function createLogger(serviceName: string): LogPort {
  return new Logger({ serviceName });
}

export function createMetrics(serviceName: string): MetricsPort {
  return new Metrics({ namespace: METRICS_NAMESPACE, serviceName });
}

export const silentLogger: LogPort = {
  debug() {},
  info() {},
  warn() {},
  error() {},
};

export const silentMetrics: MetricsPort = {
  addMetric() {},
  publishStoredMetrics() {},
};

/** The message of an error, for logs; never its stack or any request data. */
export function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
