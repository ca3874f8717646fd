/**
 * The comparisons between two workloads of one run (the project's design): the latency a step adds to a
 * call, the share of throughput or Redis time a feature costs. Those with a limit are targets too.
 */
import { LIMITS } from './limits';
import { type PairedFigure, pairedRatios, pairedRoundsNote } from './paired-rounds';
import { median } from './stats';
import { fixed, percent, signed, signedPercent, type TargetResult } from './target-result';

/**
 * How one workload's figures are read against another's from the same run: the latency a step adds to a
 * call, or the share of throughput a feature costs.
 */
export type ComparisonMeasure =
  | 'latency-added'
  | 'latency-ratio'
  | 'throughput-loss'
  | 'redis-cpu-added'
  | 'redis-script-time-added'
  | 'throughput-speed-up';

/** A comparison of two workloads of one run (project design), with a limit when it is a target. */
export interface Comparison {
  readonly id: string;
  readonly what: string;
  readonly workload: string;
  readonly against: string;
  readonly measure: ComparisonMeasure;
  /**
   * ms added to the p50 (latency-added), the p50 as a multiple of the other's (latency-ratio), the fraction of throughput lost (throughput-loss), of Redis CPU
   * per authorization added (redis-cpu-added) or of Redis script time per authorization added
   * (redis-script-time-added); none: a figure only.
   */
  readonly limit?: number;
}

export const COMPARISONS: readonly Comparison[] = [
  {
    id: 'soap-overhead',
    what: 'SOAP proxy overhead per call (read the envelope, decide, answer)',
    workload: 'soap',
    against: 'hot-serial',
    measure: 'latency-added',
  },
  {
    id: 'http-v2-adapter-p50-added',
    what: 'the HTTP API payload 2.0 adapter (simple responses) against the REST adapter, same calls',
    workload: 'http-v2-serial',
    against: 'hot-serial',
    measure: 'latency-added',
    limit: LIMITS.httpAdapterP50AddedMs,
  },
  {
    id: 'app-id-vs-user-key',
    what: 'an application id without a key (what a verified token becomes) against a user key',
    workload: 'app-id-serial',
    against: 'hot-serial',
    measure: 'latency-added',
  },
  {
    id: 'oauth-p50-added',
    what: 'JWT verification on a cache hit: the same keyless application by token and by app id',
    workload: 'oauth',
    against: 'app-id-serial',
    measure: 'latency-added',
    limit: LIMITS.tokenP50AddedMs,
  },
  {
    id: 'flood-throughput',
    what: 'refused calls of one application over its limit against the hot key’s allowed calls (32 callers each)',
    workload: 'flood-over-limit',
    against: 'hot',
    measure: 'throughput-speed-up',
    // The measure's difference is the hot key's throughput over the flood's.
    limit: 1 / LIMITS.floodThroughputSpeedUp,
  },
  {
    id: 'flood-unknown-hot-p50',
    what: 'the hot key while made-up keys flood (32 callers each) against the hot key alone',
    workload: 'flood-unknown-keys',
    against: 'hot-without-flood',
    measure: 'latency-ratio',
    limit: LIMITS.unknownFloodHotP50Ratio,
  },
  {
    id: 'alerts-throughput-loss',
    what: 'usage alerts on (levels 80 and 100 %, not reached) against off',
    workload: 'hot-alerts-on',
    against: 'hot-alerts-off',
    measure: 'throughput-loss',
    limit: LIMITS.alertsThroughputLoss,
  },
  {
    id: 'throttle-p50-added',
    what: 'a throttle on the plan (GCRA in the hot-path script, never refusing) against none',
    workload: 'throttled-serial',
    against: 'hot-serial',
    measure: 'latency-added',
    limit: LIMITS.throttleP50AddedMs,
  },
  {
    id: 'throttle-redis-cpu',
    what: "the throttle's cost to Redis: server CPU per authorization (INFO cpu, kernel and network included) against none",
    workload: 'throttled-serial',
    against: 'hot-serial',
    measure: 'redis-cpu-added',
    limit: LIMITS.throttleRedisCpuAdded,
  },
  {
    id: 'throttle-redis-script',
    what: "the throttle's cost inside Redis: script time per authorization (INFO commandstats) against none",
    workload: 'throttled-serial',
    against: 'hot-serial',
    measure: 'redis-script-time-added',
  },
];

export interface ComparedFigures {
  readonly p50Ms: number;
  readonly meanMs: number;
  readonly authorizationsPerSecond: number;
  /** The bench process's CPU time per call: the least load-skewed figure of a call's own cost. */
  readonly cpuMicrosPerCall: number;
  /** Calls per second in each round, when the workload ran interleaved with others. */
  readonly roundThroughputs?: readonly number[];
  /** The Redis server's CPU time per authorization (INFO cpu), when measured. */
  readonly redisCpuMicrosPerCall?: number;
  /** The same in each round, when the workload ran interleaved with others. */
  readonly roundRedisCpuMicrosPerCall?: readonly number[];
  /** The Redis server's script time per authorization (INFO commandstats), when measured. */
  readonly scriptMicrosPerCall?: number;
  /** The same in each round, when the workload ran interleaved with others. */
  readonly roundScriptMicrosPerCall?: readonly number[];
}

export interface ComparisonResult {
  readonly id: string;
  readonly what: string;
  readonly workload: string;
  readonly against: string;
  /** The workload's figure, then the one it is compared with. */
  readonly figures: readonly [string, string];
  readonly difference: string;
  /** The limit in words and whether it holds; absent for a figure without a target. */
  readonly target?: { readonly text: string; readonly pass: boolean };
}

interface Measure {
  figure(figures: ComparedFigures): string;
  /** ms added (latency-added) or the fraction lost (throughput-loss). */
  difference(workload: ComparedFigures, against: ComparedFigures): number;
  differenceText(workload: ComparedFigures, against: ComparedFigures): string;
  targetText(limit: number): string;
}

/** The figures the comparisons read round by round when two workloads ran in the same rounds. */
export const THROUGHPUT: PairedFigure<ComparedFigures> = {
  total: (f) => f.authorizationsPerSecond,
  rounds: (f) => f.roundThroughputs,
};
export const REDIS_CPU: PairedFigure<ComparedFigures> = {
  total: (f) => f.redisCpuMicrosPerCall,
  rounds: (f) => f.roundRedisCpuMicrosPerCall,
};
export const SCRIPT_TIME: PairedFigure<ComparedFigures> = {
  total: (f) => f.scriptMicrosPerCall,
  rounds: (f) => f.roundScriptMicrosPerCall,
};

/**
 * The fraction of throughput lost: one minus the median of the round ratios. On a machine of two shared
 * cores a chunk of 32 callers now and then runs at two or three times the usual rate (the Redis replies
 * batch up), and that is no cost of either set-up: the median of paired rounds leaves such a round out,
 * where the ratio of the totals would credit it to whichever set-up it fell on.
 */
const throughputLoss = (w: ComparedFigures, a: ComparedFigures) => 1 - median(pairedRatios(w, a, THROUGHPUT));

/**
 * The fraction of a figure the workload adds to the other's: the median of the round ratios, minus one,
 * for the same reason as `throughputLoss`. On a machine of two shared cores one chunk now and then costs
 * Redis far more or less CPU per call than the rest (the same code read +4.9 to +21.7 % of INFO cpu on
 * the totals). Script time (INFO commandstats) leaves out the kernel's and the network's part of waking
 * Redis for each call, but it is the time on a monotonic clock from a command's start to its end, not CPU
 * time: a script the machine takes Redis off the CPU during counts that pause, so a loaded machine still
 * spreads the rounds.
 */
const fractionAdded = (figure: PairedFigure<ComparedFigures>) => (w: ComparedFigures, a: ComparedFigures) =>
  median(pairedRatios(w, a, figure)) - 1;

/** A measure of the fraction of `figure` the workload adds, as `<+x%> <what><rounds><after>`. */
function addedMeasure(
  figure: PairedFigure<ComparedFigures>,
  what: string,
  figureText: (f: ComparedFigures) => string,
  after: (w: ComparedFigures, a: ComparedFigures) => string = () => '',
): Measure {
  const added = fractionAdded(figure);
  return {
    figure: figureText,
    difference: added,
    differenceText: (w, a) => {
      const ratios = pairedRatios(w, a, figure);
      const rounds = pairedRoundsNote(
        ratios,
        signedPercent(Math.min(...ratios) - 1),
        signedPercent(Math.max(...ratios) - 1),
      );
      return `${signedPercent(added(w, a))} ${what}${rounds}${after(w, a)}`;
    },
    targetText: (limit) => `${what} added <= ${limit * 100}%`,
  };
}

const latencyFigure = (f: ComparedFigures) =>
  `p50 ${fixed(f.p50Ms, 3)} ms, mean ${fixed(f.meanMs, 3)} ms, CPU ${fixed(f.cpuMicrosPerCall, 0)} µs`;

const MEASURES: Readonly<Record<ComparisonMeasure, Measure>> = {
  'latency-added': {
    figure: latencyFigure,
    difference: (w, a) => w.p50Ms - a.p50Ms,
    differenceText: (w, a) =>
      `p50 ${signed(w.p50Ms - a.p50Ms, 3)} ms, mean ${signed(w.meanMs - a.meanMs, 3)} ms, ` +
      `CPU ${signed(w.cpuMicrosPerCall - a.cpuMicrosPerCall, 0)} µs`,
    targetText: (limit) => `p50 added <= ${limit} ms`,
  },
  'latency-ratio': {
    figure: latencyFigure,
    difference: (w, a) => w.p50Ms / a.p50Ms,
    differenceText: (w, a) =>
      `p50 ${fixed(w.p50Ms / a.p50Ms, 2)}x (${signed(w.p50Ms - a.p50Ms, 3)} ms), mean ${fixed(w.meanMs / a.meanMs, 2)}x, ` +
      `CPU ${signed(w.cpuMicrosPerCall - a.cpuMicrosPerCall, 0)} µs`,
    targetText: (limit) => `p50 <= ${limit}x`,
  },
  'throughput-loss': {
    figure: (f) => `${fixed(f.authorizationsPerSecond, 0)}/s, CPU ${fixed(f.cpuMicrosPerCall, 1)} µs/call`,
    difference: throughputLoss,
    differenceText: (w, a) => {
      const loss = throughputLoss(w, a);
      const ratios = pairedRatios(w, a, THROUGHPUT);
      const rounds = pairedRoundsNote(
        ratios,
        percent(1 - Math.max(...ratios)),
        percent(1 - Math.min(...ratios)),
      );
      return (
        `${percent(Math.abs(loss))} ${loss < 0 ? 'gained' : 'lost'}${rounds}, ` +
        `CPU ${signed(w.cpuMicrosPerCall - a.cpuMicrosPerCall, 1)} µs/call`
      );
    },
    targetText: (limit) => `throughput lost <= ${limit * 100}%`,
  },
  'redis-cpu-added': addedMeasure(
    REDIS_CPU,
    'Redis CPU per authorization',
    (f) => `Redis CPU ${fixed(f.redisCpuMicrosPerCall ?? Number.NaN, 1)} µs/authorization`,
    (w, a) => `, p50 ${signed(w.p50Ms - a.p50Ms, 3)} ms`,
  ),
  'redis-script-time-added': addedMeasure(
    SCRIPT_TIME,
    'Redis script time per authorization',
    (f) => `script ${fixed(f.scriptMicrosPerCall ?? Number.NaN, 1)} µs/authorization`,
  ),
  'throughput-speed-up': {
    figure: (f) => `${fixed(f.authorizationsPerSecond, 0)}/s, CPU ${fixed(f.cpuMicrosPerCall, 1)} µs/call`,
    difference: (w, a) => 1 / median(pairedRatios(w, a, THROUGHPUT)),
    differenceText: (w, a) =>
      `${fixed(median(pairedRatios(w, a, THROUGHPUT)), 2)}x the throughput, ` +
      `CPU ${signed(w.cpuMicrosPerCall - a.cpuMicrosPerCall, 1)} µs/call`,
    targetText: (limit) => `throughput >= ${fixed(1 / limit, 1)}x`,
  },
};

/** Each comparison whose two workloads ran, with its difference and, for a target, whether it holds. */
export function evaluateComparisons(
  figuresOf: (workload: string) => ComparedFigures | undefined,
  comparisons: readonly Comparison[] = COMPARISONS,
): ComparisonResult[] {
  return comparisons.flatMap((comparison) => {
    const workload = figuresOf(comparison.workload);
    const against = figuresOf(comparison.against);
    if (!workload || !against) return [];
    const measure = MEASURES[comparison.measure];
    const { limit } = comparison;
    return [
      {
        id: comparison.id,
        what: comparison.what,
        workload: comparison.workload,
        against: comparison.against,
        figures: [measure.figure(workload), measure.figure(against)] as const,
        difference: measure.differenceText(workload, against),
        ...(limit !== undefined && {
          target: { text: measure.targetText(limit), pass: measure.difference(workload, against) <= limit },
        }),
      },
    ];
  });
}

/** The comparisons that are targets, as targets (so `--check` holds them too). */
export function comparisonTargets(results: readonly ComparisonResult[]): TargetResult[] {
  return results.flatMap((result) =>
    result.target
      ? [
          {
            id: result.id,
            target: `${result.workload} against ${result.against} (same run): ${result.target.text}`,
            measured: result.difference,
            pass: result.target.pass,
          },
        ]
      : [],
  );
}
