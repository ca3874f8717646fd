/**
 * CloudWatch Logs bytes per authorization (issue 34): what the authorizer writes to its log on the hot
 * key, as configured now and as before, on the same calls.
 *
 * - What the function writes is measured: its real Powertools logger and metrics, their output counted
 *   byte for byte (and kept off the console) while the calls run, and the counts an instance still holds
 *   at the end written as at its shutdown, so they count too.
 * - What Lambda itself writes is not run here: its lines per invocation are the documented text format's
 *   `START`, `END` and `REPORT` (system log level INFO, the default), or none at system level WARN. Their
 *   bytes are those of the lines below, with a request id of the real length.
 */
import { createLogger, createMetrics, type PowertoolsMetrics } from '../adapters/powertools/observability';

/** A request id as Lambda writes it (a UUID: 36 characters). */
const REQUEST_ID = '8f507cfc-1c2b-4697-b07a-ac58fc914c95';

/** Lambda's own lines of one invocation in the text format at system level INFO (the Lambda developer guide's). */
export const TEXT_FORMAT_PLATFORM_LINES = [
  `START RequestId: ${REQUEST_ID} Version: $LATEST\n`,
  `END RequestId: ${REQUEST_ID}\n`,
  `REPORT RequestId: ${REQUEST_ID}\tDuration: 1.52 ms\tBilled Duration: 2 ms\tMemory Size: 256 MB\tMax Memory Used: 86 MB\t\n`,
] as const;

export const TEXT_FORMAT_PLATFORM_BYTES = TEXT_FORMAT_PLATFORM_LINES.reduce(
  (sum, line) => sum + Buffer.byteLength(line),
  0,
);

/** How the function logs: the counts' flush interval (0: every invocation) and Lambda's own lines. */
export interface LoggingSetup {
  readonly metricsFlushMs: number;
  readonly platformBytesPerInvocation: number;
}

export const LOGGING_BEFORE: LoggingSetup = {
  metricsFlushMs: 0,
  platformBytesPerInvocation: TEXT_FORMAT_PLATFORM_BYTES,
};

/** JSON at system level WARN: Lambda writes no line of its own; the counts every 60 s (the default). */
export const LOGGING_NOW: LoggingSetup = { metricsFlushMs: 60_000, platformBytesPerInvocation: 0 };

export interface LogBytes {
  readonly calls: number;
  /** Written by the function (its logger and EMF lines), the shutdown's write included. */
  readonly functionBytes: number;
  /** Lambda's own lines for those invocations. */
  readonly platformBytes: number;
  readonly perAuthorization: number;
}

/** An authorizer on the hot key with the given logger and metrics: `call(i)` authorizes its i-th call. */
export type HotAuthorizer = (ports: {
  readonly logger: ReturnType<typeof createLogger>;
  readonly metrics: PowertoolsMetrics;
}) => (i: number) => Promise<unknown>;

/** Bytes written to stdout and stderr while `run` runs, kept off the console. */
async function bytesWrittenBy(run: () => Promise<void>): Promise<number> {
  let bytes = 0;
  const count =
    (stream: NodeJS.WriteStream) =>
    (chunk: string | Uint8Array, ...rest: unknown[]): boolean => {
      bytes += typeof chunk === 'string' ? Buffer.byteLength(chunk) : chunk.byteLength;
      const callback = rest.find((arg) => typeof arg === 'function') as (() => void) | undefined;
      callback?.();
      return stream === process.stdout || stream === process.stderr;
    };
  const { stdout, stderr } = process;
  const writes = { stdout: stdout.write, stderr: stderr.write };
  stdout.write = count(stdout) as typeof stdout.write;
  stderr.write = count(stderr) as typeof stderr.write;
  try {
    await run();
  } finally {
    stdout.write = writes.stdout;
    stderr.write = writes.stderr;
  }
  return bytes;
}

/** The log bytes of `calls` hot authorizations, one at a time, logged as `setup` says. */
export async function measureLogBytes(
  authorizer: HotAuthorizer,
  setup: LoggingSetup,
  calls: number,
  serviceName: string,
): Promise<LogBytes> {
  const functionBytes = await bytesWrittenBy(async () => {
    const metrics = createMetrics(serviceName, { flushIntervalMs: setup.metricsFlushMs });
    const call = authorizer({ logger: createLogger(serviceName), metrics });
    for (let i = 0; i < calls; i++) await call(i);
    metrics.flush();
  });
  const platformBytes = setup.platformBytesPerInvocation * calls;
  return { calls, functionBytes, platformBytes, perAuthorization: (functionBytes + platformBytes) / calls };
}
