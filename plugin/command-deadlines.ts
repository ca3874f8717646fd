/**
 * The command deadline of the plugin's Redis connection, kept with one timer for the connection instead of
 * ioredis's one timer per command. ioredis's `commandTimeout` starts a timer for every command and clears
 * it on the reply; on a serial stream of calls that timer is the only one of its duration, so Node makes
 * and drops a timer list (and re-arms libuv's timer) on every call: about 30 µs of a serial call's p50
 * and of the process's CPU per call, measured on the app-serial design (docs/performance.md).
 *
 * Here every command sent gets its deadline in a queue, in the order sent, and one timer waits for the
 * earliest. A command not answered by its deadline is rejected with ioredis's own error, so what reads
 * its fate (core/budget/command-fate.ts) reads it as before; the connection's options keep their
 * `commandTimeout`, which the cache reads for its hot-path deadline (core/budget/cache.ts).
 */
import type { Command } from 'ioredis';
import type { RedisConnection } from '../core/budget/redis-client';

/** ioredis's error for a command its timeout gave up on (Command.setTimeout). */
export const COMMAND_TIMED_OUT = 'Command timed out';

interface Watched {
  readonly command: Command;
  /** performance.now() by which it must have been answered. */
  readonly deadline: number;
}

/**
 * ioredis starts a command's own timer only when the command has none yet (Command.setTimeout): a command
 * marked here as having one is left to this queue. Should a later ioredis name its timer otherwise, it
 * starts its own as well, and the command has two deadlines of the same length.
 */
const OWN_TIMER = '_commandTimeoutTimer';
/** Not a timer: clearTimeout ignores it when ioredis clears the command's timers on its reply. */
const TIMER_HELD_HERE = Object.freeze({ heldBy: 'plugin command deadlines' });

class CommandDeadlines {
  private readonly watched: Watched[] = [];
  private first = 0;
  private timer: NodeJS.Timeout | undefined;

  constructor(private readonly timeoutMs: number) {}

  /** Gives the command its deadline; ioredis then starts no timer for it. */
  watch(command: Command): void {
    (command as unknown as Record<string, unknown>)[OWN_TIMER] ??= TIMER_HELD_HERE;
    this.dropAnswered();
    this.watched.push({ command, deadline: performance.now() + this.timeoutMs });
    if (this.timer === undefined) this.wake(this.timeoutMs);
  }

  private readonly expire = (): void => {
    this.timer = undefined;
    const now = performance.now();
    for (; this.first < this.watched.length; this.first++) {
      const { command, deadline } = this.watched[this.first] as Watched;
      if (command.isResolved) continue;
      if (deadline > now) break;
      // As ioredis's own timer does: a command rejected already (its connection closed) stays rejected.
      command.reject(new Error(COMMAND_TIMED_OUT));
    }
    this.dropAnswered();
    const next = this.watched[this.first];
    if (next !== undefined) this.wake(next.deadline - now);
  };

  /** Drops the answered commands at the head (replies come in the order sent, per node). */
  private dropAnswered(): void {
    while (this.first < this.watched.length && (this.watched[this.first] as Watched).command.isResolved) {
      this.first++;
    }
    if (this.first === this.watched.length) {
      this.watched.length = 0;
      this.first = 0;
    } else if (this.first > 1024 && this.first * 2 > this.watched.length) {
      this.watched.splice(0, this.first);
      this.first = 0;
    }
  }

  private wake(inMs: number): void {
    // Unref'd: the connection's socket keeps the process alive while a command waits on it.
    this.timer = setTimeout(this.expire, Math.max(inMs, 0)).unref();
  }
}

/** Every command the connection sends gets its deadline from one queue; returns the connection. */
export function withCommandDeadlines<C extends RedisConnection>(connection: C, timeoutMs: number): C {
  const deadlines = new CommandDeadlines(timeoutMs);
  const send = connection.sendCommand.bind(connection) as (command: Command, ...rest: unknown[]) => unknown;
  (connection as { sendCommand: unknown }).sendCommand = (command: Command, ...rest: unknown[]) => {
    deadlines.watch(command);
    return send(command, ...rest);
  };
  return connection;
}
