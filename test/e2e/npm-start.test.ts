/**
 * `npm start` as a user runs it: a child process (tsx local/start.ts, which is what the npm script runs),
 * its ready line, a curl-like call with a demo key, and Ctrl-C (SIGINT) that flushes usage and exits 0.
 */
import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { createServer, request as httpRequest } from 'node:http';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { closeServer, listenOnLoopback } from '../../local/http-server';
import { type RunningPlatform, startPlatform } from '../../local/platform';
import { READY_PREFIX } from '../../local/start';
import { announcement, exitOf } from '../support/child-process';
import { call, HOURLY_LIMIT, PLATFORM_SECTION, PROVIDER_KEY, USER_GATEWAY, USER_SERVICE } from './fixtures';

const ROOT = join(__dirname, '..', '..');
const TSX = join(ROOT, 'node_modules', '.bin', 'tsx');
const START_TIMEOUT_MS = 30_000;

interface Started {
  readonly child: ChildProcessWithoutNullStreams;
  readonly url: string;
  output(): string;
}

const children: ChildProcessWithoutNullStreams[] = [];

/**
 * A test that failed half-way leaves a stack running: stop its whole process group (tsx, node and so
 * redis-server through the stack's own shutdown) with SIGTERM, then SIGKILL what is left.
 */
afterEach(async () => {
  for (const child of children.splice(0)) {
    if (child.exitCode !== null || child.signalCode !== null) continue;
    const group = -(child.pid as number);
    process.kill(group, 'SIGTERM');
    await Promise.race([
      exitOf(child).catch(() => null),
      new Promise((resolve) => setTimeout(resolve, 10_000)),
    ]);
    try {
      process.kill(group, 'SIGKILL');
    } catch {
      // The group is gone already.
    }
  }
});

/**
 * The CLI always leads its own process group, as a shell's foreground job does, so a test can signal
 * the group as a terminal would and clean-up reaches every process of it. `bare` runs it in node with
 * tsx as a loader, with no tsx CLI in front relaying (or not relaying) signals.
 */
async function startCli(args: readonly string[], options: { bare?: boolean } = {}): Promise<Started> {
  const [command, prefix] = options.bare ? [process.execPath, ['--import', 'tsx']] : [TSX, []];
  const child = spawn(command, [...prefix, 'local/start.ts', ...args], {
    cwd: ROOT,
    env: { ...process.env, FORCE_COLOR: '0' },
    detached: true,
  });
  children.push(child);
  const ready = new RegExp(`^${READY_PREFIX}.*?(http://127\\.0\\.0\\.1:\\d+)`, 'm');
  const { match, output } = await announcement(child, ready, START_TIMEOUT_MS, 'its ready line');
  return { child, url: match[1] as string, output };
}

/**
 * Six calls with a roomy key, then `stop`: the first call was reported by its authrep, the others wait
 * in Redis for the window until the stop flushes them; the CLI exits 0.
 */
async function callThenStop(started: Started, platform: RunningPlatform, stop: () => void): Promise<void> {
  const calls = 6;
  for (let i = 0; i < calls; i++) {
    expect((await call(`${started.url}/v1/words/w.json`, { headers: { apikey: 'key-roomy' } })).status).toBe(
      200,
    );
  }
  expect(platform.usage(USER_SERVICE, 'app-roomy', 'hits', 'hour')).toBe(1);
  stop();
  expect(await exitOf(started.child), started.output()).toBe(0);
  expect(platform.usage(USER_SERVICE, 'app-roomy', 'hits', 'hour')).toBe(calls);
}

/** Whether something listens on the loopback port. */
function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host: '127.0.0.1', port });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

interface DelayingProxy {
  readonly url: string;
  /** From now on every request waits this long before it is forwarded. */
  delay(ms: number): void;
  stop(): Promise<void>;
}

/** Forwards every request to `target`, after the delay last set, on a loopback port of its own. */
async function delayingProxy(target: string): Promise<DelayingProxy> {
  let delayMs = 0;
  const server = createServer((request, response) => {
    setTimeout(() => {
      const upstream = httpRequest(
        new URL(request.url ?? '/', target),
        { method: request.method, headers: request.headers, timeout: 10_000 },
        (answer) => {
          response.writeHead(answer.statusCode ?? 502, answer.headers);
          answer.pipe(response);
        },
      );
      upstream.on('timeout', () => upstream.destroy(new Error('upstream timed out')));
      upstream.on('error', () => response.destroy());
      request.pipe(upstream);
    }, delayMs);
  });
  const port = await listenOnLoopback(server, 0);
  return {
    url: `http://127.0.0.1:${port}`,
    delay: (ms) => {
      delayMs = ms;
    },
    stop: () => closeServer(server),
  };
}

/**
 * A stack file whose API uses a platform the test owns. A long window: without the flush on a stop
 * signal no cached call would reach the platform before exit.
 */
function stackFileUsing(platformUrl: string, extra: Record<string, unknown> = {}): string {
  const file = join(mkdtempSync(join(tmpdir(), 'npm-start-')), 'stack.json');
  writeFileSync(
    file,
    JSON.stringify({
      gateway: { ...USER_GATEWAY, platformUrl, providerKey: PROVIDER_KEY, reportWindowSeconds: 600 },
      ...extra,
    }),
  );
  return file;
}

describe('npm start (local/start.ts) as a child process', () => {
  it('serves the demo file on the given port, prints keys and curl commands, and stops on Ctrl-C', async () => {
    const started = await startCli(['--port', '0']);
    const banner = started.output();
    expect(banner).toContain("curl -i -H 'apikey: demo-key-1'");
    expect(banner).toMatch(
      /Express app behind the plugin, service 2555417735060 .* at http:\/\/127\.0\.0\.1:\d+/,
    );
    expect(banner).toContain("-H 'app_id: demo-app-1' -H 'app_key: demo-app-key-1'");
    expect(banner).not.toContain('pk-demo');

    const demo = await call(`${started.url}/v1/words/hello.json`, { headers: { apikey: 'demo-key-1' } });
    expect(demo.status).toBe(200);
    expect(demo.body).toMatchObject({ path: '/v1/words/hello.json', authorizer: { plan: 'Basic' } });
    const appId = await call(`${started.url}/appid/v1/words/hello.json`, {
      headers: { app_id: 'demo-app-1', app_key: 'demo-app-key-1' },
    });
    expect(appId.status).toBe(200);

    started.child.kill('SIGINT');
    expect(await exitOf(started.child)).toBe(0);
    expect(started.output()).toContain('Stopped: pending usage flushed.');
    expect(started.output()).toContain('GET /v1/words/hello.json 200');
    // On the Lambda runtime's Node.js major the AWS SDK has nothing to warn about.
    expect(started.output()).not.toContain('NodeVersionSupportWarning');
  });

  it.each([
    ['SIGINT', 'Ctrl-C'],
    ['SIGHUP', 'a closed terminal'],
  ] as const)(
    'flushes pending usage to the platform on %s (%s; a platform the test owns, via platformUrl)',
    async (signal, _sentBy) => {
      let platform: RunningPlatform | undefined;
      try {
        platform = await startPlatform({ config: { services: PLATFORM_SECTION.services.slice(0, 1) } });
        const file = stackFileUsing(platform.url);
        // The tsx CLI relays SIGINT and SIGTERM to the stack but dies of SIGHUP itself.
        const started = await startCli(['--config', file, '--port', '0'], { bare: signal === 'SIGHUP' });
        await callThenStop(started, platform, () => started.child.kill(signal));
      } finally {
        await platform?.stop();
      }
    },
  );

  it('runs an Express app behind the plugin on one budget with the gateway: the hard limit holds across both, every allowed call reported once', async () => {
    let platform: RunningPlatform | undefined;
    try {
      platform = await startPlatform({ config: { services: PLATFORM_SECTION.services.slice(0, 1) } });
      const file = stackFileUsing(platform.url);
      const started = await startCli(['--config', file, '--port', '0']);
      const appUrl = /Express app behind the plugin, .* at (http:\/\/127\.0\.0\.1:\d+)/.exec(
        started.output(),
      )?.[1];
      expect(appUrl, started.output()).toBeDefined();
      const headers = { apikey: 'key-limited' };
      const path = '/v1/words/w.json';
      // HOURLY_LIMIT calls split across the two paths, then one more on each: refused on both.
      const statuses: number[] = [];
      for (let i = 0; i < HOURLY_LIMIT; i++) {
        statuses.push((await call(`${i % 2 === 0 ? started.url : appUrl}${path}`, { headers })).status);
      }
      expect(statuses).toEqual(Array(HOURLY_LIMIT).fill(200));
      const overApp = await call(`${appUrl}${path}`, { headers });
      expect(overApp).toMatchObject({ status: 429, body: { reason: 'limits_exceeded' } });
      expect((await call(`${started.url}${path}`, { headers })).status).toBe(403);
      started.child.kill('SIGINT');
      expect(await exitOf(started.child), started.output()).toBe(0);
      expect(platform.usage(USER_SERVICE, 'app-limited', 'hits', 'hour')).toBe(HOURLY_LIMIT);
    } finally {
      await platform?.stop();
    }
  });

  it('flushes on a terminal Ctrl-C, which signals the whole process group (redis-server too)', async () => {
    let platform: RunningPlatform | undefined;
    let slowPlatform: DelayingProxy | undefined;
    let started: Started | undefined;
    try {
      platform = await startPlatform({ config: { services: PLATFORM_SECTION.services.slice(0, 1) } });
      slowPlatform = await delayingProxy(platform.url);
      const file = stackFileUsing(slowPlatform.url, { local: { redis: 'auto' } });
      started = await startCli(['--config', file, '--port', '0']);
      expect(started.output()).toContain('(redis-server)');
      const calls = 4;
      for (let i = 0; i < calls; i++) {
        expect(
          (await call(`${started.url}/v1/words/w.json`, { headers: { apikey: 'key-roomy' } })).status,
        ).toBe(200);
      }
      // A platform as slow as a distant one (within the client timeout): the flush outlasts redis-server's
      // own SIGINT shutdown.
      slowPlatform.delay(800);
      process.kill(-(started.child.pid as number), 'SIGINT');
      expect(await exitOf(started.child), started.output()).toBe(0);
      expect(platform.usage(USER_SERVICE, 'app-roomy', 'hits', 'hour')).toBe(calls);
    } finally {
      if (started?.child.exitCode === null) process.kill(-(started.child.pid as number), 'SIGKILL');
      await slowPlatform?.stop();
      await platform?.stop();
    }
  });

  it('runs on a local three-primary Redis cluster with --redis-cluster, flushes on Ctrl-C and stops the cluster', async () => {
    let platform: RunningPlatform | undefined;
    try {
      platform = await startPlatform({ config: { services: PLATFORM_SECTION.services.slice(0, 1) } });
      const file = stackFileUsing(platform.url);
      const started = await startCli(['--config', file, '--port', '0', '--redis-cluster']);
      const line = started.output().match(/Redis cluster \(redis-server, cluster mode\) on (.*)/)?.[1];
      const nodes = (line ?? '').split(', ').map((node) => Number(node.split(':')[1]));
      expect(nodes, started.output()).toHaveLength(3);
      await callThenStop(started, platform, () => process.kill(-(started.child.pid as number), 'SIGINT'));
      for (const port of nodes) expect(await accepts(port)).toBe(false);
    } finally {
      await platform?.stop();
    }
  });

  it('exits 1 with a message naming the setting for a bad stack file', async () => {
    const file = join(mkdtempSync(join(tmpdir(), 'npm-start-')), 'bad.json');
    writeFileSync(
      file,
      JSON.stringify({ platform: PLATFORM_SECTION, gateway: { ...USER_GATEWAY, failureMode: 'sometimes' } }),
    );
    const child = spawn(TSX, ['local/start.ts', '--config', file, '--port', '0'], { cwd: ROOT });
    children.push(child);
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    expect(await exitOf(child)).toBe(1);
    expect(stderr).toContain(
      'error: Invalid configuration: gateway.failureMode must be one of strict, resilient, allow',
    );
  });
});
