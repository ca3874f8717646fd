/**
 * What the targets (targets.ts) and the same-run comparisons read, taken from the run's results. A workload
 * the run left out (`--workloads`) gives no figure, and the targets that read it are not judged.
 */

import type { AppFigures } from './app-targets';
import type { ComparedFigures } from './comparisons';
import type { LogBytes } from './log-bytes';
import type { SideBySideWorkload } from './original-design-targets';
import type { BundleResult, Design, WorkloadName, WorkloadResult } from './report';
import { PLATFORM_BUSY } from './soundness';
import type { TargetInputs } from './targets';
import { FLOOD_UNSEEN_CALLS_PER_SECOND } from './workloads';

/** The result of a workload in one design, when the run had it. */
export type ResultOf = (workload: WorkloadName, design: Design) => WorkloadResult | undefined;

export function resultsBy(workloads: readonly WorkloadResult[]): ResultOf {
  return (workload, design) => workloads.find((w) => w.workload === workload && w.design === design);
}

/** The project's figures of a workload, as the comparisons between workloads read them. */
export function comparedFigures(find: ResultOf): (workload: string) => ComparedFigures | undefined {
  return (workload) => {
    const result = find(workload as WorkloadName, 'project');
    return (
      result && {
        ...result.latency,
        authorizationsPerSecond: result.authorizationsPerSecond,
        cpuMicrosPerCall: result.processCpuMicrosPerCall,
        redisCpuMicrosPerCall: result.redis.serverCpuMicrosPerAuthorization,
        scriptMicrosPerCall: result.redis.scriptMicrosPerAuthorization,
        ...(result.roundThroughputs && { roundThroughputs: result.roundThroughputs }),
        ...(result.roundRedisCpuMicrosPerCall && {
          roundRedisCpuMicrosPerCall: result.roundRedisCpuMicrosPerCall,
        }),
        ...(result.roundScriptMicrosPerCall && {
          roundScriptMicrosPerCall: result.roundScriptMicrosPerCall,
        }),
      }
    );
  };
}

/** The application workloads' figures the targets judge, from those the run had. */
function appFigures(find: ResultOf): AppFigures {
  const p50 = (design: Design) => find('app-serial', design)?.latency.p50Ms;
  const [unprotected, project, baseline] = [p50('unprotected'), p50('project'), p50('baseline')];
  const hot = find('app-hot', 'project');
  const hotBaseline = find('app-hot', 'baseline');
  const refused = find('app-refused', 'project');
  return {
    ...(unprotected !== undefined &&
      project !== undefined &&
      baseline !== undefined && { serial: { unprotected, project, baseline } }),
    ...(hot &&
      hotBaseline && {
        hot: {
          projectPerSecond: hot.authorizationsPerSecond,
          baselinePerSecond: hotBaseline.authorizationsPerSecond,
          redisCommandsPerCall: hot.redis.sentPerAuthorization,
        },
      }),
    ...(refused && { refusedRedisCommandsPerCall: refused.redis.sentPerAuthorization }),
  };
}

/** Both designs' figures of a side-by-side workload; undefined when the run left either out. */
function bothDesigns(find: ResultOf, workload: SideBySideWorkload) {
  const designFigures = (design: Design) => {
    const result = find(workload, design);
    return (
      result && {
        authorizationsPerSecond: result.authorizationsPerSecond,
        redisCpuMicrosPerCall: result.redis.serverCpuMicrosPerAuthorization,
      }
    );
  };
  const project = designFigures('project');
  const baseline = designFigures('baseline');
  return project && baseline && { project, baseline };
}

export interface MeasuredRun {
  readonly reportWindowSeconds: number;
  readonly find: ResultOf;
  readonly bundles: readonly BundleResult[];
  readonly logBytes?: { readonly now: LogBytes; readonly before: LogBytes };
  /** The 1-minute load average per core at the run's start and end. */
  readonly loadPerCore: { readonly start: number; readonly end: number };
  /** Other processes' CPU during the run, per core; absent where it cannot be read. */
  readonly otherCpuPerCore?: number;
}

export function targetInputsOf({
  reportWindowSeconds,
  find,
  bundles,
  logBytes,
  loadPerCore,
  otherCpuPerCore,
}: MeasuredRun): TargetInputs {
  const externalSdk = bundles.find((b) => b.sdk === 'external') as BundleResult;
  const spreadCluster = find('spread-cluster', 'project');
  const flood = find('flood-over-limit', 'project');
  const throttledFlood = find('flood-throttled', 'project');
  // Its rounds alternate with the other serial workloads' (a run of it alone is one round).
  const hotSerialRounds = find('hot-serial', 'project')?.roundScriptMicrosPerCall;
  const unknownKeyFlood = find('flood-unknown-keys', 'project')?.unknownKeyFlood;
  const hot = find('hot', 'project');
  const hotBaseline = find('hot', 'baseline');
  return {
    reportWindowSeconds,
    ...(hot &&
      hotBaseline && {
        hot: {
          project: {
            calls: hot.calls,
            spanMs: hot.spanMs,
            p50Ms: hot.latency.p50Ms,
            authorizationsPerSecond: hot.authorizationsPerSecond,
            redisCommandsPerAuthorization: hot.redis.sentPerAuthorization,
            platformCalls: hot.platformCalls.total,
            snsPublishes: hot.snsPublishes,
            flushPlatformCalls: hot.flush.platformCalls.total,
          },
          baseline: {
            p50Ms: hotBaseline.latency.p50Ms,
            authorizationsPerSecond: hotBaseline.authorizationsPerSecond,
          },
        },
      }),
    bundle: {
      minifiedBytes: externalSdk.minifiedBytes,
      initMedianMs: externalSdk.initMedianMs,
      eagerInitMedianMs: externalSdk.eagerInitMedianMs,
      loadPerCore: loadPerCore.start,
    },
    ...(flood && {
      flood: {
        sentPerCall: flood.redis.sentPerAuthorization,
        executedPerCall: flood.redis.executedPerAuthorization,
      },
    }),
    ...(throttledFlood && {
      throttledFlood: {
        sentPerCall: throttledFlood.redis.sentPerAuthorization,
        executedPerCall: throttledFlood.redis.executedPerAuthorization,
      },
    }),
    ...(hotSerialRounds && { hitScriptRoundMicros: hotSerialRounds }),
    loadPerCore,
    ...(otherCpuPerCore !== undefined && { otherCpuPerCore }),
    ...(logBytes && {
      logBytes: { now: logBytes.now.perAuthorization, before: logBytes.before.perAuthorization },
    }),
    ...(unknownKeyFlood && {
      unknownKeyFlood: {
        bound: FLOOD_UNSEEN_CALLS_PER_SECOND,
        platformCalls: unknownKeyFlood.platformCalls.total,
        gateSeconds: unknownKeyFlood.gateSeconds,
        calls: unknownKeyFlood.calls,
        platformBusy: unknownKeyFlood.outcomes[PLATFORM_BUSY] ?? 0,
      },
    }),
    ...(spreadCluster?.primaries && {
      authorizationsPerPrimary: spreadCluster.primaries.map((primary) => primary.authorizations),
    }),
    designs: {
      hot: bothDesigns(find, 'hot'),
      spread: bothDesigns(find, 'spread'),
      cold: bothDesigns(find, 'cold'),
    },
    app: appFigures(find),
  };
}
