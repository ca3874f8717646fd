/**
 * Redis INFO parsing: `INFO commandstats` and the server's CPU time from `INFO cpu`. Redis counts the commands a Lua script runs with redis.call as
 * well as the EVALSHA that ran it, so these figures are commands executed by the server, not round trips.
 */

/** Command name (lower case, subcommands as `config|get`) -> calls. */
export type CommandCalls = ReadonlyMap<string, number>;

const COMMAND_LINE = /^cmdstat_([^:]+):(.*)$/;

export function parseCommandStats(info: string): CommandCalls {
  const calls = new Map<string, number>();
  for (const rawLine of info.split('\n')) {
    const line = rawLine.trim();
    const match = COMMAND_LINE.exec(line);
    if (!match) continue;
    const [, command, fields] = match as unknown as [string, string, string];
    const callsField = fields.split(',').find((field) => field.startsWith('calls='));
    const value = callsField === undefined ? Number.NaN : Number(callsField.slice('calls='.length));
    if (!Number.isInteger(value) || value < 0) {
      throw new Error(`INFO commandstats: no valid calls= count in line ${JSON.stringify(line)}`);
    }
    calls.set(command.toLowerCase(), value);
  }
  return calls;
}

/**
 * The commands between two snapshots. INFO itself is excluded: the snapshots are taken with it.
 * Returns the total and the per-command deltas, largest first.
 */
export function diffCommandStats(
  before: CommandCalls,
  after: CommandCalls,
  excluded: readonly string[] = ['info'],
): { readonly total: number; readonly byCommand: ReadonlyArray<readonly [string, number]> } {
  const byCommand: Array<[string, number]> = [];
  for (const [command, afterCalls] of after) {
    if (excluded.includes(command)) continue;
    const delta = afterCalls - (before.get(command) ?? 0);
    if (delta < 0) throw new Error(`INFO commandstats: ${command} went down (stats were reset mid-run)`);
    if (delta > 0) byCommand.push([command, delta]);
  }
  byCommand.sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]));
  return { total: byCommand.reduce((sum, [, delta]) => sum + delta, 0), byCommand };
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
