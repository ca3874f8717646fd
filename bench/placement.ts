/**
 * Which CPUs the bench's Redis servers run on, and which the bench process (the authorizer, the reporter,
 * the in-process platform and SNS endpoint) runs on.
 *
 * Left to the scheduler on a machine of two cores, Redis and the bench move between the cores. When both
 * land on one core, each serial call switches between them and Redis's script time per call nearly
 * doubles (the same hit measured 22 to 28 µs in some rounds and 40 to 50 µs in others of one run). Two
 * set-ups measured one after the other then differ by where they ran, not by what they do. Apart, Redis
 * runs as production runs it: on a node of its own, away from the Lambda functions that call it.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import os from 'node:os';
import { findOnPath } from '../local/redis';

export interface Placement {
  /** CPU lists, as taskset takes them. */
  readonly benchCpus: string;
  readonly redisCpus: string;
  /** The CPUs the bench was allowed at its start: its own again once the workloads are done. */
  readonly allCpus: string;
}

/** A CPU list as Linux writes it (`0-3,8,10-11`), expanded; [] when it is not one. */
export function cpusOfList(list: string): number[] {
  const cpus: number[] = [];
  for (const part of list.trim().split(',')) {
    const range = /^(\d+)(?:-(\d+))?$/.exec(part);
    if (range === null) return [];
    const from = Number(range[1]);
    const to = range[2] === undefined ? from : Number(range[2]);
    for (let cpu = from; cpu <= to; cpu++) cpus.push(cpu);
  }
  return cpus;
}

/** CPUs as a list with runs as ranges: [0, 1, 2, 5] is `0-2,5`. */
export function cpuListOf(cpus: readonly number[]): string {
  const parts: string[] = [];
  for (let i = 0; i < cpus.length; ) {
    let end = i;
    while (end + 1 < cpus.length && (cpus[end + 1] as number) === (cpus[end] as number) + 1) end++;
    parts.push(end === i ? String(cpus[i]) : `${cpus[i]}-${cpus[end]}`);
    i = end + 1;
  }
  return parts.join(',');
}

/**
 * The first half of the allowed CPUs for the bench, the other half for Redis; undefined on a single CPU,
 * or where taskset (util-linux) is not installed: the run then says it is unpinned.
 */
export function choosePlacement(allowed: readonly number[], tasksetFound: boolean): Placement | undefined {
  if (allowed.length < 2 || !tasksetFound) return undefined;
  const benchCount = Math.floor(allowed.length / 2);
  return {
    benchCpus: cpuListOf(allowed.slice(0, benchCount)),
    redisCpus: cpuListOf(allowed.slice(benchCount)),
    allCpus: cpuListOf(allowed),
  };
}

/** The CPUs this process may run on (its affinity, which a cpuset or taskset may have narrowed). */
function allowedCpus(): number[] {
  try {
    const list = /^Cpus_allowed_list:\s*(\S+)/m.exec(readFileSync('/proc/self/status', 'utf8'))?.[1];
    const cpus = list === undefined ? [] : cpusOfList(list);
    if (cpus.length > 0) return cpus;
  } catch {
    // not Linux: no affinity to read, and no taskset either
  }
  return Array.from({ length: os.availableParallelism() }, (_, cpu) => cpu);
}

export class PinError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'PinError';
  }
}

/** Pins every thread of process `pid` to `cpus`; a PinError says why taskset refused. */
export function pinProcess(pid: number, cpus: string): void {
  try {
    execFileSync('taskset', ['--all-tasks', '--pid', '--cpu-list', cpus, String(pid)], {
      stdio: ['ignore', 'ignore', 'pipe'],
      timeout: 5_000,
    });
  } catch (error) {
    const stderr = (error as { stderr?: Buffer }).stderr?.toString().trim();
    throw new PinError(`taskset could not pin process ${pid} to CPU ${cpus}: ${stderr || String(error)}`, {
      cause: error,
    });
  }
}

/**
 * Chooses the placement and pins the bench to its half; undefined (the run unpinned) when there is no
 * placement or taskset may not pin here, with the reason printed.
 */
export function pinBench(log: (line: string) => void): Placement | undefined {
  const placement = choosePlacement(allowedCpus(), findOnPath('taskset') !== undefined);
  if (placement === undefined) return undefined;
  try {
    pinProcess(process.pid, placement.benchCpus);
    return placement;
  } catch (error) {
    log(`bench: ${(error as Error).message}; running unpinned`);
    return undefined;
  }
}

export function placementText(placement: Placement | undefined): string {
  return placement === undefined
    ? 'unpinned (one CPU, no taskset, or taskset refused): Redis and the bench share the CPUs as the scheduler places them'
    : `redis-server on CPU ${placement.redisCpus}, the bench process on CPU ${placement.benchCpus} (taskset); ` +
        'module init timed on every CPU';
}
