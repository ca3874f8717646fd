/**
 * A Lambda's clean stop. Lambda sends SIGTERM to the runtime before it shuts an execution environment
 * down only when the function has an extension registered; without one the process is frozen and then
 * killed, and whatever it held (the reporter's leases) waits out its expiry. Lambda gives the runtime
 * 500 ms when the extension is an internal one (AWS's "Lambda execution environment lifecycle",
 * Shutdown phase, and aws-samples/graceful-shutdown-with-aws-lambda).
 *
 * `registerShutdownExtension` registers a no-op internal extension (no events) with the Extensions API,
 * as the Rust runtime's graceful-shutdown helper does. An internal extension must register before the
 * runtime's first `next`, which the Node.js runtime sends as soon as a CommonJS module is loaded: the
 * POST is therefore made synchronously at module init (a short child process, bounded), and the
 * extension's own `next`, which Lambda waits for to end the Init phase and which never answers for an
 * extension without events, is sent from this process and kept off the event loop's count.
 */
import { execFileSync } from 'node:child_process';
import { request } from 'node:http';
import { errorMessage, type LogPort } from '../core/observability/observability';

/** Lambda's grace for the runtime with an internal extension is 500 ms: the tasks get a little less. */
export const SHUTDOWN_DEADLINE_MS = 450;
/** Bound of the registration's POST (child process start included). */
export const REGISTER_TIMEOUT_MS = 2000;
const EXTENSIONS_API = '2020-01-01/extension';
export const SHUTDOWN_EXTENSION_NAME = 'apigw-access-management-shutdown';

/** The registration, in a child process so module init can wait for it; prints the identifier. */
const REGISTER_SCRIPT = `
const [api, name, timeoutMs] = process.argv.slice(1);
fetch('http://' + api + '/${EXTENSIONS_API}/register', {
  method: 'POST',
  headers: { 'Lambda-Extension-Name': name, 'Content-Type': 'application/json' },
  body: JSON.stringify({ events: [] }),
  signal: AbortSignal.timeout(Number(timeoutMs)),
}).then(async (answer) => {
  if (!answer.ok) throw new Error('register answered ' + answer.status + ': ' + (await answer.text()).slice(0, 200));
  const id = answer.headers.get('lambda-extension-identifier');
  if (!id) throw new Error('register answered without Lambda-Extension-Identifier');
  process.stdout.write(id);
}).catch((error) => { process.stderr.write(String(error && error.message || error)); process.exit(1); });
`;

/**
 * Registers the no-op extension so that SIGTERM comes before a shutdown; returns its identifier, or
 * undefined outside Lambda or when the registration failed (logged: the function still runs, without
 * a clean stop).
 */
export function registerShutdownExtension(
  logger: LogPort,
  env: Readonly<Record<string, string | undefined>> = process.env,
): string | undefined {
  const api = env.AWS_LAMBDA_RUNTIME_API;
  if (!api) return undefined;
  try {
    const identifier = execFileSync(
      process.execPath,
      ['-e', REGISTER_SCRIPT, api, SHUTDOWN_EXTENSION_NAME, String(REGISTER_TIMEOUT_MS - 500)],
      { encoding: 'utf8', timeout: REGISTER_TIMEOUT_MS, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    awaitNoEvent(api, identifier, logger);
    return identifier;
  } catch (error) {
    logger.warn('shutdown extension not registered: no SIGTERM before a shutdown', {
      error: errorMessage(error),
    });
    return undefined;
  }
}

/**
 * The extension's `next`: it tells Lambda the extension is ready, and stays open (an extension without
 * events is never sent one). Its socket is unreferenced so it holds nothing of the process; no timeout,
 * for answering it is Lambda's, not ours, and a closed one would end the extension.
 */
function awaitNoEvent(api: string, identifier: string, logger: LogPort): void {
  const next = request(`http://${api}/${EXTENSIONS_API}/event/next`, {
    headers: { 'Lambda-Extension-Identifier': identifier },
  });
  next.on('socket', (socket) => socket.unref());
  next.on('response', (answer) => answer.resume());
  next.on('error', (error) => {
    logger.warn('shutdown extension next failed', { error: errorMessage(error) });
  });
  next.end();
}

/**
 * What a clean stop runs, in the order added: the reporter's leases (added at module init) before the
 * metrics flush (added when the runtime is built), so the flush carries what the release counted.
 */
/** What a task the deadline cut off resolves to: no task can return it. */
const DEADLINE_PASSED = Symbol('shutdown deadline passed');

export class ShutdownTasks {
  private readonly tasks: Array<() => unknown> = [];

  add(task: () => unknown): void {
    this.tasks.push(task);
  }

  /** Runs every task, each within what is left of `deadlineMs`; a failed or late task is logged and skipped. */
  async run(logger: LogPort, deadlineMs = SHUTDOWN_DEADLINE_MS): Promise<void> {
    const deadline = Date.now() + deadlineMs;
    for (const task of this.tasks) {
      const left = deadline - Date.now();
      if (left <= 0) {
        logger.warn('shutdown deadline passed: tasks left undone');
        return;
      }
      let timer: NodeJS.Timeout | undefined;
      const late = new Promise<typeof DEADLINE_PASSED>((resolve) => {
        timer = setTimeout(() => resolve(DEADLINE_PASSED), left);
      });
      try {
        const outcome = await Promise.race([Promise.resolve().then(task), late]);
        // The task took what was left: the next one has nothing, whatever the wall clock reads now (a
        // timer of the loop's monotonic clock can fire while Date.now is a millisecond short of the deadline).
        if (outcome === DEADLINE_PASSED) {
          logger.warn('shutdown task failed', { error: `shutdown task not done within ${left} ms` });
          logger.warn('shutdown deadline passed: tasks left undone');
          return;
        }
      } catch (error) {
        logger.warn('shutdown task failed', { error: errorMessage(error) });
      } finally {
        clearTimeout(timer);
      }
    }
    logger.info('clean stop: shutdown tasks done', { tasks: this.tasks.length });
  }
}

/** The process's tasks: runtime.ts adds the metrics flush, the reporter its leases. */
export const processShutdown = new ShutdownTasks();

let listening = false;

/**
 * In Lambda only (elsewhere a SIGTERM listener would replace Node's own exit): SIGTERM runs the tasks
 * and exits. Idempotent.
 */
export function exitCleanlyOnSigterm(
  logger: LogPort,
  env: Readonly<Record<string, string | undefined>> = process.env,
): void {
  if (listening || !env.AWS_LAMBDA_FUNCTION_NAME) return;
  listening = true;
  process.once('SIGTERM', () => {
    void processShutdown.run(logger).finally(() => process.exit(0));
  });
}
