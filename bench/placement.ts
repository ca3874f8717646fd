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
import { findOnPath } from '../local/redis';

export interface Placement {
  /** CPU list, as taskset takes it. */
  readonly benchCpus: string;
  readonly redisCpus: string;
  /** Every CPU: the bench's own once the workloads are done, so module init is timed as it always was. */
  readonly allCpus: string;
}

/** CPU list of `from` to `to`, inclusive. */
function cpuList(from: number, to: number): string {
  return from === to ? String(from) : `${from}-${to}`;
}

/**
 * The first half of the CPUs for the bench, the other half for Redis; undefined on a single CPU, or
 * where taskset (util-linux) is not installed: the run then says it is unpinned.
 */
export function choosePlacement(cpuCount: number, tasksetFound: boolean): Placement | undefined {
  if (cpuCount < 2 || !tasksetFound) return undefined;
  const benchCount = Math.floor(cpuCount / 2);
  return {
    benchCpus: cpuList(0, benchCount - 1),
    redisCpus: cpuList(benchCount, cpuCount - 1),
    allCpus: cpuList(0, cpuCount - 1),
  };
}

export function placementOfMachine(cpuCount: number): Placement | undefined {
  return choosePlacement(cpuCount, findOnPath('taskset') !== undefined);
}

/** Pins every thread of process `pid` to `cpus`. */
export function pinProcess(pid: number, cpus: string): void {
  execFileSync('taskset', ['--all-tasks', '--pid', '--cpu-list', cpus, String(pid)], {
    stdio: 'ignore',
    timeout: 5_000,
  });
}

export function placementText(placement: Placement | undefined): string {
  return placement === undefined
    ? 'unpinned (one CPU, or no taskset): Redis and the bench share the CPUs as the scheduler places them'
    : `redis-server on CPU ${placement.redisCpus}, the bench process on CPU ${placement.benchCpus} (taskset); ` +
        'module init timed on every CPU';
}
