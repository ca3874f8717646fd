/** The design's performance targets (issue #6) and their evaluation: pure, so it is unit-tested. */
import { median } from './stats';

export const LIMITS = {
  /** Invariant 1: a cache hit is one Redis round trip; 5% slack for the rare resync or publish-path command. */
  redisCommandsPerHit: 1.05,
  hitPlatformCalls: 0,
  /** One report and one authorize (the cache resync) per credential per report window. */
  flushPlatformCallsPerCredentialWindow: 2,
  /** The project's hot-key p50 must be at most the baseline's divided by this. */
  p50SpeedUp: 5,
  /** The project's hot-key throughput must be at least the baseline's times this. */
  throughputSpeedUp: 3,
  /** SI kilobytes: 300 KB = 300,000 bytes. */
  bundleBytes: 300_000,
  /** Module init on a quiet machine (issue 23). */
  initMs: 60,
  /** Module init at most this fraction of the old one (everything loaded at init), in the same run. */
  initOfEager: 0.5,
  /** A 1-minute load average per core from which the machine counts as loaded: 60 ms is not judged there. */
  loadedPerCore: 0.5,
  /** spread-cluster: each primary's share of the authorizations within this of an even split. */
  primaryShareDeviation: 0.15,
  /** oauth: JWT verification may add at most this to the p50 of a cache hit (issue #12). */
  tokenP50AddedMs: 0.3,
  /** The HTTP API payload 2.0 adapter may add at most this to the p50 of a cache hit (issue #22). */
  httpAdapterP50AddedMs: 0.05,
  /** Usage alerts on may cost the hot key at most this fraction of its throughput (issue #13). */
  alertsThroughputLoss: 0.05,
  /** A throttle may add at most this to the p50 of a cache hit (issue #25). */
  throttleP50AddedMs: 0.05,
  /**
   * ... and at most this fraction to the Redis server's CPU per authorization (INFO cpu, issue #25). The
   * script's own time (INFO commandstats) is printed beside it, a figure only: it shows what the throttle
   * adds inside Redis without the kernel's share of a call, which on a machine of two shared cores spreads
   * the same code's paired rounds from -16 % to +59 %.
   */
  throttleRedisCpuAdded: 0.1,
  /** hot: CloudWatch Logs bytes per authorization, averaged, as the functions log now (issue 34). */
  logBytesPerAuthorization: 50,
  /** A refused flood, over a limit (issue 23) or a throttle (issue 34): Redis commands per refused call at most this. */
  floodRedisCommandsPerCall: 0.01,
  /** A refused flood: its throughput at least this many times the hot key's allowed calls (issue 23). */
  floodThroughputSpeedUp: 3,
  /**
   * The hot key's p50 while made-up keys flood, as a multiple of its p50 alone (issue 23): the flood's 32
   * callers share the hot key's process, event loop and Redis connection here (docs/performance.md).
   */
  unknownFloodHotP50Ratio: 4,
  /**
   * cold: first calls' throughput at least this times the original design's, same run: a floor to hold
   * (issue 34), since in a deployment a first call's platform round trip dwarfs its Redis time.
   */
  coldThroughputOfBaseline: 0.6,
  /** cold: Redis CPU per first call at most this times the original design's, same run (issue 34's floor). */
  coldRedisCpuOfBaseline: 2.5,
  /** spread: Redis CPU per authorization at most this times the original design's, same run (issue 23). */
  spreadRedisCpuOfBaseline: 1.2,
  /** hot: Redis CPU per authorization at most the original design's (issue 34). */
  hotRedisCpuOfBaseline: 1.0,
  /**
   * hot-serial: a cache hit's script time (INFO commandstats, the median of paired rounds) at most this
   * many µs (issue 34): Redis runs scripts on one thread, so 1 / script time is a shard's decisions a second.
   */
  hitScriptMicros: 10,
  /** The plugin may add at most this to the bare application's p50, one caller (issue 30). */
  appP50AddedMs: 0.3,
  /** The plugin's p50 at most this fraction of the original plugin design's, one caller (issue 30). */
  appP50OfOriginal: 0.1,
  /** The plugin's throughput at least this many times the original plugin design's, 32 callers (issue 30). */
  appThroughputSpeedUp: 3,
} as const;

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

/** One design's figures in a workload both designs ran. */
export interface DesignFigures {
  readonly authorizationsPerSecond: number;
  /** The Redis server's CPU time per authorization (INFO cpu). */
  readonly redisCpuMicrosPerCall: number;
}

/** The workloads whose project figures are judged against the original design's of the same run. */
export type SideBySideWorkload = 'hot' | 'spread' | 'cold';

export interface SideBySideFigures {
  readonly project: DesignFigures;
  readonly baseline: DesignFigures;
}

/** Redis commands per refused call of a flood, sent by the client and run at the server. */
export interface FloodFigures {
  readonly sentPerCall: number;
  readonly executedPerCall: number;
}

/** The application workloads (issue 30): the app behind the plugin, bare, and behind the original plugin design. */
export interface AppFigures {
  /** app-serial, one caller: the p50 of each design (ms). */
  readonly serial?: { readonly unprotected: number; readonly project: number; readonly baseline: number };
  /** app-hot, 32 callers. */
  readonly hot?: {
    readonly projectPerSecond: number;
    readonly baselinePerSecond: number;
    /** Commands the plugin's Redis connection sent per allowed call (cache hits: the key was primed). */
    readonly redisCommandsPerCall: number;
  };
  /** app-refused: commands the plugin's Redis connection sent per refused call of a key over its limit. */
  readonly refusedRedisCommandsPerCall?: number;
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
  readonly designs?: Readonly<Partial<Record<SideBySideWorkload, SideBySideFigures>>>;
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

export interface TargetResult {
  readonly id: string;
  readonly target: string;
  readonly measured: string;
  /** True too when the target was not judged (`notJudged`): `--check` fails only on a judged target. */
  readonly pass: boolean;
  /** Why the run cannot judge the target (a loaded machine): it is then neither passed nor failed. */
  readonly notJudged?: string;
}

const fixed = (value: number, digits = 2) => value.toFixed(digits);
const signed = (value: number, digits: number) => `${value < 0 ? '' : '+'}${fixed(value, digits)}`;
const grouped = (value: number) => Math.round(value).toLocaleString('en-US');

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

/** The plugin against the bare application and the original plugin design, same run (issue 30). */
function appTargets({ serial, hot, refusedRedisCommandsPerCall }: AppFigures): TargetResult[] {
  const targets: TargetResult[] = [];
  if (hot) {
    const ratio = hot.projectPerSecond / hot.baselinePerSecond;
    targets.push(
      {
        id: 'app-hit-redis',
        target: `app behind the plugin, cache hit: Redis commands per call <= ${LIMITS.redisCommandsPerHit}`,
        measured: fixed(hot.redisCommandsPerCall, 3),
        pass: hot.redisCommandsPerCall <= LIMITS.redisCommandsPerHit,
      },
      {
        id: 'app-throughput',
        target: `app, 32 callers: the plugin's throughput >= ${LIMITS.appThroughputSpeedUp} x the original plugin design's`,
        measured: `${grouped(hot.projectPerSecond)}/s against ${grouped(hot.baselinePerSecond)}/s (${fixed(ratio)}x)`,
        pass: hot.projectPerSecond >= LIMITS.appThroughputSpeedUp * hot.baselinePerSecond,
      },
    );
  }
  if (refusedRedisCommandsPerCall !== undefined) {
    targets.push({
      id: 'app-refusal-redis',
      target: `app behind the plugin, a key over its limit that keeps calling: Redis commands per refusal <= ${LIMITS.floodRedisCommandsPerCall}`,
      measured: fixed(refusedRedisCommandsPerCall, 4),
      pass: refusedRedisCommandsPerCall <= LIMITS.floodRedisCommandsPerCall,
    });
  }
  if (serial) {
    const added = serial.project - serial.unprotected;
    targets.push(
      {
        id: 'app-p50-added',
        target: `app, one caller: p50 the plugin adds to the bare app <= ${LIMITS.appP50AddedMs} ms`,
        measured: `${signed(added, 3)} ms (${fixed(serial.project, 3)} against ${fixed(serial.unprotected, 3)} ms)`,
        pass: added <= LIMITS.appP50AddedMs,
      },
      {
        id: 'app-p50-vs-original',
        target: `app, one caller: the plugin's p50 <= ${LIMITS.appP50OfOriginal} x the original plugin design's`,
        measured:
          `${fixed(serial.project, 3)} against ${fixed(serial.baseline, 3)} ms ` +
          `(${fixed(serial.baseline / serial.project, 1)}x faster)`,
        pass: serial.project <= LIMITS.appP50OfOriginal * serial.baseline,
      },
    );
  }
  return targets;
}

/** The project against the original design on the same machine in the same run, workload by workload (issue 23). */
function againstOriginalDesign({ hot, spread, cold }: NonNullable<TargetInputs['designs']>): TargetResult[] {
  return [
    ...(hot ? [redisCpuOfBaselineTarget('hot', hot, LIMITS.hotRedisCpuOfBaseline)] : []),
    ...(spread ? [redisCpuOfBaselineTarget('spread', spread, LIMITS.spreadRedisCpuOfBaseline)] : []),
    ...(cold
      ? [
          throughputOfBaselineTarget('cold', cold, LIMITS.coldThroughputOfBaseline),
          redisCpuOfBaselineTarget('cold', cold, LIMITS.coldRedisCpuOfBaseline),
        ]
      : []),
  ];
}

function throughputOfBaselineTarget(
  workload: SideBySideWorkload,
  { project, baseline }: SideBySideFigures,
  limit: number,
): TargetResult {
  const ratio = project.authorizationsPerSecond / baseline.authorizationsPerSecond;
  return {
    id: `${workload}-throughput`,
    target: `${workload}: throughput >= ${fixed(limit, 1)} x the original design (same run)`,
    measured:
      `${grouped(project.authorizationsPerSecond)}/s against ` +
      `${grouped(baseline.authorizationsPerSecond)}/s (${fixed(ratio)}x)`,
    pass: project.authorizationsPerSecond >= limit * baseline.authorizationsPerSecond,
  };
}

function redisCpuOfBaselineTarget(
  workload: SideBySideWorkload,
  { project, baseline }: SideBySideFigures,
  limit: number,
): TargetResult {
  const ratio = project.redisCpuMicrosPerCall / baseline.redisCpuMicrosPerCall;
  return {
    id: `${workload}-redis-cpu`,
    target: `${workload}: Redis CPU per authorization <= ${fixed(limit, 1)} x the original design (same run)`,
    measured:
      `${fixed(project.redisCpuMicrosPerCall, 1)} against ` +
      `${fixed(baseline.redisCpuMicrosPerCall, 1)} µs (${fixed(ratio)}x)`,
    pass: project.redisCpuMicrosPerCall <= limit * baseline.redisCpuMicrosPerCall,
  };
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

export interface RunFigures {
  readonly workload: string;
  readonly design: string;
  readonly calls: number;
  readonly outcomes: Readonly<Partial<Record<string, number>>>;
  readonly reportedUsage: { readonly allowed: number; readonly reported: number };
  readonly unknownKeyFlood?: {
    readonly outcomes: Readonly<Partial<Record<string, number>>>;
    readonly ranOut: boolean;
  };
}

/** How a made-up key refused at once is counted; the others are refused as the platform's 401 is. */
export const PLATFORM_BUSY = 'deny platform_busy';

/**
 * What makes a run's figures meaningless whatever they are: calls that were not all allowed (an error,
 * a denial: the fixture's limits are out of reach) or allowed usage the flush did not report.
 */
export function soundnessProblems(
  runs: readonly RunFigures[],
  /** Workloads every call of which must be refused (an explicit Deny) instead. */
  refusedWorkloads: ReadonlySet<string> = new Set(),
): string[] {
  const problems: string[] = [];
  for (const run of runs) {
    const name = `${run.workload}/${run.design}`;
    const expected = refusedWorkloads.has(run.workload) ? 'explicit_deny' : 'allow';
    const asExpected = run.outcomes[expected] ?? 0;
    if (asExpected !== run.calls) {
      const others = Object.entries(run.outcomes)
        .filter(([outcome, count]) => outcome !== expected && count)
        .map(([outcome, count]) => `${outcome} ${count}`)
        .join(', ');
      const verb = expected === 'allow' ? 'allowed' : 'refused';
      problems.push(`${name}: ${run.calls - asExpected} of ${run.calls} calls not ${verb} (${others})`);
    }
    if (run.unknownKeyFlood) problems.push(...unknownKeyFloodProblems(name, run.unknownKeyFlood));
    if (run.reportedUsage.reported !== run.reportedUsage.allowed) {
      problems.push(
        `${name}: the platform recorded ${run.reportedUsage.reported} hits for ${run.reportedUsage.allowed} allowed calls`,
      );
    }
  }
  return problems;
}

/**
 * What makes a flood of made-up keys no test of the bound: one of them allowed or an error, no call refused
 * at once (the bound never reached), or keys that ran out before the calls beside them ended.
 */
function unknownKeyFloodProblems(name: string, flood: NonNullable<RunFigures['unknownKeyFlood']>): string[] {
  const problems: string[] = [];
  const wrong = Object.entries(flood.outcomes).filter(
    ([outcome, count]) => count && outcome !== 'unauthorized' && !outcome.startsWith('deny '),
  );
  if (wrong.length > 0) {
    const text = wrong.map(([outcome, count]) => `${outcome} ${count}`).join(', ');
    problems.push(`${name}: made-up keys not refused (${text})`);
  }
  if (!flood.outcomes[PLATFORM_BUSY]) problems.push(`${name}: no made-up key was refused platform_busy`);
  if (flood.ranOut) problems.push(`${name}: the made-up keys ran out before the calls beside them ended`);
  return problems;
}

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

/** A figure of ComparedFigures taken over the whole workload and, when it ran interleaved, per round. */
export interface PairedFigure {
  total(figures: ComparedFigures): number | undefined;
  rounds(figures: ComparedFigures): readonly number[] | undefined;
}

export const THROUGHPUT: PairedFigure = {
  total: (f) => f.authorizationsPerSecond,
  rounds: (f) => f.roundThroughputs,
};
export const REDIS_CPU: PairedFigure = {
  total: (f) => f.redisCpuMicrosPerCall,
  rounds: (f) => f.roundRedisCpuMicrosPerCall,
};
export const SCRIPT_TIME: PairedFigure = {
  total: (f) => f.scriptMicrosPerCall,
  rounds: (f) => f.roundScriptMicrosPerCall,
};

/**
 * The workload's figure against the other's, round by round when both ran interleaved in the same rounds
 * (each ratio of two chunks next to each other in time); else the two totals.
 */
export function pairedRatios(w: ComparedFigures, a: ComparedFigures, figure: PairedFigure): number[] {
  const rounds = figure.rounds(w);
  const against = figure.rounds(a);
  if (rounds && against && rounds.length === against.length) {
    return rounds.map((value, i) => value / (against[i] as number));
  }
  return [(figure.total(w) ?? Number.NaN) / (figure.total(a) ?? Number.NaN)];
}

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
const fractionAdded = (figure: PairedFigure) => (w: ComparedFigures, a: ComparedFigures) =>
  median(pairedRatios(w, a, figure)) - 1;

/** ` (median of N paired rounds; rounds from <low> to <high>)`, or '' when the totals were compared. */
function pairedRoundsNote(ratios: readonly number[], low: string, high: string): string {
  return ratios.length > 1
    ? ` (median of ${ratios.length} paired rounds; rounds from ${low} to ${high})`
    : '';
}

/** A measure of the fraction of `figure` the workload adds, as `<+x%> <what><rounds><after>`. */
function addedMeasure(
  figure: PairedFigure,
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

const percent = (fraction: number) => `${fixed(100 * fraction, 1)}%`;
const signedPercent = (fraction: number) => `${signed(100 * fraction, 1)}%`;

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
