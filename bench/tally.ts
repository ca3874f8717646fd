/**
 * What a workload's measured chunks add up to. A workload of an interleaved group is measured in several
 * chunks (bench/workloads.ts `interleavedChunks`); one that runs alone in one. Pure, so it is unit-tested.
 */
import type { RunningPlatform } from '../local/platform';
import type { PlatformCalls } from './report';
import { throughput } from './stats';

/** What one primary of the Redis under test did over a chunk. */
export interface PrimaryChunk {
  readonly byCommand: ReadonlyArray<readonly [string, number]>;
  readonly cpuSeconds: number;
  /** µs it spent executing scripts (INFO commandstats: `diffCommandStats`' scriptMicros). */
  readonly scriptMicros: number;
}

/** One measured chunk: calls `from` .. `from + latenciesNs.length - 1`, then the flush that followed it. */
export interface ChunkFigures {
  readonly from: number;
  readonly latenciesNs: Float64Array;
  readonly outcomes: Readonly<Partial<Record<string, number>>>;
  readonly durationMs: number;
  /** The bench process's CPU time over the chunk's calls. */
  readonly cpuMicros: number;
  readonly redisCommandsSent: number;
  readonly snsPublishes: number;
  readonly platformCalls: PlatformCalls;
  /** One entry per primary, in the same order every chunk. */
  readonly primaries: readonly PrimaryChunk[];
  readonly flush: { readonly durationMs: number; readonly platformCalls: PlatformCalls };
}

export const NO_PLATFORM_CALLS: PlatformCalls = { total: 0, byEndpoint: {} };

export function addPlatformCalls(a: PlatformCalls, b: PlatformCalls): PlatformCalls {
  const byEndpoint: Record<string, number> = { ...a.byEndpoint };
  for (const [endpoint, calls] of Object.entries(b.byEndpoint)) {
    byEndpoint[endpoint] = (byEndpoint[endpoint] ?? 0) + calls;
  }
  return { total: a.total + b.total, byEndpoint };
}

/** The platform's calls so far: `authorize`, `authrep` and `report` requests. */
export function platformCallsOf(platform: RunningPlatform): PlatformCalls {
  const { authorize, authrep, report } = platform.stats();
  return { total: authorize + authrep + report, byEndpoint: { authorize, authrep, report } };
}

/** The calls made between two readings of `platformCallsOf`. */
export function platformCallsBetween(before: PlatformCalls, after: PlatformCalls): PlatformCalls {
  const byEndpoint = Object.fromEntries(
    Object.entries(after.byEndpoint).map(([endpoint, calls]) => [
      endpoint,
      calls - (before.byEndpoint[endpoint] ?? 0),
    ]),
  );
  return { total: after.total - before.total, byEndpoint };
}

/** Adds each command's count into `totals`. */
function addCounts(totals: Map<string, number>, counts: Iterable<readonly [string, number]>): void {
  for (const [command, count] of counts) totals.set(command, (totals.get(command) ?? 0) + count);
}

/** Per-command totals, largest first. */
function sortedCounts(counts: ReadonlyMap<string, number>): Array<[string, number]> {
  return [...counts].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]));
}

interface PrimaryTotals {
  readonly byCommand: Map<string, number>;
  cpuSeconds: number;
  scriptMicros: number;
}

/** The sums of a workload's chunks; every call index must be measured exactly once. */
export class Tally {
  readonly latenciesNs: Float64Array;
  private readonly measured: Uint8Array;
  private readonly outcomeCounts: Record<string, number> = {};
  private readonly primaryTotals: PrimaryTotals[] = [];
  private readonly chunks: Array<{
    readonly from: number;
    readonly throughput: number;
    readonly redisCpuMicrosPerCall: number;
    readonly scriptMicrosPerCall: number;
  }> = [];
  durationMs = 0;
  cpuMicros = 0;
  redisCommandsSent = 0;
  snsPublishes = 0;
  platformCalls = NO_PLATFORM_CALLS;
  flushDurationMs = 0;
  flushPlatformCalls = NO_PLATFORM_CALLS;

  constructor(readonly calls: number) {
    this.latenciesNs = new Float64Array(calls);
    this.measured = new Uint8Array(calls);
  }

  add(chunk: ChunkFigures): void {
    const end = chunk.from + chunk.latenciesNs.length;
    if (chunk.from < 0 || end > this.calls) {
      throw new RangeError(`chunk ${chunk.from}..${end - 1} is outside the ${this.calls} calls`);
    }
    if (this.measured.subarray(chunk.from, end).some((seen) => seen === 1)) {
      throw new Error(`chunk ${chunk.from}..${end - 1} measures a call a second time`);
    }
    this.measured.fill(1, chunk.from, end);
    const redisCpuSeconds = chunk.primaries.reduce((sum, primary) => sum + primary.cpuSeconds, 0);
    const scriptMicros = chunk.primaries.reduce((sum, primary) => sum + primary.scriptMicros, 0);
    this.chunks.push({
      from: chunk.from,
      throughput: throughput(chunk.latenciesNs.length, chunk.durationMs),
      redisCpuMicrosPerCall: (redisCpuSeconds * 1e6) / chunk.latenciesNs.length,
      scriptMicrosPerCall: scriptMicros / chunk.latenciesNs.length,
    });
    this.latenciesNs.set(chunk.latenciesNs, chunk.from);
    for (const [outcome, count] of Object.entries(chunk.outcomes)) {
      this.outcomeCounts[outcome] = (this.outcomeCounts[outcome] ?? 0) + (count ?? 0);
    }
    this.durationMs += chunk.durationMs;
    this.cpuMicros += chunk.cpuMicros;
    this.redisCommandsSent += chunk.redisCommandsSent;
    this.snsPublishes += chunk.snsPublishes;
    this.platformCalls = addPlatformCalls(this.platformCalls, chunk.platformCalls);
    this.flushDurationMs += chunk.flush.durationMs;
    this.flushPlatformCalls = addPlatformCalls(this.flushPlatformCalls, chunk.flush.platformCalls);
    chunk.primaries.forEach((primary, i) => {
      const totals = this.primaryTotals[i] ?? {
        byCommand: new Map<string, number>(),
        cpuSeconds: 0,
        scriptMicros: 0,
      };
      this.primaryTotals[i] = totals;
      addCounts(totals.byCommand, primary.byCommand);
      totals.cpuSeconds += primary.cpuSeconds;
      totals.scriptMicros += primary.scriptMicros;
    });
  }

  /** Whether every call has been measured. */
  get complete(): boolean {
    return this.measured.every((seen) => seen === 1);
  }

  /** Calls per second of each chunk, in call order: of an interleaved workload, one per round. */
  get chunkThroughputs(): number[] {
    return this.inCallOrder().map((chunk) => chunk.throughput);
  }

  /**
   * The Redis server's CPU time per call of each chunk (µs, every primary's summed), in call order: of an
   * interleaved workload, one per round.
   */
  get chunkRedisCpuMicrosPerCall(): number[] {
    return this.inCallOrder().map((chunk) => chunk.redisCpuMicrosPerCall);
  }

  /**
   * The Redis server's script time per call of each chunk (µs, INFO commandstats, every primary's summed),
   * in call order: of an interleaved workload, one per round.
   */
  get chunkScriptMicrosPerCall(): number[] {
    return this.inCallOrder().map((chunk) => chunk.scriptMicrosPerCall);
  }

  private inCallOrder() {
    return [...this.chunks].sort((a, b) => a.from - b.from);
  }

  get outcomes(): Readonly<Partial<Record<string, number>>> {
    return this.outcomeCounts;
  }

  /**
   * Per primary: commands executed (total and by command), server CPU seconds and script time (µs) over
   * every chunk.
   */
  get primaries(): Array<{
    total: number;
    byCommand: Array<[string, number]>;
    cpuSeconds: number;
    scriptMicros: number;
  }> {
    return this.primaryTotals.map((totals) => ({
      total: [...totals.byCommand.values()].reduce((sum, count) => sum + count, 0),
      byCommand: sortedCounts(totals.byCommand),
      cpuSeconds: totals.cpuSeconds,
      scriptMicros: totals.scriptMicros,
    }));
  }

  /** Per-command totals over every primary. */
  get executedByCommand(): Array<[string, number]> {
    const totals = new Map<string, number>();
    for (const primary of this.primaryTotals) addCounts(totals, primary.byCommand);
    return sortedCounts(totals);
  }
}
