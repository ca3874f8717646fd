/** What the handlers emit, captured for assertions: log lines, metric totals, and the process's output. */
import type {
  LogAttributes,
  LogPort,
  MetricsPort,
  MetricUnitName,
} from '../../../core/observability/observability';

export interface CapturedLogger extends LogPort {
  /** One JSON line per call: level, message and every attribute object given. */
  readonly lines: string[];
}

export function captureLogger(): CapturedLogger {
  const lines: string[] = [];
  const at =
    (level: string) =>
    (message: string, ...attributes: LogAttributes[]) => {
      lines.push(JSON.stringify({ level, message, attributes }));
    };
  return { lines, debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') };
}

export interface CountingMetrics extends MetricsPort {
  total(name: string): number;
}

export function countingMetrics(): CountingMetrics {
  const totals = new Map<string, number>();
  return {
    addMetric(name: string, _unit: MetricUnitName, value: number) {
      totals.set(name, (totals.get(name) ?? 0) + value);
    },
    addCountPerMetric(name: string, _platformMetric: string, value: number) {
      totals.set(name, (totals.get(name) ?? 0) + value);
    },
    publishStoredMetrics() {},
    total: (name) => totals.get(name) ?? 0,
  };
}

export interface OutputCapture {
  /** Everything written to stdout and stderr since the capture started. */
  text(): string;
  /** Puts the original writers back; idempotent. */
  restore(): void;
}

/**
 * Diverts process.stdout and process.stderr into a buffer (the test prints its own summary instead). Powertools Logger and Metrics write through a
 * Console bound to these streams, which reads `write` at each call, so their lines are caught too.
 */
export function captureProcessOutput(): OutputCapture {
  const chunks: string[] = [];
  const streams = [process.stdout, process.stderr];
  const originals = streams.map((stream) => stream.write);
  streams.forEach((stream) => {
    stream.write = ((chunk: string | Uint8Array, ...rest: unknown[]) => {
      chunks.push(typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8'));
      const callback = rest.find((arg) => typeof arg === 'function') as (() => void) | undefined;
      callback?.();
      return true;
    }) as typeof stream.write;
  });
  let restored = false;
  return {
    text: () => chunks.join(''),
    restore() {
      if (restored) return;
      restored = true;
      streams.forEach((stream, i) => {
        stream.write = originals[i] as typeof stream.write;
      });
    },
  };
}
