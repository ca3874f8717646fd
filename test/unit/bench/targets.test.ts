import { describe, expect, it } from 'vitest';
import type { SideBySideFigures } from '../../../bench/original-design-targets';
import {
  evaluateTargets,
  type HotKeyFigures,
  largestShareDeviation,
  secondsTouched,
  type TargetInputs,
  windowsSpanned,
} from '../../../bench/targets';

const hot: HotKeyFigures = {
  project: {
    calls: 20_000,
    spanMs: 2_500,
    p50Ms: 0.4,
    authorizationsPerSecond: 8_000,
    redisCommandsPerAuthorization: 1,
    platformCalls: 0,
    snsPublishes: 1,
    flushPlatformCalls: 2,
  },
  baseline: { p50Ms: 11, authorizationsPerSecond: 2_500 },
};

const passing: TargetInputs = {
  reportWindowSeconds: 10,
  hot,
  bundle: { minifiedBytes: 120_000, initMedianMs: 40, eagerInitMedianMs: 100, loadPerCore: 0.1 },
};

function withProject(change: Partial<HotKeyFigures['project']>): TargetInputs {
  return { ...passing, hot: { ...hot, project: { ...hot.project, ...change } } };
}

function failing(inputs: TargetInputs): string[] {
  return evaluateTargets(inputs)
    .filter((target) => !target.pass)
    .map((target) => target.id);
}

describe('windowsSpanned', () => {
  it('counts the report windows a span touches, the open one included', () => {
    expect(windowsSpanned(0, 10, 5)).toBe(1);
    expect(windowsSpanned(9_999, 10, 5)).toBe(1);
    expect(windowsSpanned(10_000, 10, 5)).toBe(2);
    expect(windowsSpanned(25_000, 10, 5)).toBe(3);
  });

  it('treats window 0 as one message per call', () => {
    expect(windowsSpanned(25_000, 0, 7)).toBe(7);
  });
});

describe('evaluateTargets', () => {
  it('passes every target when every figure is within its limit', () => {
    const results = evaluateTargets(passing);
    expect(results.map((r) => r.id)).toEqual([
      'cache-hit-redis',
      'cache-hit-platform',
      'hot-sns-publishes',
      'hot-flush-platform',
      'hot-p50',
      'hot-throughput',
      'bundle-size',
      'module-init',
      'module-init-vs-eager',
    ]);
    expect(failing(passing)).toEqual([]);
  });

  it('judges the hot-key targets only when the run had the hot workload', () => {
    const { hot: _left, ...withoutHot } = passing;
    expect(evaluateTargets(withoutHot).map((r) => r.id)).toEqual([
      'bundle-size',
      'module-init',
      'module-init-vs-eager',
    ]);
  });

  it('holds the cache hit to 1.05 Redis commands and no platform call', () => {
    expect(failing(withProject({ redisCommandsPerAuthorization: 1.05 }))).toEqual([]);
    expect(failing(withProject({ redisCommandsPerAuthorization: 1.051 }))).toEqual(['cache-hit-redis']);
    expect(failing(withProject({ platformCalls: 1 }))).toEqual(['cache-hit-platform']);
  });

  it('allows one SNS publish per report window the run spans, plus one', () => {
    expect(failing(withProject({ snsPublishes: 2 }))).toEqual(['hot-sns-publishes']);
    expect(failing(withProject({ spanMs: 10_000, snsPublishes: 2 }))).toEqual([]);
    expect(failing(withProject({ spanMs: 10_000, snsPublishes: 3 }))).toEqual(['hot-sns-publishes']);
  });

  it('allows two platform calls per credential per window in the flush', () => {
    expect(failing(withProject({ flushPlatformCalls: 3 }))).toEqual(['hot-flush-platform']);
    expect(failing(withProject({ spanMs: 10_000, flushPlatformCalls: 4 }))).toEqual([]);
  });

  it('with window 0 allows one publish per call, the priming call included', () => {
    const inputs = {
      ...withProject({ snsPublishes: 20_001, flushPlatformCalls: 40_002 }),
      reportWindowSeconds: 0,
    };
    expect(failing(inputs)).toEqual([]);
    expect(evaluateTargets(inputs).find((t) => t.id === 'hot-sns-publishes')?.target).toContain(
      '<= 20001 (window 0: one per call)',
    );
  });

  it('compares the hot key p50 and throughput with the baseline’s', () => {
    expect(failing(withProject({ p50Ms: 11 / 5 }))).toEqual([]);
    expect(failing(withProject({ p50Ms: 2.3 }))).toEqual(['hot-p50']);
    expect(failing(withProject({ authorizationsPerSecond: 7_500 }))).toEqual([]);
    expect(failing(withProject({ authorizationsPerSecond: 7_499 }))).toEqual(['hot-throughput']);
  });

  describe('the application workloads (the plugin)', () => {
    const appHot = { projectPerSecond: 6_000, baselinePerSecond: 1_500, redisCommandsPerCall: 1 };
    const app: NonNullable<TargetInputs['app']> = {
      serial: { unprotected: 0.5, project: 0.7, baseline: 21 },
      hot: appHot,
      refusedRedisCommandsPerCall: 0.001,
    };
    const withApp = (change: Partial<NonNullable<TargetInputs['app']>>) =>
      failing({ ...passing, app: { ...app, ...change } });

    it('judges each application workload the run had, and only those', () => {
      const ids = (inputs: TargetInputs) =>
        evaluateTargets(inputs)
          .map((r) => r.id)
          .filter((id) => id.startsWith('app-'));
      expect(ids({ ...passing, app })).toEqual([
        'app-hit-redis',
        'app-throughput',
        'app-refusal-redis',
        'app-p50-added',
        'app-p50-vs-original',
      ]);
      expect(ids(passing)).toEqual([]);
      expect(ids({ ...passing, app: { refusedRedisCommandsPerCall: 0 } })).toEqual(['app-refusal-redis']);
      expect(withApp({})).toEqual([]);
    });

    it('holds an allowed cache hit to one Redis round trip and a repeated refusal to 0.01 commands', () => {
      expect(withApp({ hot: { ...appHot, redisCommandsPerCall: 1.05 } })).toEqual([]);
      expect(withApp({ hot: { ...appHot, redisCommandsPerCall: 1.06 } })).toEqual(['app-hit-redis']);
      expect(withApp({ refusedRedisCommandsPerCall: 0.01 })).toEqual([]);
      expect(withApp({ refusedRedisCommandsPerCall: 0.0101 })).toEqual(['app-refusal-redis']);
    });

    it('holds the p50 the plugin adds to the bare app to 0.3 ms, and to a tenth of the original design’s', () => {
      expect(withApp({ serial: { unprotected: 0.5, project: 0.79, baseline: 21 } })).toEqual([]);
      expect(withApp({ serial: { unprotected: 0.5, project: 0.801, baseline: 21 } })).toEqual([
        'app-p50-added',
      ]);
      expect(withApp({ serial: { unprotected: 0.5, project: 0.7, baseline: 7 } })).toEqual([]);
      expect(withApp({ serial: { unprotected: 0.5, project: 0.7, baseline: 6.99 } })).toEqual([
        'app-p50-vs-original',
      ]);
    });

    it('holds the throughput at 32 callers to three times the original design’s', () => {
      expect(withApp({ hot: { ...appHot, projectPerSecond: 4_500 } })).toEqual([]);
      expect(withApp({ hot: { ...appHot, projectPerSecond: 4_499 } })).toEqual(['app-throughput']);
    });
  });

  it('holds a refused flood to 0.01 Redis commands sent per call', () => {
    const flood = (sentPerCall: number) =>
      failing({ ...passing, flood: { sentPerCall, executedPerCall: 1 } });
    expect(flood(0.01)).toEqual([]);
    expect(flood(0.011)).toEqual(['flood-redis']);
  });

  it('holds the hot key to 50 CloudWatch Logs bytes per authorization, the figure before beside it', () => {
    const logBytes = (now: number) => failing({ ...passing, logBytes: { now, before: 700 } });
    expect(logBytes(50)).toEqual([]);
    expect(logBytes(50.1)).toEqual(['hot-log-bytes']);
    const result = evaluateTargets({ ...passing, logBytes: { now: 0.4, before: 700 } }).find(
      (t) => t.id === 'hot-log-bytes',
    );
    expect(result?.measured).toMatch(/^0\.40 bytes; before .*700\.0 bytes$/);
  });

  it('holds a cache hit’s script to 10 µs, the median of its rounds, with a shard’s decisions a second', () => {
    const script = (rounds: number[]) => evaluateTargets({ ...passing, hitScriptRoundMicros: rounds });
    const result = script([9.0, 12.0, 10.0]).find((t) => t.id === 'hit-script');
    expect(result).toMatchObject({
      measured: '10.0 µs (3 rounds, from 9.0 to 12.0): 100,000 decisions a second per shard',
      pass: true,
    });
    expect(script([10.5, 9.0, 11.0]).find((t) => t.id === 'hit-script')?.pass).toBe(false);
    expect(script([]).find((t) => t.id === 'hit-script')).toBeUndefined();
    const loaded = evaluateTargets({
      ...passing,
      hitScriptRoundMicros: [75.7, 70.0],
      loadPerCore: { start: 8.7, end: 8.3 },
    }).find((t) => t.id === 'hit-script');
    expect(loaded).toMatchObject({ pass: true, notJudged: 'loaded machine: load 8.70 to 8.30 per core' });
  });

  it('holds a throttled flood to 0.01 Redis commands sent per call', () => {
    const flood = (sentPerCall: number) =>
      failing({ ...passing, throttledFlood: { sentPerCall, executedPerCall: 1 } });
    expect(flood(0.01)).toEqual([]);
    expect(flood(0.011)).toEqual(['flood-throttled-redis']);
  });

  it('holds the bundle to 300,000 bytes and its init to 60 ms and half the old eager init', () => {
    const bundle = (
      minifiedBytes: number,
      initMedianMs: number,
      eagerInitMedianMs: number,
      loadPerCore = 0.1,
    ) => ({
      ...passing,
      bundle: { minifiedBytes, initMedianMs, eagerInitMedianMs, loadPerCore },
    });
    expect(failing(bundle(300_000, 60, 120))).toEqual([]);
    expect(failing(bundle(300_001, 61, 122))).toEqual(['bundle-size', 'module-init']);
    expect(failing(bundle(300_000, 60, 119))).toEqual(['module-init-vs-eager']);
  });

  it('judges 60 ms on a quiet machine only; the same-run ratio judges on a loaded one', () => {
    const loaded = (initMedianMs: number, eagerInitMedianMs: number) =>
      failing({
        ...passing,
        bundle: { minifiedBytes: 1, initMedianMs, eagerInitMedianMs, loadPerCore: 0.5 },
      });
    expect(loaded(150, 300)).toEqual([]);
    expect(loaded(150, 299)).toEqual(['module-init-vs-eager']);
  });

  it('says what it measured and against what', () => {
    const publishes = evaluateTargets(withProject({ spanMs: 12_340 })).find(
      (t) => t.id === 'hot-sns-publishes',
    );
    expect(publishes?.target).toContain('<= 2');
    expect(publishes?.target).toContain('12.34 s / 10 s window');
    expect(publishes?.measured).toBe('1');
  });
});

describe('the spread-cluster share of each primary', () => {
  it('measures the largest distance from an even split', () => {
    expect(largestShareDeviation([100, 100, 100])).toBe(0);
    expect(largestShareDeviation([115, 100, 85])).toBeCloseTo(0.15);
    expect(largestShareDeviation([0, 0])).toBe(Number.POSITIVE_INFINITY);
  });

  it('passes within ±15 % of an even split, and is only judged when the run has a cluster', () => {
    expect(failing({ ...passing, authorizationsPerPrimary: [6_900, 6_600, 6_500] })).toEqual([]);
    expect(failing({ ...passing, authorizationsPerPrimary: [7_800, 6_600, 5_600] })).toEqual([
      'cluster-primary-share',
    ]);
    expect(evaluateTargets(passing).map((t) => t.id)).not.toContain('cluster-primary-share');
    const share = evaluateTargets({ ...passing, authorizationsPerPrimary: [50, 30, 20] }).at(-1);
    expect(share?.measured).toBe('50.0% / 30.0% / 20.0% (largest deviation 50.0%)');
  });
});

describe('the project against the original design, same run', () => {
  const figures = (
    projectPerSecond: number,
    projectRedisCpu: number,
    baselinePerSecond: number,
    baselineRedisCpu: number,
  ): SideBySideFigures => ({
    project: { authorizationsPerSecond: projectPerSecond, redisCpuMicrosPerCall: projectRedisCpu },
    baseline: { authorizationsPerSecond: baselinePerSecond, redisCpuMicrosPerCall: baselineRedisCpu },
  });
  const designs = {
    hot: figures(9_000, 38, 3_000, 40),
    spread: figures(8_000, 45, 3_000, 40),
    cold: figures(3_000, 45, 3_000, 40),
  };
  const inputs = (change: Partial<typeof designs>): TargetInputs => ({
    ...passing,
    designs: { ...designs, ...change },
  });
  const ids = ['hot-redis-cpu', 'spread-redis-cpu', 'cold-throughput', 'cold-redis-cpu'];

  it('judges each side-by-side workload against the original design, after the hot-key targets', () => {
    const results = evaluateTargets(inputs({}));
    expect(results.map((r) => r.id).slice(6, 10)).toEqual(ids);
    expect(failing(inputs({}))).toEqual([]);
  });

  it('holds cold to the floors: 0.6x the original design’s throughput and 2.5x its Redis CPU per authorization', () => {
    expect(failing(inputs({ cold: figures(1_800, 100, 3_000, 40) }))).toEqual([]);
    expect(failing(inputs({ cold: figures(1_799, 45, 3_000, 40) }))).toEqual(['cold-throughput']);
    expect(failing(inputs({ cold: figures(3_000, 100.01, 3_000, 40) }))).toEqual(['cold-redis-cpu']);
  });

  it('holds spread to 1.2x and hot to 1.0x the original design’s Redis CPU per authorization', () => {
    expect(failing(inputs({ spread: figures(8_000, 48, 3_000, 40) }))).toEqual([]);
    expect(failing(inputs({ spread: figures(8_000, 48.01, 3_000, 40) }))).toEqual(['spread-redis-cpu']);
    expect(failing(inputs({ hot: figures(9_000, 40, 3_000, 40) }))).toEqual([]);
    expect(failing(inputs({ hot: figures(9_000, 40.01, 3_000, 40) }))).toEqual(['hot-redis-cpu']);
  });

  it('neither passes nor fails them on a loaded machine, and says so', () => {
    const loaded = {
      ...inputs({ hot: figures(9_000, 80, 3_000, 40) }),
      loadPerCore: { start: 0.3, end: 0.6 },
    };
    expect(failing(loaded)).toEqual([]);
    const hot = evaluateTargets(loaded).find((r) => r.id === 'hot-redis-cpu');
    expect(hot?.notJudged).toBe('loaded machine: load 0.30 to 0.60 per core');
    const quiet = { ...loaded, loadPerCore: { start: 0.3, end: 0.4 } };
    expect(failing(quiet)).toEqual(['hot-redis-cpu']);
    expect(evaluateTargets(quiet).find((r) => r.id === 'hot-redis-cpu')?.notJudged).toBeUndefined();
  });

  it("reads other processes' CPU during the run, where known, instead of the end's load, which counts the bench", () => {
    const endLoadedByTheBench = {
      ...inputs({ hot: figures(9_000, 80, 3_000, 40) }),
      loadPerCore: { start: 0.3, end: 0.6 },
      otherCpuPerCore: 0.1,
    };
    expect(failing(endLoadedByTheBench)).toEqual(['hot-redis-cpu']);
    const othersBusy = {
      ...endLoadedByTheBench,
      loadPerCore: { start: 0.3, end: 0.3 },
      otherCpuPerCore: 0.55,
    };
    expect(failing(othersBusy)).toEqual([]);
    expect(evaluateTargets(othersBusy).find((r) => r.id === 'hot-redis-cpu')?.notJudged).toBe(
      "loaded machine: load 0.30 per core at the start, other processes' CPU 0.55 per core during the run",
    );
    const busyAtTheStart = { ...endLoadedByTheBench, loadPerCore: { start: 0.5, end: 0.3 } };
    expect(failing(busyAtTheStart)).toEqual([]);
  });

  it('judges only the workloads the run had', () => {
    const { spread: _spread, ...withoutSpread } = designs;
    const judged = (ran: TargetInputs['designs']) =>
      evaluateTargets({ ...passing, designs: ran })
        .map((r) => r.id)
        .filter((id) => ids.includes(id));
    expect(judged(withoutSpread)).toEqual(['hot-redis-cpu', 'cold-throughput', 'cold-redis-cpu']);
    expect(judged({ spread: designs.spread })).toEqual(['spread-redis-cpu']);
    expect(judged({ hot: undefined, cold: undefined })).toEqual([]);
    expect(judged(undefined)).toEqual([]);
  });

  it('says both figures and their ratio', () => {
    const byId = Object.fromEntries(
      evaluateTargets(inputs({ cold: figures(2_062, 66.2, 3_094, 30.1) })).map((r) => [r.id, r]),
    );
    expect(byId['cold-throughput']).toMatchObject({
      target: 'cold: throughput >= 0.6 x the original design (same run)',
      measured: '2,062/s against 3,094/s (0.67x)',
      pass: true,
    });
    expect(byId['cold-redis-cpu']).toMatchObject({
      target: 'cold: Redis CPU per authorization <= 2.5 x the original design (same run)',
      measured: '66.2 against 30.1 µs (2.20x)',
      pass: true,
    });
    expect(byId['hot-redis-cpu']?.target).toBe(
      'hot: Redis CPU per authorization <= 1.0 x the original design (same run)',
    );
  });
});

describe('secondsTouched', () => {
  it('counts each epoch second a span touches, a second shared by spans once', () => {
    expect(secondsTouched([])).toBe(0);
    expect(secondsTouched([[1_000, 1_999]])).toBe(1);
    expect(secondsTouched([[1_999, 2_001]])).toBe(2);
    expect(
      secondsTouched([
        [1_100, 1_300],
        [1_500, 3_200],
        [7_000, 7_000],
      ]),
    ).toBe(4);
  });

  it('refuses a span that ends before it starts', () => {
    expect(() => secondsTouched([[2_000, 1_999]])).toThrow(RangeError);
  });
});

describe('the flood of made-up keys', () => {
  const inputs = (platformCalls: number): TargetInputs => ({
    ...passing,
    unknownKeyFlood: {
      bound: 50,
      platformCalls,
      gateSeconds: 4,
      calls: 1_000,
      platformBusy: 1_000 - platformCalls,
    },
  });
  const target = (platformCalls: number) =>
    evaluateTargets(inputs(platformCalls)).find((result) => result.id === 'flood-unknown-platform');

  it('holds the platform calls to the bound times the seconds of its clock the flood touched', () => {
    expect(target(200)).toMatchObject({
      measured: '50.0 per second (200 over 4 s); 800 of 1000 calls refused platform_busy',
      pass: true,
    });
    expect(target(201)?.pass).toBe(false);
  });
});
