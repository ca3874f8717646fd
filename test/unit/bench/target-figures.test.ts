import { describe, expect, it } from 'vitest';
import type { BundleResult, Design, WorkloadName, WorkloadResult } from '../../../bench/report';
import { comparedFigures, resultsBy, targetInputsOf } from '../../../bench/target-figures';

const NO_PLATFORM_CALLS = { total: 0, byEndpoint: {} };

function result(
  workload: WorkloadName,
  design: Design,
  change: Partial<WorkloadResult> = {},
): WorkloadResult {
  return {
    workload,
    design,
    calls: 1_000,
    keys: 1,
    endpoints: 1,
    concurrency: 1,
    warmupCalls: 100,
    durationMs: 500,
    spanMs: 600,
    authorizationsPerSecond: 2_000,
    latency: { count: 1_000, p50Ms: 0.4, p99Ms: 1, maxMs: 2, meanMs: 0.5 },
    processCpuMicrosPerCall: 300,
    outcomes: { allow: 1_000 },
    redis: {
      sentPerAuthorization: 1,
      executedPerAuthorization: 6,
      executedByCommand: [],
      serverCpuMicrosPerAuthorization: 20,
      scriptMicrosPerAuthorization: 12,
    },
    snsPublishes: 1,
    platformCalls: NO_PLATFORM_CALLS,
    flush: { durationMs: 1, platformCalls: NO_PLATFORM_CALLS },
    reportedUsage: { allowed: 1_001, reported: 1_001 },
    ...change,
  };
}

const BUNDLE: BundleResult = {
  sdk: 'external',
  node: 'v24',
  minifiedBytes: 290_000,
  lazyBytes: {},
  initMedianMs: 30,
  initSamplesMs: [30],
  eagerInitMedianMs: 70,
  firstPublishMedianMs: 40,
  lazyMedianMs: {},
  largestModules: [],
};

function inputsOf(workloads: readonly WorkloadResult[]) {
  return targetInputsOf({
    reportWindowSeconds: 10,
    find: resultsBy(workloads),
    bundles: [{ ...BUNDLE, sdk: 'bundled', minifiedBytes: 800_000 }, BUNDLE],
    loadPerCore: { start: 0.2, end: 0.3 },
  });
}

describe('targetInputsOf', () => {
  it('judges a side-by-side workload only when both designs ran, and reads the bundle with the SDK external', () => {
    const inputs = inputsOf([
      result('hot', 'project', {
        redis: { ...result('hot', 'project').redis, serverCpuMicrosPerAuthorization: 21 },
      }),
      result('hot', 'baseline', { authorizationsPerSecond: 500 }),
      result('spread', 'project'),
    ]);
    expect(inputs.designs).toEqual({
      hot: {
        project: { authorizationsPerSecond: 2_000, redisCpuMicrosPerCall: 21 },
        baseline: { authorizationsPerSecond: 500, redisCpuMicrosPerCall: 20 },
      },
      spread: undefined,
      cold: undefined,
    });
    expect(inputs.hot?.baseline).toEqual({ p50Ms: 0.4, authorizationsPerSecond: 500 });
    expect(inputs.bundle).toEqual({
      minifiedBytes: 290_000,
      initMedianMs: 30,
      eagerInitMedianMs: 70,
      loadPerCore: 0.2,
    });
  });

  it('leaves out the hot key and the application targets a run without them cannot judge', () => {
    const inputs = inputsOf([result('hot', 'project'), result('app-serial', 'project')]);
    expect(inputs.hot).toBeUndefined();
    expect(inputs.app).toEqual({});
    expect(inputs.hitScriptRoundMicros).toBeUndefined();
  });
});

describe('comparedFigures', () => {
  it('reads the project design only, with its rounds when it ran interleaved', () => {
    const figures = comparedFigures(
      resultsBy([
        result('hot-serial', 'baseline'),
        result('hot-serial', 'project', { roundScriptMicrosPerCall: [11, 13] }),
      ]),
    );
    expect(figures('hot-serial')).toMatchObject({
      p50Ms: 0.4,
      cpuMicrosPerCall: 300,
      scriptMicrosPerCall: 12,
      roundScriptMicrosPerCall: [11, 13],
    });
    expect(figures('hot-serial')).not.toHaveProperty('roundThroughputs');
    expect(figures('soap')).toBeUndefined();
  });
});
