import { describe, expect, it } from 'vitest';
import {
  addPlatformCalls,
  type ChunkFigures,
  NO_PLATFORM_CALLS,
  platformCallsBetween,
  Tally,
} from '../../../bench/tally';

const calls = (authorize: number, report: number) => ({
  total: authorize + report,
  byEndpoint: { authorize, report },
});

function chunk(from: number, latencies: number[], overrides: Partial<ChunkFigures> = {}): ChunkFigures {
  return {
    from,
    latenciesNs: Float64Array.from(latencies),
    outcomes: { allow: latencies.length },
    durationMs: 100,
    cpuMicros: 1_000,
    redisCommandsSent: latencies.length,
    snsPublishes: 1,
    platformCalls: NO_PLATFORM_CALLS,
    primaries: [
      { byCommand: [['evalsha', latencies.length]], cpuSeconds: 0.01, scriptMicros: 20 * latencies.length },
    ],
    flush: { durationMs: 5, platformCalls: calls(1, 1) },
    ...overrides,
  };
}

describe('Tally', () => {
  it('adds chunks measured in any order into one workload: latencies in call order, sums of the rest', () => {
    const tally = new Tally(5);
    tally.add(chunk(3, [30, 40], { outcomes: { allow: 1, deny: 1 }, platformCalls: calls(1, 0) }));
    expect(tally.complete).toBe(false);
    tally.add(
      chunk(0, [0, 10, 20], {
        primaries: [
          {
            byCommand: [
              ['evalsha', 3],
              ['hincrby', 6],
            ],
            cpuSeconds: 0.02,
            scriptMicros: 75,
          },
        ],
      }),
    );
    expect(tally.complete).toBe(true);
    expect([...tally.latenciesNs]).toEqual([0, 10, 20, 30, 40]);
    expect(tally.outcomes).toEqual({ allow: 4, deny: 1 });
    expect(tally.durationMs).toBe(200);
    expect(tally.cpuMicros).toBe(2_000);
    expect(tally.redisCommandsSent).toBe(5);
    expect(tally.snsPublishes).toBe(2);
    expect(tally.platformCalls).toEqual(calls(1, 0));
    expect(tally.flushDurationMs).toBe(10);
    expect(tally.flushPlatformCalls).toEqual(calls(2, 2));
    expect(tally.primaries).toEqual([
      {
        total: 11,
        byCommand: [
          ['hincrby', 6],
          ['evalsha', 5],
        ],
        cpuSeconds: 0.03,
        scriptMicros: 115,
      },
    ]);
    expect(tally.executedByCommand).toEqual([
      ['hincrby', 6],
      ['evalsha', 5],
    ]);
  });

  it('sums each primary apart and every primary together', () => {
    const tally = new Tally(2);
    tally.add(
      chunk(0, [1, 2], {
        primaries: [
          { byCommand: [['evalsha', 1]], cpuSeconds: 0.1, scriptMicros: 30 },
          { byCommand: [['evalsha', 1]], cpuSeconds: 0.2, scriptMicros: 12 },
        ],
      }),
    );
    expect(
      tally.primaries.map(({ total, cpuSeconds, scriptMicros }) => [total, cpuSeconds, scriptMicros]),
    ).toEqual([
      [1, 0.1, 30],
      [1, 0.2, 12],
    ]);
    expect(tally.executedByCommand).toEqual([['evalsha', 2]]);
  });

  it('keeps each chunk’s throughput, Redis CPU and script time per call (every primary’s summed), in call order', () => {
    const tally = new Tally(6);
    tally.add(
      chunk(4, [1, 2], {
        durationMs: 50,
        primaries: [
          { byCommand: [], cpuSeconds: 0.000_1, scriptMicros: 40 },
          { byCommand: [], cpuSeconds: 0.000_02, scriptMicros: 13 },
        ],
      }),
    );
    tally.add(
      chunk(0, [1, 2, 3, 4], {
        durationMs: 200,
        primaries: [
          { byCommand: [], cpuSeconds: 0.000_16, scriptMicros: 0 },
          { byCommand: [], cpuSeconds: 0, scriptMicros: 90 },
        ],
      }),
    );
    expect(tally.chunkThroughputs).toEqual([20, 40]);
    expect(tally.chunkRedisCpuMicrosPerCall.map((micros) => Number(micros.toFixed(6)))).toEqual([40, 60]);
    expect(tally.chunkScriptMicrosPerCall).toEqual([22.5, 26.5]);
    expect(tally.primaries.map((primary) => primary.scriptMicros)).toEqual([40, 103]);
  });

  it('refuses a chunk outside the calls or one that measures a call again', () => {
    const tally = new Tally(4);
    tally.add(chunk(0, [1, 2]));
    expect(() => tally.add(chunk(1, [3]))).toThrow(/a second time/);
    expect(() => tally.add(chunk(3, [3, 4]))).toThrow(RangeError);
    expect(tally.complete).toBe(false);
  });
});

describe('addPlatformCalls', () => {
  it('adds totals and each endpoint, endpoints of either side kept', () => {
    expect(addPlatformCalls({ total: 2, byEndpoint: { authrep: 2 } }, calls(1, 3))).toEqual({
      total: 6,
      byEndpoint: { authrep: 2, authorize: 1, report: 3 },
    });
  });
});

describe('platformCallsBetween', () => {
  it('is what each endpoint and the total gained, an endpoint first seen after counted from zero', () => {
    expect(
      platformCallsBetween(
        { total: 3, byEndpoint: { authrep: 3 } },
        { total: 7, byEndpoint: { authrep: 4, report: 3 } },
      ),
    ).toEqual({ total: 4, byEndpoint: { authrep: 1, report: 3 } });
  });
});
