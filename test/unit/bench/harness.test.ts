import { describe, expect, it } from 'vitest';
import { parseBenchArgs, UsageError } from '../../../bench/args';
import { bundleComposition } from '../../../bench/bundle';
import { runConcurrently } from '../../../bench/driver';
import { markdownTable } from '../../../bench/report';
import { WORKLOAD_NAMES } from '../../../bench/workloads';

describe('parseBenchArgs', () => {
  it('defaults to a full run, 10 ms SNS latency, a 20 ms platform and the config default window', () => {
    expect(parseBenchArgs([])).toEqual({
      check: false,
      quick: false,
      snsLatencyMs: 10,
      platformLatencyMs: 20,
      reportWindowSeconds: 10,
      workloads: WORKLOAD_NAMES,
      portalOnly: false,
    });
  });

  it('reads every flag, values separate or after =', () => {
    expect(
      parseBenchArgs([
        '--check',
        '--quick',
        '--sns-latency-ms',
        '25',
        '--platform-latency-ms=0',
        '--report-window-seconds=0',
      ]),
    ).toEqual({
      check: true,
      quick: true,
      snsLatencyMs: 25,
      platformLatencyMs: 0,
      reportWindowSeconds: 0,
      workloads: WORKLOAD_NAMES,
      portalOnly: false,
    });
  });

  it('runs the named workloads in the table order, and refuses names it does not know', () => {
    expect(parseBenchArgs(['--workloads', 'soap,hot-serial']).workloads).toEqual(['hot-serial', 'soap']);
    expect(parseBenchArgs(['--workloads=oauth']).workloads).toEqual(['oauth']);
    expect(() => parseBenchArgs(['--workloads', 'hot,warm'])).toThrow(/--workloads takes workload names/);
    expect(() => parseBenchArgs(['--workloads'])).toThrow(UsageError);
  });

  it('measures the portal alone with --portal-only, which takes no value', () => {
    expect(parseBenchArgs(['--portal-only', '--quick'])).toMatchObject({ portalOnly: true, quick: true });
    expect(() => parseBenchArgs(['--portal-only', 'yes'])).toThrow(UsageError);
  });

  it('refuses unknown flags and bad numbers with the usage', () => {
    expect(() => parseBenchArgs(['--fast'])).toThrow(UsageError);
    expect(() => parseBenchArgs(['--sns-latency-ms'])).toThrow(/--sns-latency-ms needs an integer/);
    expect(() => parseBenchArgs(['--sns-latency-ms', '-1'])).toThrow(UsageError);
    expect(() => parseBenchArgs(['--sns-latency-ms', '1.5'])).toThrow(UsageError);
    expect(() => parseBenchArgs(['--report-window-seconds', '901'])).toThrow(/from 0 to 900/);
    expect(() => parseBenchArgs(['--platform-latency-ms', '20ms'])).toThrow(
      /--platform-latency-ms needs an integer/,
    );
  });
});

describe('bundleComposition', () => {
  it('groups output bytes by npm package, scoped and nested ones included, largest first', () => {
    const composition = bundleComposition({
      'node_modules/ioredis/built/Redis.js': { bytesInOutput: 500 },
      'node_modules/ioredis/built/Pipeline.js': { bytesInOutput: 300 },
      'node_modules/@smithy/core/dist-cjs/index.js': { bytesInOutput: 900 },
      'node_modules/ioredis/node_modules/debug/src/index.js': { bytesInOutput: 50 },
      'core/settings/config.ts': { bytesInOutput: 120 },
    });
    expect(composition).toEqual([
      { module: '@smithy/core', bytes: 900 },
      { module: 'ioredis', bytes: 800 },
      { module: '(project) core/settings/config.ts', bytes: 120 },
      { module: 'debug', bytes: 50 },
    ]);
  });
});

describe('runConcurrently', () => {
  it('makes every call once, never more than `concurrency` at a time, and classifies throws too', async () => {
    let running = 0;
    let mostRunning = 0;
    const seen: number[] = [];
    const run = await runConcurrently(
      50,
      4,
      async (index) => {
        running++;
        mostRunning = Math.max(mostRunning, running);
        seen.push(index);
        await new Promise((resolve) => setImmediate(resolve));
        running--;
        if (index % 10 === 0) throw new Error('Unauthorized');
        return index % 2 === 0 ? 'even' : 'odd';
      },
      (settled) => (settled.status === 'rejected' ? 'thrown' : settled.value),
    );
    expect(seen.sort((a, b) => a - b)).toEqual(Array.from({ length: 50 }, (_, i) => i));
    expect(mostRunning).toBe(4);
    expect(run.outcomes).toEqual({ thrown: 5, even: 20, odd: 25 });
    expect(run.latenciesNs).toHaveLength(50);
    expect([...run.latenciesNs].every((ns) => ns > 0)).toBe(true);
  });

  it('takes no further call once stopped, and its figures cover the calls it made', async () => {
    const stop = new AbortController();
    const run = await runConcurrently(
      1_000,
      2,
      async (index) => {
        if (index === 9) stop.abort();
        await new Promise((resolve) => setImmediate(resolve));
        return 'made';
      },
      (settled) => (settled.status === 'fulfilled' ? settled.value : 'thrown'),
      stop.signal,
    );
    // Call 9 stops the run as it starts; call 8, under way on the other worker, still finishes.
    expect(run.calls).toBe(10);
    expect(run.latenciesNs).toHaveLength(run.calls);
    expect(run.outcomes).toEqual({ made: run.calls });
  });

  it('refuses a run with no calls or no workers', async () => {
    await expect(
      runConcurrently(
        0,
        1,
        async () => 'x',
        () => 'x',
      ),
    ).rejects.toThrow(RangeError);
    await expect(
      runConcurrently(
        1,
        0,
        async () => 'x',
        () => 'x',
      ),
    ).rejects.toThrow(RangeError);
  });
});

describe('markdownTable', () => {
  it('pads cells into aligned columns', () => {
    expect(markdownTable(['a', 'bb'], [['ccc', 'd']])).toBe('| a   | bb |\n| --- | -- |\n| ccc | d  |');
  });
});
