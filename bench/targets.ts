/** The design's performance targets (issue #6) and their evaluation: pure, so it is unit-tested. */

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
  initMs: 150,
  /** spread-cluster: each primary's share of the authorizations within this of an even split. */
  primaryShareDeviation: 0.15,
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
  readonly minifiedBytes: number;
  readonly initMedianMs: number;
}

export interface TargetInputs {
  readonly reportWindowSeconds: number;
  readonly hot: HotKeyFigures;
  readonly bundle: BundleFigures;
  /** spread-cluster: the authorizations each primary served (the project's). */
  readonly authorizationsPerPrimary?: readonly number[];
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
  readonly pass: boolean;
}

const fixed = (value: number, digits = 2) => value.toFixed(digits);

export function evaluateTargets({
  reportWindowSeconds,
  hot,
  bundle,
  authorizationsPerPrimary,
}: TargetInputs): TargetResult[] {
  const { project, baseline } = hot;
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
    {
      id: 'bundle-size',
      target: `authorizer bundle <= ${LIMITS.bundleBytes / 1000} KB minified (@aws-sdk/* external)`,
      measured: `${fixed(bundle.minifiedBytes / 1000, 1)} KB`,
      pass: bundle.minifiedBytes <= LIMITS.bundleBytes,
    },
    {
      id: 'module-init',
      target: `authorizer module init <= ${LIMITS.initMs} ms (median, fresh process)`,
      measured: `${fixed(bundle.initMedianMs, 1)} ms`,
      pass: bundle.initMedianMs <= LIMITS.initMs,
    },
    ...(authorizationsPerPrimary ? [primaryShareTarget(authorizationsPerPrimary)] : []),
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

export interface RunFigures {
  readonly workload: string;
  readonly design: string;
  readonly calls: number;
  readonly outcomes: Readonly<Partial<Record<string, number>>>;
  readonly reportedUsage: { readonly allowed: number; readonly reported: number };
}

/**
 * What makes a run's figures meaningless whatever they are: calls that were not all allowed (an error,
 * a denial: the fixture's limits are out of reach) or allowed usage the flush did not report.
 */
export function soundnessProblems(runs: readonly RunFigures[]): string[] {
  const problems: string[] = [];
  for (const run of runs) {
    const name = `${run.workload}/${run.design}`;
    const allowed = run.outcomes.allow ?? 0;
    if (allowed !== run.calls) {
      const others = Object.entries(run.outcomes)
        .filter(([outcome, count]) => outcome !== 'allow' && count)
        .map(([outcome, count]) => `${outcome} ${count}`)
        .join(', ');
      problems.push(`${name}: ${run.calls - allowed} of ${run.calls} calls not allowed (${others})`);
    }
    if (run.reportedUsage.reported !== run.reportedUsage.allowed) {
      problems.push(
        `${name}: the platform recorded ${run.reportedUsage.reported} hits for ${run.reportedUsage.allowed} allowed calls`,
      );
    }
  }
  return problems;
}
