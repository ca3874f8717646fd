/**
 * How much of the machine other work took while the bench ran: the CPU time every process spent, less
 * the bench's own (this process and its descendants: the Redis servers, esbuild, the module-init
 * children), per core of the run's wall time.
 *
 * The 1-minute load average at the end of a run mostly counts the bench itself: its process and Redis were
 * busy for that minute, so on a quiet machine of two cores it reads 0.4 to 0.55 per core, and a rule on it
 * judges a run or not by the bench's own last workloads. This reading leaves the bench out.
 *
 * Linux only (/proc). Times are in clock ticks of USER_HZ, which /proc reports at 100 a second. The
 * machine's busy time is user, nice and system: interrupts and softirqs are left out (the bench's own
 * loopback traffic is handled there, charged to no process) and so is steal (another machine's work).
 */
import { readdirSync, readFileSync } from 'node:fs';

const TICKS_PER_SECOND = 100;

/** A process's line of /proc/<pid>/stat, as far as this reads it. */
export interface ProcessTimes {
  readonly pid: number;
  readonly parent: number;
  /** Its own time and that of its children it has waited for, in ticks. */
  readonly ticks: number;
}

export interface CpuReading {
  /** The machine's user, nice and system time, in ticks. */
  readonly machineBusy: number;
  /** The bench's processes' time, in ticks. */
  readonly own: number;
  readonly atMs: number;
}

/** The busy ticks of /proc/stat's first line (`cpu  user nice system idle ...`); undefined if not one. */
export function machineBusyTicks(procStat: string): number | undefined {
  const fields = /^cpu +(\d+) +(\d+) +(\d+) /.exec(procStat.split('\n', 1)[0] ?? '');
  if (fields === null) return undefined;
  return Number(fields[1]) + Number(fields[2]) + Number(fields[3]);
}

/**
 * A /proc/<pid>/stat line; undefined if not one. The command name (field 2) is in parentheses and may hold
 * spaces or parentheses itself, so the fields are counted from the last `)`.
 */
export function processTimes(stat: string): ProcessTimes | undefined {
  const close = stat.lastIndexOf(')');
  const pid = Number.parseInt(stat, 10);
  if (close < 0 || !Number.isInteger(pid)) return undefined;
  // From field 3 (state): state ppid pgrp session tty_nr tpgid flags minflt cminflt majflt cmajflt utime
  // stime cutime cstime.
  const rest = stat.slice(close + 2).split(' ');
  const numbers = [rest[1], rest[11], rest[12], rest[13], rest[14]].map(Number);
  if (numbers.some((n) => !Number.isInteger(n))) return undefined;
  const [parent, utime, stime, cutime, cstime] = numbers as [number, number, number, number, number];
  return { pid, parent, ticks: utime + stime + cutime + cstime };
}

/**
 * The ticks of `root` and of every live descendant. A descendant that ended is in its parent's waited-for
 * time once reaped, so nothing is counted twice.
 */
export function treeTicks(processes: readonly ProcessTimes[], root: number): number {
  const children = new Map<number, ProcessTimes[]>();
  for (const process of processes) {
    const siblings = children.get(process.parent) ?? [];
    siblings.push(process);
    children.set(process.parent, siblings);
  }
  let ticks = processes.find((process) => process.pid === root)?.ticks ?? 0;
  const pending = [...(children.get(root) ?? [])];
  for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
    ticks += next.ticks;
    pending.push(...(children.get(next.pid) ?? []));
  }
  return ticks;
}

function readProcesses(): ProcessTimes[] {
  const processes: ProcessTimes[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const times = processTimes(readFileSync(`/proc/${entry}/stat`, 'utf8'));
      if (times !== undefined) processes.push(times);
    } catch {
      // It ended between the listing and the read: it is in its parent's waited-for time, or not ours.
    }
  }
  return processes;
}

/** The machine's and the bench's CPU time now; undefined where /proc cannot say (not Linux). */
export function readCpu(): CpuReading | undefined {
  try {
    const machineBusy = machineBusyTicks(readFileSync('/proc/stat', 'utf8'));
    if (machineBusy === undefined) return undefined;
    return { machineBusy, own: treeTicks(readProcesses(), process.pid), atMs: performance.now() };
  } catch {
    return undefined;
  }
}

/** Other work's CPU between two readings, per core of the wall time between them (0 = none, 1 = all). */
export function otherCpuPerCore(start: CpuReading, end: CpuReading, cores: number): number {
  const seconds = (end.atMs - start.atMs) / 1000;
  if (seconds <= 0 || cores <= 0) return 0;
  const otherTicks = end.machineBusy - start.machineBusy - (end.own - start.own);
  return Math.max(0, otherTicks) / TICKS_PER_SECOND / seconds / cores;
}
