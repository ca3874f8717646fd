/**
 * Pending and in-flight usage as the scripts keep it (`<bucket start>:<metric>`, `t:<bucket start>`, see
 * core/budget/scripts/prelude.ts), read as buckets. A module of its own: the drain's reply
 * (core/budget/scripts/report-batch-scripts.ts, loaded on first use) reads it without carrying the cache's
 * client code.
 */
import type { Usage } from '../platform/types';

/** Usage of one period bucket, as the reporter sends it. */
export interface UsageBucket {
  /** Start of the bucket; undefined for usage kept before buckets existed (reported as of now). */
  readonly start?: number;
  /** When the bucket's last call was allowed. */
  readonly lastCallAt?: number;
  readonly usage: Usage;
}

const BUCKET_FIELD = /^(\d+):(.+)$/;
const LAST_CALL_FIELD = /^t:(\d+)$/;

/** The in-flight hash's fields (`<bucket start>:<metric>`, `t:<bucket start>`) as buckets, oldest first. */
export function bucketsOf(flat: readonly string[]): UsageBucket[] {
  const usageOf = new Map<number | undefined, Record<string, number>>();
  const lastCallOf = new Map<number, number>();
  for (let i = 0; i + 1 < flat.length; i += 2) {
    const field = flat[i] as string;
    const value = Number(flat[i + 1]);
    const lastCall = LAST_CALL_FIELD.exec(field);
    if (lastCall) {
      lastCallOf.set(Number(lastCall[1]), value);
      continue;
    }
    const bucket = BUCKET_FIELD.exec(field);
    const start = bucket ? Number(bucket[1]) : undefined;
    const metric = bucket ? (bucket[2] as string) : field;
    const usage = usageOf.get(start) ?? {};
    usage[metric] = (usage[metric] ?? 0) + value;
    usageOf.set(start, usage);
  }
  return [...usageOf.entries()]
    .sort(([a], [b]) => (a ?? Number.POSITIVE_INFINITY) - (b ?? Number.POSITIVE_INFINITY))
    .map(([start, usage]) => ({
      ...(start !== undefined && { start }),
      ...(start !== undefined && lastCallOf.has(start) && { lastCallAt: lastCallOf.get(start) }),
      usage,
    }));
}

export function totalUsage(buckets: readonly UsageBucket[]): Usage {
  const total: Record<string, number> = {};
  for (const bucket of buckets) {
    for (const [metric, value] of Object.entries(bucket.usage)) total[metric] = (total[metric] ?? 0) + value;
  }
  return total;
}
