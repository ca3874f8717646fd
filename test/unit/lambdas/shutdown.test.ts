import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { LogPort } from '../../../core/observability/observability';
import { ENV, LOCAL_SECRET_ENV } from '../../../core/settings/config';
import { registerShutdownExtension, SHUTDOWN_EXTENSION_NAME, ShutdownTasks } from '../../../lambdas/shutdown';
import { announcement, exitOf } from '../../support/child-process';
import { startRedisTopology, type TestRedis } from '../../support/redis-topology';

const FIXTURE = join(__dirname, 'fixtures', 'reporter-lambda.ts');
const IDENTIFIER = 'b6f1c9a2-0000-4000-8000-000000000001';

interface SeenRequest {
  readonly method: string;
  readonly path: string;
  readonly headers: IncomingMessage['headers'];
  readonly body: string;
}

/**
 * The Extensions API of a Lambda execution environment, as far as an extension without events uses it:
 * register answers its identifier; `event/next` is held open (no event ever comes).
 */
async function startExtensionsApi(): Promise<{ server: Server; address: string; seen: SeenRequest[] }> {
  const seen: SeenRequest[] = [];
  const server = createServer((request, response) => {
    let body = '';
    request.on('data', (chunk: Buffer) => {
      body += chunk.toString();
    });
    request.on('end', () => {
      seen.push({ method: request.method ?? '', path: request.url ?? '', headers: request.headers, body });
      if (request.url === '/2020-01-01/extension/register') {
        response.writeHead(200, {
          'Lambda-Extension-Identifier': IDENTIFIER,
          'Content-Type': 'application/json',
        });
        response.end('{"functionName":"reporter","functionVersion":"$LATEST","handler":"index.handler"}');
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return { server, address: `127.0.0.1:${port}`, seen };
}

const lines: Array<{ level: string; message: string }> = [];
const logger: LogPort = {
  debug: (message) => lines.push({ level: 'debug', message }),
  info: (message) => lines.push({ level: 'info', message }),
  warn: (message) => lines.push({ level: 'warn', message }),
  error: (message) => lines.push({ level: 'error', message }),
};

let api: Awaited<ReturnType<typeof startExtensionsApi>> | undefined;
let redis: TestRedis | undefined;
let child: ChildProcessWithoutNullStreams | undefined;

afterEach(async () => {
  if (child && child.exitCode === null) child.kill('SIGKILL');
  child = undefined;
  api?.server.closeAllConnections();
  await new Promise((resolve) => api?.server.close(resolve) ?? resolve(undefined));
  api = undefined;
  await redis?.stop();
  redis = undefined;
  lines.length = 0;
});

describe('the reporter Lambda, stopped by Lambda', () => {
  it('registers a no-op extension at module init, so SIGTERM comes, runs its shutdown tasks and exits 0', async () => {
    api = await startExtensionsApi();
    redis = await startRedisTopology('redis-server');
    child = spawn(process.execPath, ['--import', 'tsx', FIXTURE], {
      env: {
        PATH: process.env.PATH ?? '',
        AWS_LAMBDA_RUNTIME_API: api.address,
        AWS_LAMBDA_FUNCTION_NAME: 'reporter',
        [ENV.serviceId]: '2555417735060',
        [ENV.redisHost]: redis.settings.host,
        [ENV.redisPort]: String(redis.settings.port),
        [LOCAL_SECRET_ENV.providerKey]: 'pk-local',
        POWERTOOLS_METRICS_DISABLED: 'true',
      },
    });
    const invoked = await announcement(child, /invoked: /, 30_000, 'the first invocation');
    // The extension's next is sent from the process itself once registered, beside the invocation.
    const seen = api.seen;
    await vi.waitFor(() => expect(seen).toHaveLength(2), { timeout: 5000 });
    const [register, next] = seen;
    expect(register).toMatchObject({
      method: 'POST',
      path: '/2020-01-01/extension/register',
      headers: expect.objectContaining({ 'lambda-extension-name': SHUTDOWN_EXTENSION_NAME }),
    });
    expect(JSON.parse(register?.body ?? '')).toEqual({ events: [] });
    expect(next).toMatchObject({
      method: 'GET',
      path: '/2020-01-01/extension/event/next',
      headers: expect.objectContaining({ 'lambda-extension-identifier': IDENTIFIER }),
    });
    const closed = new Promise((resolve) => child?.once('close', resolve));
    child.kill('SIGTERM');
    expect(await exitOf(child, 10_000)).toBe(0);
    await closed;
    expect(invoked.output()).toContain('clean stop: shutdown tasks done');
  });

  it('outside Lambda (no runtime API) registers nothing', () => {
    expect(registerShutdownExtension(logger, {})).toBeUndefined();
    expect(lines).toEqual([]);
  });

  it('an Extensions API that does not answer the registration in time leaves the function running, said in its log', async () => {
    const silent = createServer(() => undefined);
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = silent.address() as AddressInfo;
      expect(
        registerShutdownExtension(logger, { AWS_LAMBDA_RUNTIME_API: `127.0.0.1:${port}` }),
      ).toBeUndefined();
      expect(lines).toEqual([
        { level: 'warn', message: 'shutdown extension not registered: no SIGTERM before a shutdown' },
      ]);
    } finally {
      silent.closeAllConnections();
      await new Promise((resolve) => silent.close(resolve));
    }
  });
});

describe('ShutdownTasks', () => {
  it('runs the tasks in the order added, each within what is left of the deadline', async () => {
    const tasks = new ShutdownTasks();
    const ran: string[] = [];
    tasks.add(() => ran.push('leases'));
    tasks.add(() => new Promise(() => undefined));
    tasks.add(() => ran.push('metrics'));
    await tasks.run(logger, 50);
    expect(ran).toEqual(['leases']);
    expect(lines.map((line) => line.message)).toEqual([
      'shutdown task failed',
      'shutdown deadline passed: tasks left undone',
    ]);
  });

  it('runs nothing after a task the deadline cut off, even when the wall clock reads it a millisecond early', async () => {
    vi.useFakeTimers();
    try {
      // The deadline is read at 1,000 (so 1,050); every later reading is 1,049, as Date.now can be when a
      // timer of the loop's monotonic clock fires.
      vi.spyOn(Date, 'now').mockReturnValueOnce(1_000).mockReturnValue(1_049);
      const tasks = new ShutdownTasks();
      const ran: string[] = [];
      tasks.add(() => new Promise(() => undefined));
      tasks.add(() => ran.push('metrics'));
      const running = tasks.run(logger, 50);
      await vi.advanceTimersByTimeAsync(50);
      await running;
      expect(ran).toEqual([]);
      expect(lines.map((line) => line.message)).toEqual([
        'shutdown task failed',
        'shutdown deadline passed: tasks left undone',
      ]);
    } finally {
      vi.useRealTimers();
      vi.restoreAllMocks();
    }
  });
});
