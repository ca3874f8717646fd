/**
 * What a failed Redis command did: `not_run` when Redis certainly did not run it (it was never written to
 * a connection, or Redis refused it before running anything, or the hot-path script found its deadline
 * passed and counted nothing); `may_have_run` otherwise (a timeout, a connection closed with the command
 * written, an error of unknown kind). A call whose hot-path script failed `not_run` is counted once by
 * the platform's authrep; one whose script `may_have_run` is counted twice when it did run and its write
 * survived (over, never under: docs/reliability.md).
 *
 * One named entry per kind of certain failure, matched on the error ioredis or Redis gives; whatever no
 * entry matches may have run.
 */
export type CommandFate = 'not_run' | 'may_have_run';

/** A command given up before it was sent: its client did not connect within its wait. */
export class CommandNotSentError extends Error {
  override readonly name = 'CommandNotSentError';

  constructor(override readonly cause: unknown) {
    super(`redis command not sent: ${cause instanceof Error ? cause.message : String(cause)}`, { cause });
  }
}

interface NotRunKind {
  readonly name: string;
  /** Why the command cannot have run. */
  readonly why: string;
  readonly matches: (error: { readonly message: string; readonly code?: unknown }) => boolean;
}

const startsWith =
  (...prefixes: string[]) =>
  ({ message }: { readonly message: string }) =>
    prefixes.some((prefix) => message.startsWith(prefix));

export const NOT_RUN_KINDS: readonly NotRunKind[] = [
  {
    name: 'offline',
    why: 'ioredis refuses a command while not connected (no offline queue): nothing was written',
    matches: startsWith(
      "Stream isn't writeable and enableOfflineQueue options is false",
      "Cluster isn't ready and enableOfflineQueue options is false",
    ),
  },
  {
    name: 'connect-failed',
    why: 'the connection could not be made: nothing reached Redis',
    matches: ({ message, code }) =>
      code === 'ECONNREFUSED' ||
      code === 'ENOTFOUND' ||
      message.startsWith('connect ECONNREFUSED') ||
      message.startsWith('None of startup nodes is available') ||
      message.startsWith('Failed to refresh slots cache'),
  },
  {
    name: 'refused-by-redis',
    why: 'Redis refuses these before running a script (a failover, a slot moving, data loading)',
    matches: startsWith('CLUSTERDOWN', 'TRYAGAIN', 'LOADING', 'MASTERDOWN', 'MOVED', 'ASK '),
  },
  {
    name: 'deadline-passed',
    why: 'the hot-path script reached Redis after its deadline and counted nothing (cache.ts)',
    matches: startsWith('cache answer came after its deadline'),
  },
];

/** The fate of a command that failed with `error`. */
export function commandFateOf(error: unknown): CommandFate {
  if (error instanceof CommandNotSentError) return 'not_run';
  if (!(error instanceof Error)) return 'may_have_run';
  const described = { message: error.message, code: (error as { code?: unknown }).code };
  return NOT_RUN_KINDS.some((kind) => kind.matches(described)) ? 'not_run' : 'may_have_run';
}
