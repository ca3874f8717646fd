/**
 * The Lambdas' logger and metrics: Powertools Logger, and Powertools Metrics (CloudWatch EMF) behind the
 * core's ports (core/observability/observability.ts). Outside the core, so that nothing deciding a call
 * loads Powertools: the plugin runs without it.
 */
import { Logger } from '@aws-lambda-powertools/logger';
import { Metrics } from '@aws-lambda-powertools/metrics';
import {
  AGGREGATED_COUNTS,
  INSTANCE_DIMENSION,
  METRIC_DIMENSION,
  METRICS_NAMESPACE,
} from '../../core/observability/metric-names';
import type { LogPort, MetricsPort, MetricUnitName } from '../../core/observability/observability';

export function createLogger(serviceName: string): LogPort {
  return new Logger({ serviceName });
}

/** How an instance writes its counts (AGGREGATED_COUNTS). */
export interface MetricsOptions {
  /**
   * The counts are written at most this often: at the end of the first invocation this long after the
   * last write, or at `flush`. 0 writes them at the end of every invocation.
   */
  readonly flushIntervalMs?: number;
  /** Default Date.now. */
  readonly now?: () => number;
  /** The instance dimension of every metric (METRICS_INSTANCE): none outside a deployed instance. */
  readonly instance?: string;
}

/**
 * Powertools Metrics (CloudWatch EMF). Errors and every metric the alarms read are written at the end of
 * the invocation that counted them (`publishStoredMetrics`). The ordinary outcomes of a call
 * (AGGREGATED_COUNTS) are summed in memory and written at most every `flushIntervalMs`: one EMF line for
 * the counts without a platform metric and one per platform metric (a line's dimensions apply to all its
 * metrics), so a call writes no line of its own. What an instance ended before its next write loses is
 * those counts, for dashboards: never usage, which Redis and the reporter keep (docs/operations.md).
 */
export class PowertoolsMetrics implements MetricsPort {
  /** The metrics written at the end of each invocation. */
  private readonly immediate: Metrics;
  private hasImmediate = false;
  /** The aggregated counts without a platform metric. */
  private readonly counts: Map<string, number> = new Map();
  private readonly countsLine: Metrics;
  /** One instance per platform metric seen, carrying that metric's dimension at each write. */
  private readonly perMetric = new Map<
    string,
    { readonly line: Metrics; readonly counts: Map<string, number> }
  >();
  private readonly flushIntervalMs: number;
  private readonly now: () => number;
  private readonly defaultDimensions: Record<string, string>;
  private lastFlush: number;

  constructor(
    private readonly serviceName: string,
    options: MetricsOptions = {},
  ) {
    this.defaultDimensions = options.instance === undefined ? {} : { [INSTANCE_DIMENSION]: options.instance };
    this.immediate = this.metricsLine();
    this.countsLine = this.metricsLine();
    this.flushIntervalMs = options.flushIntervalMs ?? 0;
    this.now = options.now ?? Date.now;
    this.lastFlush = this.now();
  }

  addMetric(name: string, unit: MetricUnitName, value: number): void {
    if (unit === 'Count' && AGGREGATED_COUNTS.has(name)) {
      this.counts.set(name, (this.counts.get(name) ?? 0) + value);
      return;
    }
    this.immediate.addMetric(name, unit, value);
    this.hasImmediate = true;
  }

  addCountPerMetric(name: string, platformMetric: string, value: number): void {
    let entry = this.perMetric.get(platformMetric);
    if (entry === undefined) {
      entry = { line: this.metricsLine(), counts: new Map() };
      this.perMetric.set(platformMetric, entry);
    }
    entry.counts.set(name, (entry.counts.get(name) ?? 0) + value);
  }

  /** The end of an invocation: what it counted that must not wait, and the counts when they are due. */
  publishStoredMetrics(): void {
    // Powertools warns (a log line) when asked to publish nothing.
    if (this.hasImmediate) {
      this.immediate.publishStoredMetrics();
      this.hasImmediate = false;
    }
    if (this.now() - this.lastFlush >= this.flushIntervalMs) this.flush();
  }

  /** Writes every count held, due or not (an instance shutting down). */
  flush(): void {
    this.lastFlush = this.now();
    writeCounts(this.countsLine, this.counts);
    for (const [platformMetric, { line, counts }] of this.perMetric) {
      if (counts.size === 0) continue;
      line.addDimension(METRIC_DIMENSION, platformMetric);
      writeCounts(line, counts);
    }
  }

  private metricsLine(): Metrics {
    return new Metrics({
      namespace: METRICS_NAMESPACE,
      serviceName: this.serviceName,
      defaultDimensions: this.defaultDimensions,
    });
  }
}

/** One EMF line of the counts, which are then cleared; nothing when there are none. */
function writeCounts(line: Metrics, counts: Map<string, number>): void {
  if (counts.size === 0) return;
  for (const [name, value] of counts) line.addMetric(name, 'Count', value);
  counts.clear();
  line.publishStoredMetrics();
}

export function createMetrics(serviceName: string, options: MetricsOptions = {}): PowertoolsMetrics {
  return new PowertoolsMetrics(serviceName, options);
}
