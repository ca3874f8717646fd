import { describe, expect, it } from 'vitest';
import {
  COMPARISONS,
  type ComparedFigures,
  comparisonTargets,
  evaluateComparisons,
  SCRIPT_TIME,
} from '../../../bench/comparisons';
import { pairedRatios } from '../../../bench/paired-rounds';

describe('evaluateComparisons', () => {
  const hotSerial: ComparedFigures = {
    p50Ms: 0.5,
    meanMs: 0.6,
    authorizationsPerSecond: 1_800,
    cpuMicrosPerCall: 300,
    redisCpuMicrosPerCall: 40,
    scriptMicrosPerCall: 20,
  };
  const throttledSerial: ComparedFigures = {
    ...hotSerial,
    p50Ms: 0.54,
    redisCpuMicrosPerCall: 43,
    scriptMicrosPerCall: 21.5,
  };
  const alertsOff: ComparedFigures = {
    p50Ms: 1,
    meanMs: 1.1,
    authorizationsPerSecond: 20_000,
    cpuMicrosPerCall: 40,
  };
  const appIdSerial: ComparedFigures = { ...hotSerial, p50Ms: 0.55, cpuMicrosPerCall: 320 };
  const run = (figures: Record<string, ComparedFigures>) => (workload: string) => figures[workload];
  const byId = (figures: Record<string, ComparedFigures>) =>
    Object.fromEntries(evaluateComparisons(run(figures)).map((result) => [result.id, result]));

  it('reads each workload against the one it is compared with, both figures side by side', () => {
    const results = byId({
      'hot-serial': hotSerial,
      'http-v2-serial': { ...hotSerial, p50Ms: 0.56, cpuMicrosPerCall: 305 },
      'app-id-serial': appIdSerial,
      soap: { p50Ms: 1.3, meanMs: 1.45, authorizationsPerSecond: 700, cpuMicrosPerCall: 950 },
      oauth: { p50Ms: 0.8, meanMs: 0.75, authorizationsPerSecond: 1_300, cpuMicrosPerCall: 420 },
      'hot-alerts-off': alertsOff,
      'hot-alerts-on': { ...alertsOff, authorizationsPerSecond: 19_500 },
      'throttled-serial': throttledSerial,
      hot: { ...alertsOff, authorizationsPerSecond: 2_000 },
      'flood-over-limit': { ...alertsOff, authorizationsPerSecond: 5_900 },
      'hot-without-flood': alertsOff,
      'flood-unknown-keys': { ...alertsOff, p50Ms: 4.5, meanMs: 2.2, cpuMicrosPerCall: 100 },
    });
    expect(Object.keys(results)).toEqual(COMPARISONS.map((comparison) => comparison.id));
    expect(results['flood-throughput']).toMatchObject({
      difference: '2.95x the throughput, CPU +0.0 µs/call',
      target: { text: 'throughput >= 3.0x', pass: false },
    });
    expect(results['flood-unknown-hot-p50']).toMatchObject({
      against: 'hot-without-flood',
      difference: 'p50 4.50x (+3.500 ms), mean 2.00x, CPU +60 µs',
      target: { text: 'p50 <= 4x', pass: false },
    });
    expect(results['throttle-p50-added']).toMatchObject({
      against: 'hot-serial',
      difference: 'p50 +0.040 ms, mean +0.000 ms, CPU +0 µs',
      target: { text: 'p50 added <= 0.05 ms', pass: true },
    });
    expect(results['throttle-redis-cpu']).toMatchObject({
      against: 'hot-serial',
      figures: ['Redis CPU 43.0 µs/authorization', 'Redis CPU 40.0 µs/authorization'],
      difference: '+7.5% Redis CPU per authorization, p50 +0.040 ms',
      target: { text: 'Redis CPU per authorization added <= 10%', pass: true },
    });
    // The script's own time (INFO commandstats) is printed beside it, a figure only.
    expect(results['throttle-redis-script']).toMatchObject({
      against: 'hot-serial',
      figures: ['script 21.5 µs/authorization', 'script 20.0 µs/authorization'],
      difference: '+7.5% Redis script time per authorization',
    });
    expect(results['throttle-redis-script']?.target).toBeUndefined();
    expect(results['soap-overhead']).toMatchObject({
      figures: ['p50 1.300 ms, mean 1.450 ms, CPU 950 µs', 'p50 0.500 ms, mean 0.600 ms, CPU 300 µs'],
      difference: 'p50 +0.800 ms, mean +0.850 ms, CPU +650 µs',
    });
    expect(results['soap-overhead']?.target).toBeUndefined();
    // The 2.0 adapter is held to its own target against the REST adapter on the same calls.
    expect(results['http-v2-adapter-p50-added']).toMatchObject({
      against: 'hot-serial',
      difference: 'p50 +0.060 ms, mean +0.000 ms, CPU +5 µs',
      target: { text: 'p50 added <= 0.05 ms', pass: false },
    });
    expect(results['app-id-vs-user-key']).toMatchObject({
      difference: 'p50 +0.050 ms, mean +0.000 ms, CPU +20 µs',
    });
    expect(results['app-id-vs-user-key']?.target).toBeUndefined();
    // The token is read against the same keyless application called by app id, not against the user key.
    expect(results['oauth-p50-added']).toMatchObject({
      against: 'app-id-serial',
      difference: 'p50 +0.250 ms, mean +0.150 ms, CPU +100 µs',
      target: { text: 'p50 added <= 0.3 ms', pass: true },
    });
    expect(results['alerts-throughput-loss']).toMatchObject({
      figures: ['19500/s, CPU 40.0 µs/call', '20000/s, CPU 40.0 µs/call'],
      difference: '2.5% lost, CPU +0.0 µs/call',
      target: { text: 'throughput lost <= 5%', pass: true },
    });
  });

  it('fails JWT verification adding more than 0.3 ms to the p50, and alerts costing more than 5 %', () => {
    const results = byId({
      'app-id-serial': appIdSerial,
      oauth: { ...appIdSerial, p50Ms: 0.851 },
      'hot-alerts-off': alertsOff,
      'hot-alerts-on': { ...alertsOff, authorizationsPerSecond: 18_900 },
    });
    expect(results['oauth-p50-added']?.target?.pass).toBe(false);
    expect(results['alerts-throughput-loss']?.target?.pass).toBe(false);
    const edge = byId({
      'app-id-serial': appIdSerial,
      oauth: { ...appIdSerial, p50Ms: 0.85 },
      'hot-alerts-off': alertsOff,
      'hot-alerts-on': { ...alertsOff, authorizationsPerSecond: 21_000 },
    });
    expect(edge['oauth-p50-added']?.target?.pass).toBe(true);
    expect(edge['alerts-throughput-loss']?.difference).toBe('5.0% gained, CPU +0.0 µs/call');
    expect(edge['alerts-throughput-loss']?.target?.pass).toBe(true);
  });

  it('fails a throttle adding more than 0.05 ms to the p50 or more than 10 % to the Redis CPU per authorization', () => {
    const results = byId({
      'hot-serial': hotSerial,
      'throttled-serial': { ...throttledSerial, p50Ms: 0.551, redisCpuMicrosPerCall: 44.2 },
    });
    expect(results['throttle-p50-added']?.target?.pass).toBe(false);
    expect(results['throttle-redis-cpu']).toMatchObject({
      difference: '+10.5% Redis CPU per authorization, p50 +0.051 ms',
      target: { pass: false },
    });
    // The script time far over 10 % judges nothing: it is a figure only.
    const script = byId({
      'hot-serial': hotSerial,
      'throttled-serial': { ...throttledSerial, scriptMicrosPerCall: 30 },
    });
    expect(script['throttle-redis-script']?.target).toBeUndefined();
    expect(script['throttle-redis-cpu']?.target?.pass).toBe(true);
    expect(
      comparisonTargets(
        evaluateComparisons(run({ 'hot-serial': hotSerial, 'throttled-serial': throttledSerial })),
      ).map((target) => target.id),
    ).toEqual(['throttle-p50-added', 'throttle-redis-cpu']);
  });

  it('holds the throttle to 10 % of the server CPU, the script time row without a limit', () => {
    const throttleRows = COMPARISONS.filter((comparison) => comparison.id.startsWith('throttle-redis'));
    expect(throttleRows.map(({ id, measure, limit }) => ({ id, measure, limit }))).toEqual([
      { id: 'throttle-redis-cpu', measure: 'redis-cpu-added', limit: 0.1 },
      { id: 'throttle-redis-script', measure: 'redis-script-time-added', limit: undefined },
    ]);
  });

  it('reads interleaved workloads round by round: the median of the paired ratios, an outlier round left out', () => {
    const rounds = (...throughputs: number[]) => ({ ...alertsOff, roundThroughputs: throughputs });
    const results = byId({
      // The third round ran at three times the usual rate: the totals would read it as 20 % gained.
      'hot-alerts-off': rounds(4_000, 4_000, 4_000, 4_000, 4_000),
      'hot-alerts-on': rounds(3_920, 3_960, 12_000, 3_900, 4_040),
    });
    expect(results['alerts-throughput-loss']?.difference).toBe(
      '1.0% lost (median of 5 paired rounds; rounds from -200.0% to 2.5%), CPU +0.0 µs/call',
    );
    expect(results['alerts-throughput-loss']?.target?.pass).toBe(true);
    const costly = byId({
      'hot-alerts-off': rounds(4_000, 4_000, 4_000),
      'hot-alerts-on': rounds(3_700, 3_000, 3_900),
    });
    expect(costly['alerts-throughput-loss']?.target?.pass).toBe(false);
  });

  it('reads the throttle’s Redis CPU round by round: the median of the paired ratios, a disturbed round left out', () => {
    const rounds = (totalMicros: number, ...micros: number[]) => ({
      ...hotSerial,
      redisCpuMicrosPerCall: totalMicros,
      roundRedisCpuMicrosPerCall: micros,
    });
    const results = byId({
      // The third throttled round cost Redis three times the usual: the totals would read it as +46.8 %.
      'hot-serial': rounds(40, 40, 40, 40, 40, 40),
      'throttled-serial': rounds(58.72, 42, 41, 120, 43.6, 47),
    });
    expect(results['throttle-redis-cpu']).toMatchObject({
      figures: ['Redis CPU 58.7 µs/authorization', 'Redis CPU 40.0 µs/authorization'],
      difference:
        '+9.0% Redis CPU per authorization (median of 5 paired rounds; rounds from +2.5% to +200.0%), p50 +0.000 ms',
      target: { text: 'Redis CPU per authorization added <= 10%', pass: true },
    });
    // Most rounds over the limit: the median is over it too, though the totals are within it.
    const costly = byId({
      'hot-serial': rounds(40, 40, 40, 40, 40, 40),
      'throttled-serial': rounds(42, 44.8, 45, 30, 46, 44.4),
    });
    expect(costly['throttle-redis-cpu']?.difference).toBe(
      '+12.0% Redis CPU per authorization (median of 5 paired rounds; rounds from -25.0% to +15.0%), p50 +0.000 ms',
    );
    expect(costly['throttle-redis-cpu']?.target?.pass).toBe(false);
  });

  it('reads the throttle’s Redis CPU on the totals when the two did not run in the same rounds', () => {
    const results = byId({
      'hot-serial': { ...hotSerial, roundRedisCpuMicrosPerCall: [40, 40, 40] },
      // Rounds within the limit, but not paired with the other's: the totals decide.
      'throttled-serial': {
        ...throttledSerial,
        redisCpuMicrosPerCall: 44.4,
        roundRedisCpuMicrosPerCall: [41, 42],
      },
    });
    expect(results['throttle-redis-cpu']).toMatchObject({
      difference: '+11.0% Redis CPU per authorization, p50 +0.040 ms',
      target: { pass: false },
    });
  });

  it('reads the throttle’s script time round by round: the median of the paired ratios, a disturbed round left out', () => {
    const rounds = (totalMicros: number, ...micros: number[]) => ({
      ...hotSerial,
      scriptMicrosPerCall: totalMicros,
      roundScriptMicrosPerCall: micros,
    });
    const results = byId({
      // The third throttled round took three times the usual: the totals would read it as +27.0 %.
      'hot-serial': rounds(20, 20, 20, 20, 20, 20),
      'throttled-serial': rounds(25.4, 21, 20.5, 60, 21.8, 23.5),
    });
    expect(results['throttle-redis-script']).toMatchObject({
      figures: ['script 25.4 µs/authorization', 'script 20.0 µs/authorization'],
      difference:
        '+9.0% Redis script time per authorization (median of 5 paired rounds; rounds from +2.5% to +200.0%)',
    });
    // Most rounds over the limit: the median is over it too, though the totals are within it.
    const costly = byId({
      'hot-serial': rounds(20, 20, 20, 20, 20, 20),
      'throttled-serial': rounds(21, 22.4, 22.5, 15, 23, 22.2),
    });
    expect(costly['throttle-redis-script']?.difference).toBe(
      '+12.0% Redis script time per authorization (median of 5 paired rounds; rounds from -25.0% to +15.0%)',
    );
  });

  it('reads the throttle’s script time on the totals when the two did not run in the same rounds', () => {
    const hot = { ...hotSerial, roundScriptMicrosPerCall: [20, 20, 20] };
    const throttled = { ...throttledSerial, scriptMicrosPerCall: 22.2, roundScriptMicrosPerCall: [20.5, 21] };
    const ratios = pairedRatios(throttled, hot, SCRIPT_TIME);
    expect(ratios).toHaveLength(1);
    expect(ratios[0]).toBeCloseTo(1.11, 12);
    const results = byId({
      'hot-serial': hot,
      // Rounds within the limit, but not paired with the other's: the totals decide.
      'throttled-serial': throttled,
    });
    expect(results['throttle-redis-script']).toMatchObject({
      difference: '+11.0% Redis script time per authorization',
    });
  });

  it('leaves out a comparison whose workloads did not both run', () => {
    expect(evaluateComparisons(run({ 'hot-serial': hotSerial }))).toEqual([]);
  });

  it('turns only the comparisons with a limit into targets', () => {
    const targets = comparisonTargets(
      evaluateComparisons(
        run({
          'hot-serial': hotSerial,
          'app-id-serial': appIdSerial,
          soap: hotSerial,
          oauth: { ...appIdSerial, p50Ms: 1 },
          'hot-alerts-off': alertsOff,
          'hot-alerts-on': alertsOff,
        }),
      ),
    );
    expect(targets.map((target) => [target.id, target.pass])).toEqual([
      ['oauth-p50-added', false],
      ['alerts-throughput-loss', true],
    ]);
    expect(targets[0]?.target).toBe('oauth against app-id-serial (same run): p50 added <= 0.3 ms');
  });
});
