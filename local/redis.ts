/**
 * Redis for the local stack: a real redis-server on a free loopback port when one is installed (no
 * persistence, stopped with the stack), otherwise an in-memory stand-in (ioredis-mock) that the handlers
 * use through the same ioredis interface.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { accessSync, constants } from 'node:fs';
import { createServer } from 'node:net';
import { delimiter, join } from 'node:path';
import type Redis from 'ioredis';
import { LOOPBACK } from './http-server';

export type LocalRedisKind = 'redis-server' | 'in-memory' | 'external';

export interface LocalRedis {
  readonly kind: LocalRedisKind;
  readonly host: string;
  readonly port: number;
  /** Only for kind 'in-memory': a new client on the shared in-memory data set. */
  readonly createInMemoryClient?: () => Redis;
  stop(): Promise<void>;
}

const READY_TIMEOUT_MS = 10_000;
const STOP_TIMEOUT_MS = 5_000;
const START_ATTEMPTS = 3;

/** The first executable `name` on PATH, or undefined. */
export function findOnPath(name: string, path = process.env.PATH ?? ''): string | undefined {
  for (const directory of path.split(delimiter)) {
    if (directory === '') continue;
    const candidate = join(directory, name);
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // not in this directory
    }
  }
  return undefined;
}

/** A TCP port nothing listens on at the moment of asking (another process may take it before use). */
export async function freePort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve, reject) => {
    probe.once('error', reject);
    probe.listen(0, LOOPBACK, resolve);
  });
  const address = probe.address();
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  if (address === null || typeof address === 'string') throw new Error('the OS gave no free TCP port');
  return address.port;
}

/**
 * Spawns `binary` on loopback `port` with persistence off and resolves once it accepts connections. A
 * server that exits or is not ready in time is killed, and the error carries the end of its output.
 */
export function spawnRedisServer(binary: string, port: number): Promise<ChildProcess> {
  const child = spawn(
    binary,
    ['--port', String(port), '--bind', LOOPBACK, '--save', '', '--appendonly', 'no'],
    // A process group of its own: a terminal's Ctrl-C signals the whole foreground group, and redis-server
    // would shut down at once, under the flush that needs it. Its owner stops it instead.
    { stdio: ['ignore', 'pipe', 'pipe'], detached: true },
  );
  return new Promise((resolve, reject) => {
    let output = '';
    const done = (error?: Error) => {
      clearTimeout(timer);
      child.stdout?.removeListener('data', onData);
      child.removeListener('exit', onExit);
      child.removeListener('error', done);
      if (error) {
        child.kill('SIGKILL');
        reject(new Error(`${error.message}\n${output.slice(-2000)}`));
        return;
      }
      // Keep draining its output so a full pipe never blocks the server.
      child.stdout?.resume();
      child.stderr?.resume();
      resolve(child);
    };
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      if (output.includes('Ready to accept connections')) done();
    };
    const onExit = (code: number | null) => done(new Error(`redis-server exited with code ${code}`));
    const timer = setTimeout(
      () => done(new Error(`redis-server not ready after ${READY_TIMEOUT_MS} ms`)),
      READY_TIMEOUT_MS,
    );
    child.stdout?.on('data', onData);
    child.once('exit', onExit);
    child.once('error', done);
  });
}

/** Sends `signal` and waits for the exit; a process still running after STOP_TIMEOUT_MS gets SIGKILL. */
export async function terminateProcess(child: ChildProcess, signal: NodeJS.Signals): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill(signal);
  const timer = setTimeout(() => child.kill('SIGKILL'), STOP_TIMEOUT_MS);
  await exited;
  clearTimeout(timer);
}

/**
 * Spawns `binary` on loopback with persistence off, on `port` or else a free port; it is killed when this
 * process exits.
 */
export async function startRedisServer(
  binary: string,
  options: { readonly port?: number } = {},
): Promise<LocalRedis> {
  let lastError: unknown;
  // A fixed port is tried once: a retry would find it as taken as before.
  const attempts = options.port === undefined ? START_ATTEMPTS : 1;
  for (let attempt = 0; attempt < attempts; attempt++) {
    const port = options.port ?? (await freePort());
    let child: ChildProcess;
    try {
      child = await spawnRedisServer(binary, port);
    } catch (error) {
      // Another process may have taken the port between the probe and the spawn: try a new one.
      lastError = error;
      continue;
    }
    const killOnExit = () => child.kill('SIGKILL');
    process.once('exit', killOnExit);
    return {
      kind: 'redis-server',
      host: LOOPBACK,
      port,
      async stop() {
        process.removeListener('exit', killOnExit);
        await terminateProcess(child, 'SIGTERM');
      },
    };
  }
  throw lastError;
}

/** An in-memory data set: every client made by createInMemoryClient shares it, as clients of one server do. */
export async function startInMemoryRedis(): Promise<LocalRedis> {
  const { default: RedisMock } = await import('ioredis-mock');
  // ioredis-mock shares data between instances with the same host and port; a free port keeps stacks apart.
  const port = await freePort();
  const clients: Redis[] = [];
  return {
    kind: 'in-memory',
    host: LOOPBACK,
    port,
    createInMemoryClient() {
      const client = new RedisMock({ host: LOOPBACK, port }) as unknown as Redis;
      clients.push(client);
      return client;
    },
    async stop() {
      await Promise.all(clients.map((client) => client.flushall().then(() => client.disconnect())));
    },
  };
}

export type RedisChoice =
  /** redis-server from PATH when installed, else in-memory (the default). */
  | 'auto'
  | 'in-memory'
  /** An already running server the stack neither starts nor stops. */
  | { readonly host: string; readonly port: number };

/**
 * Starts the Redis the choice asks for; `warn` hears about the in-memory fallback. `searchPath` is where
 * 'auto' looks for redis-server (default PATH).
 */
export async function startLocalRedis(
  choice: RedisChoice,
  warn: (line: string) => void,
  searchPath = process.env.PATH ?? '',
): Promise<LocalRedis> {
  if (typeof choice === 'object') {
    return { kind: 'external', host: choice.host, port: choice.port, stop: async () => undefined };
  }
  const binary = choice === 'auto' ? findOnPath('redis-server', searchPath) : undefined;
  if (binary !== undefined) return startRedisServer(binary);
  if (choice === 'auto') {
    warn(
      'redis-server is not installed: using an in-memory Redis stand-in (ioredis-mock). ' +
        'Install redis-server (apt-get install redis-server, or brew install redis) to run on real Redis.',
    );
  }
  return startInMemoryRedis();
}
