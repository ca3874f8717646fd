import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import {
  type CpuReading,
  machineBusyTicks,
  otherCpuPerCore,
  processTimes,
  readCpu,
  treeTicks,
} from '../../../bench/other-load';

/** A /proc/<pid>/stat line: the fields up to cstime, then a few more as Linux writes them. */
function statLine(
  pid: number,
  name: string,
  parent: number,
  [utime, stime, cutime, cstime]: number[],
): string {
  return `${pid} (${name}) S ${parent} ${pid} ${pid} 0 -1 4194560 100 0 0 0 ${utime} ${stime} ${cutime} ${cstime} 20 0 1 0`;
}

/** Spends this process's CPU (not its wall time) until `ms` of it are used. */
function burnCpu(ms: number): void {
  const start = process.cpuUsage();
  let x = 0;
  while (process.cpuUsage(start).user < ms * 1000) x = (x + Math.sqrt(x + 1)) % 1e6;
}

describe('machineBusyTicks', () => {
  it('adds user, nice and system of the first line, leaving idle, interrupts and steal out', () => {
    expect(machineBusyTicks('cpu  100 5 50 1000 10 3 7 2 0 0\ncpu0 50 2 25 500 5 1 3 1 0 0\n')).toBe(155);
  });

  it('reads nothing from text that is not /proc/stat', () => {
    expect(machineBusyTicks('cpu0 1 2 3 4\n')).toBeUndefined();
    expect(machineBusyTicks('')).toBeUndefined();
  });
});

describe('processTimes', () => {
  it('counts the fields from the last parenthesis, whatever the command name holds', () => {
    expect(processTimes(statLine(4321, 'node (bench) x', 77, [10, 20, 30, 40]))).toEqual({
      pid: 4321,
      parent: 77,
      ticks: 100,
    });
  });

  it('reads nothing from a line cut short or not a stat line', () => {
    expect(processTimes('4321 (node) S 77 4321')).toBeUndefined();
    expect(processTimes('not a stat line')).toBeUndefined();
  });
});

describe('treeTicks', () => {
  it('counts the root and its live descendants, not the other processes', () => {
    const processes = [
      { pid: 10, parent: 1, ticks: 5 },
      { pid: 11, parent: 10, ticks: 7 },
      { pid: 12, parent: 11, ticks: 11 },
      { pid: 13, parent: 1, ticks: 1000 },
      { pid: 14, parent: 13, ticks: 2000 },
    ];
    expect(treeTicks(processes, 10)).toBe(23);
    expect(treeTicks(processes, 11)).toBe(18);
  });
});

describe('otherCpuPerCore', () => {
  const at = (machineBusy: number, own: number, atMs: number): CpuReading => ({ machineBusy, own, atMs });

  it("is the machine's busy time less the bench's, per core of the wall time", () => {
    // 300 ticks busy in 1 s on 2 cores, 200 of them the bench's: 100 ticks = 1 s of one core of two.
    expect(otherCpuPerCore(at(1000, 100, 0), at(1300, 300, 1000), 2)).toBeCloseTo(0.5, 10);
    expect(otherCpuPerCore(at(1000, 100, 0), at(1300, 400, 1000), 2)).toBe(0);
  });

  it('never reads below zero (the two clocks round apart) or over an empty span', () => {
    expect(otherCpuPerCore(at(1000, 100, 0), at(1100, 250, 1000), 2)).toBe(0);
    expect(otherCpuPerCore(at(1000, 100, 5), at(1300, 100, 5), 2)).toBe(0);
  });
});

describe('readCpu', () => {
  it("counts this process's CPU and a child's once it has ended as the bench's own", () => {
    const before = readCpu();
    burnCpu(200);
    const child = spawnSync(process.execPath, [
      '-e',
      'const s = process.cpuUsage(); let x = 0; while (process.cpuUsage(s).user < 200000) x = (x + Math.sqrt(x + 1)) % 1e6;',
    ]);
    expect(child.status).toBe(0);
    const after = readCpu();
    if (before === undefined || after === undefined) throw new Error('/proc could not be read');
    // 400 ms of CPU at 100 ticks a second, less the rounding of two readings.
    expect(after.own - before.own).toBeGreaterThanOrEqual(38);
    expect(after.machineBusy - before.machineBusy).toBeGreaterThanOrEqual(38);
  });
});
