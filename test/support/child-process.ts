/** Waiting on a child process the tests start: for a line of its output, and for its exit. */
import type { ChildProcessWithoutNullStreams } from 'node:child_process';

export interface Announced {
  /** The first match of the pattern on the child's stdout. */
  readonly match: RegExpExecArray;
  /** Everything the child wrote so far, stdout and stderr, for an assertion's message. */
  output(): string;
}

/**
 * Collects the child's output and resolves with the first match of `pattern` on its stdout; rejects with
 * the output when it exits first or `timeoutMs` passes (`waitingFor` names what was awaited).
 */
export function announcement(
  child: ChildProcessWithoutNullStreams,
  pattern: RegExp,
  timeoutMs: number,
  waitingFor: string,
): Promise<Announced> {
  let output = '';
  let stdout = '';
  child.stderr.on('data', (chunk: Buffer) => {
    output += chunk.toString();
  });
  return new Promise((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`no ${waitingFor} within ${timeoutMs} ms:\n${output}`)),
      timeoutMs,
    );
    child.stdout.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      stdout += chunk.toString();
      const match = pattern.exec(stdout);
      if (match) {
        clearTimeout(timer);
        resolve({ match, output: () => output });
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`exited with ${code} before ${waitingFor}:\n${output}`));
    });
  });
}

/** The child's exit code (null when a signal ended it); rejects when it has not exited within `timeoutMs`. */
export function exitOf(child: ChildProcessWithoutNullStreams, timeoutMs = 30_000): Promise<number | null> {
  if (child.exitCode !== null) return Promise.resolve(child.exitCode);
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`did not exit within ${timeoutMs} ms`)), timeoutMs);
    child.once('exit', (code) => {
      clearTimeout(timer);
      resolve(code);
    });
  });
}
