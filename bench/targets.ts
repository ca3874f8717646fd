/** The design's performance targets (issue #6) and their evaluation: pure, so it is unit-tested. */
import { type AppFigures, appTargets } from './app-targets';
import { LIMITS } from './limits';
import { againstOriginalDesign, type SideBySideDesigns } from './original-design-targets';
import { median } from './stats';
import { fixed, grouped, type TargetResult } from './target-result';

/**
 * Report windows a credential's traffic spans: a window opens with the first publish and lasts
 * `windowSeconds`, so a span of d ms touches at most floor(d / window) + 1 of them. Window 0 means
 * one message per call.
 */
export function windowsSpanned(spanMs: number, windowSeconds: number, calls: number): number {
  if (windowSeconds === 0) return calls;
  return Math.floor(spanMs / (windowSeconds * 1000)) + 1;
}

/**
 * The distinct seconds (epoch seconds, the clock the first-call bound counts by) that spans of epoch ms
 * touch: a span from 1,999 to 2,001 ms touches two. Spans may share a second; it counts once.
 */
export function secondsTouched(spansMs: ReadonlyArray<readonly [number, number]>): number {
  const seconds = new Set<number>();
  for (const [startMs, endMs] of spansMs) {
    if (endMs < startMs) throw new RangeError(`a span ends before it starts: ${startMs} .. ${endMs}`);
    for (let second = Math.floor(startMs / 1000); second <= Math.floor(endMs / 1000); second++) {
      seconds.add(second);
    }
  }
  return seconds.size;
}

/** A flood of made-up keys against the bound on platform calls for credentials never seen. */
export interface UnknownKeyFloodTargetFigures {
  /** `unseenCredentialCallsPerSecond` of the run. */
  readonly bound: number;
  /** Counted at the local platform while the flood ran. */
  readonly platformCalls: number;
  /** Seconds of the bound's clock the flood touched (`secondsTouched`). */
  readonly gateSeconds: number;
  readonly calls: number;
  readonly platformBusy: number;
}

export interface HotKeyFigures {
  readonly project: {
    /** Authorizations measured after the priming first call. */
    readonly calls: number;
    /** From the start of the priming call to the end of the run: the span the key's windows cover. */
    readonly spanMs: number;
    readonly p50Ms: number;
    readonly authorizationsPerSecond: number;
    /** Commands the authorizer's Redis client sent, per authorization. */
    readonly redisCommandsPerAuthorization: number;
    readonly platformCalls: number;
    readonly snsPublishes: number;
    readonly flushPlatformCalls: number;
  };
  readonly baseline: { readonly p50Ms: number; readonly authorizationsPerSecond: number };
}

export interface BundleFigures {
  /** Bytes module init reads: the same file in every credential mode. */
  readonly minifiedBytes: number;
  readonly initMedianMs: number;
  /** The old module init (bundle, SNS SDK and lazy packages all at init), same processes. */
  readonly eagerInitMedianMs: number;
  /** 1-minute load average per core at the start of the run. */
  readonly loadPerCore: number;
}

/** Redis commands per refused call of a flood, sent by the client and run at the server. */
export interface FloodFigures {
  readonly sentPerCall: number;
  readonly executedPerCall: number;
}

export interface TargetInputs {
  readonly reportWindowSeconds: number;
  /** Absent when the run left the hot workload out (`--workloads`): its targets are then not judged. */
  readonly hot?: HotKeyFigures;
  readonly bundle: BundleFigures;
  /** spread-cluster: the authorizations each primary served (the project's). */
  readonly authorizationsPerPrimary?: readonly number[];
  /** flood-over-limit: Redis commands per refused call, sent by the client and run at the server. */
  readonly flood?: FloodFigures;
  /** flood-throttled: the same, of calls refused by a throttle. */
  readonly throttledFlood?: FloodFigures;
  readonly unknownKeyFlood?: UnknownKeyFloodTargetFigures;
  /** hot: CloudWatch Logs bytes per authorization as logged now, and as before (bench/log-bytes.ts). */
  readonly logBytes?: { readonly now: number; readonly before: number };
  /** hot-serial: its script time per authorization in each round (INFO commandstats, µs). */
  readonly hitScriptRoundMicros?: readonly number[];
  /**
   * The 1-minute load average per core at the run's start and end: from LIMITS.loadedPerCore on, the
   * targets read against the original design (throughput and CPU, which the other load moves) are not judged.
   * Where otherCpuPerCore is known it stands for the end's figure, which mostly counts the bench itself.
   */
  readonly loadPerCore?: { readonly start: number; readonly end: number };
  /** Other processes' CPU during the run, per core (other-load.ts); absent where it cannot be read. */
  readonly otherCpuPerCore?: number;
  /** Each side-by-side workload the run had (`--workloads` may leave some out): the others are not judged. */
  readonly designs?: SideBySideDesigns;
  /** The application workloads the run had; absent ones are not judged. */
  readonly app?: AppFigures;
}

/** The largest distance of a primary's share from an even split, as a fraction of the even share. */
export function largestShareDeviation(perPrimary: readonly number[]): number {
  const total = perPrimary.reduce((sum, n) => sum + n, 0);
  if (perPrimary.length === 0 || total === 0) return Number.POSITIVE_INFINITY;
  const even = total / perPrimary.length;
  return Math.max(...perPrimary.map((n) => Math.abs(n - even) / even));
}

/** Why the run's machine counts as loaded (LIMITS.loadedPerCore), or undefined when it is quiet. */
function loadedMachine(
  loadPerCore: TargetInputs['loadPerCore'],
  otherCpuPerCore: number | undefined,
): string | undefined {
  if (loadPerCore === undefined) return undefined;
  if (otherCpuPerCore === undefined) {
    return Math.max(loadPerCore.start, loadPerCore.end) >= LIMITS.loadedPerCore
      ? `loaded machine: load ${fixed(loadPerCore.start)} to ${fixed(loadPerCore.end)} per core`
      : undefined;
  }
  return Math.max(loadPerCore.start, otherCpuPerCore) >= LIMITS.loadedPerCore
    ? `loaded machine: load ${fixed(loadPerCore.start)} per core at the start, other processes' CPU ` +
        `${fixed(otherCpuPerCore)} per core during the run`
    : undefined;
}

export function evaluateTargets({
  reportWindowSeconds,
  hot,
  bundle,
  authorizationsPerPrimary,
  flood,
  throttledFlood,
  unknownKeyFlood,
  logBytes,
  hitScriptRoundMicros,
  loadPerCore,
  otherCpuPerCore,
  designs = {},
  app = {},
}: TargetInputs): TargetResult[] {
  const loaded = loadedMachine(loadPerCore, otherCpuPerCore);
  const unjudgedWhenLoaded = (target: TargetResult): TargetResult =>
    loaded ? { ...target, pass: true, notJudged: loaded } : target;
  return [
    ...(hot ? hotKeyTargets(hot, reportWindowSeconds) : []),
    ...appTargets(app),
    ...againstOriginalDesign(designs).map(unjudgedWhenLoaded),
    // Redis's script time is wall time: a machine loaded past its cores preempts Redis inside scripts.
    ...(hitScriptRoundMicros && hitScriptRoundMicros.length > 0
      ? [unjudgedWhenLoaded(hitScriptTarget(hitScriptRoundMicros))]
      : []),
    {
      id: 'bundle-size',
      target:
        `authorizer bundle read at init, key modes <= ${LIMITS.bundleBytes / 1000} KB minified ` +
        '(@aws-sdk/* external; packages loaded on first use apart)',
      measured: `${fixed(bundle.minifiedBytes / 1000, 1)} KB`,
      pass: bundle.minifiedBytes <= LIMITS.bundleBytes,
    },
    moduleInitTarget(bundle),
    {
      id: 'module-init-vs-eager',
      target: `authorizer module init <= ${LIMITS.initOfEager} x everything loaded at init (the old init, same run)`,
      measured: `${fixed(bundle.initMedianMs, 1)} ms against ${fixed(bundle.eagerInitMedianMs, 1)} ms`,
      pass: bundle.initMedianMs <= LIMITS.initOfEager * bundle.eagerInitMedianMs,
    },
    ...(authorizationsPerPrimary ? [primaryShareTarget(authorizationsPerPrimary)] : []),
    ...(flood ? [floodTarget('flood-redis', 'refused flood', flood)] : []),
    ...(throttledFlood
      ? [floodTarget('flood-throttled-redis', 'throttled flood (rate_limited)', throttledFlood)]
      : []),
    ...(unknownKeyFlood ? [unknownKeyFloodTarget(unknownKeyFlood)] : []),
    ...(logBytes
      ? [
          {
            id: 'hot-log-bytes',
            target: `hot: CloudWatch Logs bytes per authorization <= ${LIMITS.logBytesPerAuthorization} (averaged, the counts held at the end written as at shutdown)`,
            measured:
              `${fixed(logBytes.now, 2)} bytes; before (an EMF line per invocation, Lambda's text-format ` +
              `START/END/REPORT lines): ${fixed(logBytes.before, 1)} bytes`,
            pass: logBytes.now <= LIMITS.logBytesPerAuthorization,
          },
        ]
      : []),
  ];
}

/**
 * The median of the rounds, and the rounds' spread beside it; and what the median means for one shard,
 * whose one thread runs every script: 1 / script time decisions a second.
 */
function hitScriptTarget(rounds: readonly number[]): TargetResult {
  const middle = median(rounds);
  return {
    id: 'hit-script',
    target: `cache hit: script time <= ${LIMITS.hitScriptMicros} µs (hot-serial, INFO commandstats, median of its rounds)`,
    measured:
      `${fixed(middle, 1)} µs (${rounds.length} rounds, from ${fixed(Math.min(...rounds), 1)} to ` +
      `${fixed(Math.max(...rounds), 1)}): ${grouped(1_000_000 / middle)} decisions a second per shard`,
    pass: middle <= LIMITS.hitScriptMicros,
  };
}

function floodTarget(id: string, what: string, flood: FloodFigures): TargetResult {
  return {
    id,
    target: `${what}: Redis commands sent per refused call <= ${LIMITS.floodRedisCommandsPerCall}`,
    measured:
      `${fixed(flood.sentPerCall, 4)} sent ` +
      `(${fixed(flood.executedPerCall, 4)} run at the server, the scripts' own commands included)`,
    pass: flood.sentPerCall <= LIMITS.floodRedisCommandsPerCall,
  };
}

/**
 * The bound holds per second of its own clock, so the flood's platform calls are at most the bound times
 * the seconds it touched; calls over seconds touched is the figure.
 */
function unknownKeyFloodTarget(flood: UnknownKeyFloodTargetFigures): TargetResult {
  const perSecond = flood.platformCalls / flood.gateSeconds;
  return {
    id: 'flood-unknown-platform',
    target: `flood of made-up keys: platform calls per second <= the bound (unseenCredentialCallsPerSecond ${flood.bound})`,
    measured:
      `${fixed(perSecond, 1)} per second (${flood.platformCalls} over ${flood.gateSeconds} s); ` +
      `${flood.platformBusy} of ${flood.calls} calls refused platform_busy`,
    pass: flood.platformCalls <= flood.bound * flood.gateSeconds,
  };
}

/** 60 ms holds on a quiet machine; on a loaded one the same-run ratio (module-init-vs-eager) judges. */
function moduleInitTarget(bundle: BundleFigures): TargetResult {
  const target = `authorizer module init <= ${LIMITS.initMs} ms (median, fresh process, quiet machine)`;
  const measured = `${fixed(bundle.initMedianMs, 1)} ms`;
  if (bundle.loadPerCore >= LIMITS.loadedPerCore) {
    return {
      id: 'module-init',
      target,
      measured: `${measured} (loaded machine, load ${fixed(bundle.loadPerCore)} per core: not judged)`,
      pass: true,
    };
  }
  return { id: 'module-init', target, measured, pass: bundle.initMedianMs <= LIMITS.initMs };
}

function hotKeyTargets({ project, baseline }: HotKeyFigures, reportWindowSeconds: number): TargetResult[] {
  const windows = windowsSpanned(project.spanMs, reportWindowSeconds, project.calls + 1);
  const maxPublishes = windows;
  const maxFlushCalls = LIMITS.flushPlatformCallsPerCredentialWindow * windows;
  const windowText =
    reportWindowSeconds === 0
      ? 'window 0: one per call'
      : `${fixed(project.spanMs / 1000)} s / ${reportWindowSeconds} s window, +1`;
  const p50Ratio = baseline.p50Ms / project.p50Ms;
  const throughputRatio = project.authorizationsPerSecond / baseline.authorizationsPerSecond;
  return [
    {
      id: 'cache-hit-redis',
      target: `cache hit: Redis commands per authorization <= ${LIMITS.redisCommandsPerHit}`,
      measured: fixed(project.redisCommandsPerAuthorization, 3),
      pass: project.redisCommandsPerAuthorization <= LIMITS.redisCommandsPerHit,
    },
    {
      id: 'cache-hit-platform',
      target: `cache hit: platform calls = ${LIMITS.hitPlatformCalls}`,
      measured: String(project.platformCalls),
      pass: project.platformCalls <= LIMITS.hitPlatformCalls,
    },
    {
      id: 'hot-sns-publishes',
      target: `hot key: SNS publishes <= ${maxPublishes} (${windowText})`,
      measured: String(project.snsPublishes),
      pass: project.snsPublishes <= maxPublishes,
    },
    {
      id: 'hot-flush-platform',
      target: `hot key: platform calls after the flush <= ${maxFlushCalls} (2 per credential per window)`,
      measured: String(project.flushPlatformCalls),
      pass: project.flushPlatformCalls <= maxFlushCalls,
    },
    {
      id: 'hot-p50',
      target: `hot key: p50 <= baseline p50 / ${LIMITS.p50SpeedUp} (${fixed(baseline.p50Ms / LIMITS.p50SpeedUp, 3)} ms)`,
      measured: `${fixed(project.p50Ms, 3)} ms (${fixed(p50Ratio, 1)}x faster)`,
      pass: project.p50Ms * LIMITS.p50SpeedUp <= baseline.p50Ms,
    },
    {
      id: 'hot-throughput',
      target: `hot key: throughput >= ${LIMITS.throughputSpeedUp} x baseline (${fixed(baseline.authorizationsPerSecond * LIMITS.throughputSpeedUp, 0)}/s)`,
      measured: `${fixed(project.authorizationsPerSecond, 0)}/s (${fixed(throughputRatio, 1)}x)`,
      pass: project.authorizationsPerSecond >= LIMITS.throughputSpeedUp * baseline.authorizationsPerSecond,
    },
  ];
}

function primaryShareTarget(perPrimary: readonly number[]): TargetResult {
  const deviation = largestShareDeviation(perPrimary);
  const total = perPrimary.reduce((sum, n) => sum + n, 0);
  return {
    id: 'cluster-primary-share',
    target: `spread-cluster: each primary's share within ±${LIMITS.primaryShareDeviation * 100}% of an even split (1/${perPrimary.length})`,
    measured: `${perPrimary.map((n) => `${fixed((100 * n) / total, 1)}%`).join(' / ')} (largest deviation ${fixed(100 * deviation, 1)}%)`,
    pass: deviation <= LIMITS.primaryShareDeviation,
  };
}
