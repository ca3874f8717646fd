/** Small helpers the reporter's stages share. */
import { credentialIdPrefix } from '../credentials';
import { METRIC, type MetricsPort } from '../observability/observability';
import type { DrainedUsage, FlushPorts } from './flush-types';

/** Runs `each` over `items`, `size` at a time. */
export async function inBatches<T>(items: readonly T[], size: number, each: (item: T) => Promise<void>) {
  for (let i = 0; i < items.length; i += size) await Promise.all(items.slice(i, i + size).map(each));
}

export function count(metrics: MetricsPort, name: string, value = 1): void {
  metrics.addMetric(name, 'Count', value);
}

export function idsOf(items: readonly DrainedUsage[]): string[] {
  return items.map((item) => item.credentialId);
}

export function noteUnreadable(
  ports: Pick<FlushPorts, 'logger' | 'metrics'>,
  credentialId: string,
  why: string,
): void {
  count(ports.metrics, METRIC.flushUnreadable);
  ports.logger.error(
    'usage cannot be reported: the credential cannot be read back (was the provider key rotated?)',
    { credential: credentialIdPrefix(credentialId), why },
  );
}
