/**
 * Redis INFO parsing: `INFO commandstats` and the server's CPU time from `INFO cpu`. Redis counts the commands a Lua script runs with redis.call as
 * well as the EVALSHA that ran it, so these figures are commands executed by the server, not round trips.
 */

/** One command's counters in `INFO commandstats`: calls, and the server's time executing them (µs). */
export interface CommandStat {
  readonly calls: number;
  readonly usec: number;
}

/** Command name (lower case, subcommands as `config|get`) -> its counters. */
export type CommandStats = ReadonlyMap<string, CommandStat>;

/**
 * The commands that run a script, as a client sends them. Their `usec` is the time of the whole script, the
 * commands it runs with redis.call included; those commands are also listed on their own lines, with their
 * own `usec` (Redis 7), so adding every line's `usec` would count their time twice, and no line says whether
 * a command came from a client or from a script. The script time is therefore the `usec` of these lines only:
 * on the authorizer's hot path every authorization is one EVALSHA (EVAL after a NOSCRIPT), nothing sent
 * beside it, so this is the server's whole execution time of the authorization. A command a client sends
 * outside a script (a plain GET) is not in it.
 */
export const SCRIPT_COMMANDS: readonly string[] = [
  'evalsha',
  'eval',
  'evalsha_ro',
  'eval_ro',
  'fcall',
  'fcall_ro',
];

const COMMAND_LINE = /^cmdstat_([^:]+):(.*)$/;
/** A counter: digits only, and no more than a double holds exactly. */
const COUNTER = /^[0-9]{1,15}$/;

/** A non-negative integer counter of a commandstats line's fields; throws when absent or malformed. */
function counter(fields: readonly string[], name: string, line: string): number {
  const field = fields.find((candidate) => candidate.startsWith(`${name}=`));
  const text = field?.slice(name.length + 1) ?? '';
  if (!COUNTER.test(text)) {
    throw new Error(`INFO commandstats: no valid ${name}= count in line ${JSON.stringify(line)}`);
  }
  return Number(text);
}

export function parseCommandStats(info: string): CommandStats {
  const stats = new Map<string, CommandStat>();
  for (const rawLine of info.split('\n')) {
    const line = rawLine.trim();
    const match = COMMAND_LINE.exec(line);
    if (!match) continue;
    const [, command, fieldsText] = match as unknown as [string, string, string];
    const fields = fieldsText.split(',');
    stats.set(command.toLowerCase(), {
      calls: counter(fields, 'calls', line),
      usec: counter(fields, 'usec', line),
    });
  }
  return stats;
}

/**
 * The commands between two snapshots. INFO itself is excluded: the snapshots are taken with it.
 * Returns the total and the per-command deltas, largest first, and the script time (`SCRIPT_COMMANDS`' usec).
 */
export function diffCommandStats(
  before: CommandStats,
  after: CommandStats,
  excluded: readonly string[] = ['info'],
): {
  readonly total: number;
  readonly byCommand: ReadonlyArray<readonly [string, number]>;
  /** µs the server spent executing scripts (EVALSHA and the like, their own commands included). */
  readonly scriptMicros: number;
} {
  const byCommand: Array<[string, number]> = [];
  let scriptMicros = 0;
  for (const [command, end] of after) {
    if (excluded.includes(command)) continue;
    const start = before.get(command) ?? { calls: 0, usec: 0 };
    const delta = end.calls - start.calls;
    const usec = end.usec - start.usec;
    if (delta < 0 || usec < 0)
      throw new Error(`INFO commandstats: ${command} went down (stats were reset mid-run)`);
    if (delta > 0) byCommand.push([command, delta]);
    if (SCRIPT_COMMANDS.includes(command)) scriptMicros += usec;
  }
  byCommand.sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]));
  return { total: byCommand.reduce((sum, [, delta]) => sum + delta, 0), byCommand, scriptMicros };
}

/** CPU seconds the Redis server process has used (user + system) from `INFO cpu`. */
export function serverCpuSeconds(info: string): number {
  const field = (name: string) => {
    const match = new RegExp(`^${name}:([0-9.]+)\\s*$`, 'm').exec(info);
    if (!match) throw new Error(`INFO cpu: no ${name} field`);
    return Number(match[1]);
  };
  return field('used_cpu_user') + field('used_cpu_sys');
}
