/** Latency statistics of a benchmark run: pure functions, no timing of their own. */

/**
 * Nearest-rank percentile: the smallest value with at least `p` percent of the values at or below it.
 * Never interpolates, so the answer is always a latency that was actually observed.
 */
export function percentile(sortedAscending: ArrayLike<number>, p: number): number {
  if (!(p > 0 && p <= 100)) throw new RangeError(`percentile must be in (0, 100], got ${p}`);
  if (sortedAscending.length === 0) throw new RangeError('percentile of an empty sample');
  const rank = Math.ceil((p / 100) * sortedAscending.length);
  return sortedAscending[rank - 1] as number;
}

/**
 * The middle value, the mean of the two middle ones for an even count: unlike `percentile`, it may be a
 * value not observed (for ratios, not latencies).
 */
export function median(values: readonly number[]): number {
  if (values.length === 0) throw new RangeError('median of no values');
  const sorted = [...values].sort((x, y) => x - y);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1
    ? (sorted[middle] as number)
    : ((sorted[middle - 1] as number) + (sorted[middle] as number)) / 2;
}

export interface LatencySummary {
  readonly count: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
  readonly maxMs: number;
  readonly meanMs: number;
}

/** Summarises per-call latencies given in nanoseconds (process.hrtime.bigint differences). */
export function summarizeLatencies(latenciesNs: Float64Array): LatencySummary {
  const sorted = Float64Array.from(latenciesNs).sort();
  const toMs = (ns: number) => ns / 1e6;
  let total = 0;
  for (const ns of sorted) total += ns;
  return {
    count: sorted.length,
    p50Ms: toMs(percentile(sorted, 50)),
    p99Ms: toMs(percentile(sorted, 99)),
    maxMs: toMs(sorted[sorted.length - 1] as number),
    meanMs: toMs(total / sorted.length),
  };
}

/** Calls per second over a wall-clock duration. */
export function throughput(calls: number, durationMs: number): number {
  if (!(durationMs > 0)) throw new RangeError(`duration must be positive, got ${durationMs}`);
  return (calls * 1000) / durationMs;
}
