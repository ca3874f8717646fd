/**
 * The plugin as an application installs it: `npm pack` of the workspace package (which builds it), then a
 * fresh app per framework (Express 5 as CommonJS, Fastify 5 and Hono 4 on @hono/node-server as ES
 * modules), each with the tarball and its framework installed from the npm cache, type-checked against the
 * package's declarations alone (skipLibCheck off), compiled, started as a process of its own and called
 * over HTTP on a real redis-server and the local platform this test starts. One Redis, one platform and
 * one compiler (this repository's) serve every app; the apps install and compile at the same time.
 */
import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunningPlatform, startPlatform } from '../../local/platform';
import { findOnPath, type LocalRedis, startRedisServer } from '../../local/redis';
import { announcement, exitOf } from '../support/child-process';
import { developedWith, installInto, pack, ROOT, run } from './npm';

const MANIFEST = JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as {
  devDependencies: Record<string, string>;
};
const PLUGIN = JSON.parse(readFileSync(path.join(ROOT, 'packages', 'plugin', 'package.json'), 'utf8')) as {
  name: string;
};
const MINUTES = 60_000;
const SERVICE_ID = '2555417735099';
const PROVIDER_KEY = 'pk-plugin-consumer';
const HOURLY_LIMIT = 3;
const START_TIMEOUT_MS = 30_000;

/** The settings every app gives (its own key of the service): the README's three lines, plus the platform. */
const SETTINGS = `{
  serviceId: '${SERVICE_ID}',
  platformUrl: process.env.PLATFORM_URL ?? '',
  redis: process.env.REDIS_URL ?? '',
  mappingRules: [{ method: 'GET', pattern: '/v1/words/{word}.json', metric: 'get_word', delta: 1 }],
}`;

/** How an app stops: its server closed, then every pending call reported (close()), then exit 0. */
interface Framework {
  readonly name: string;
  readonly module: 'commonjs' | 'module';
  /** npm specs besides the tarball and @types/node, at the versions this repository develops with. */
  readonly packages: readonly string[];
  /** The app's tsconfig lib; default ES2022 alone. */
  readonly lib?: readonly string[];
  readonly server: string;
}

const FRAMEWORKS: readonly Framework[] = [
  {
    name: 'express',
    module: 'commonjs',
    packages: [`express@${developedWith('express')}`, `@types/express@${developedWith('@types/express')}`],
    server: `import type { AddressInfo } from 'node:net';
import express from 'express';
import { createAccessControl } from '${PLUGIN.name}';

const access = createAccessControl(${SETTINGS});
const app = express();
app.use(access.express());
// The package declares req.access on Express's Request.
app.get('/v1/words/:word', (request, response) => {
  response.json({ word: request.params.word, plan: request.access?.plan });
});
const server = app.listen(0, '127.0.0.1', () => {
  console.log(\`listening \${(server.address() as AddressInfo).port}\`);
});
process.once('SIGTERM', () => {
  server.close();
  void access.close().then(() => process.exit(0));
});
`,
  },
  {
    name: 'fastify',
    module: 'module',
    packages: [`fastify@${developedWith('fastify')}`],
    server: `import type { AddressInfo } from 'node:net';
import Fastify, { type FastifyRequest } from 'fastify';
import { type AccessGrant, createAccessControl } from '${PLUGIN.name}';

const access = createAccessControl(${SETTINGS});
const app = Fastify();
await app.register(access.fastify);
app.get<{ Params: { word: string } }>('/v1/words/:word', async (request) => {
  const { access: grant } = request as FastifyRequest & { access?: AccessGrant | null };
  return { word: request.params.word, plan: grant?.plan };
});
await app.listen({ port: 0, host: '127.0.0.1' });
console.log(\`listening \${(app.server.address() as AddressInfo).port}\`);
// The plugin's close is on Fastify's onClose hook: closing the app reports every pending call.
process.once('SIGTERM', () => void app.close().then(() => process.exit(0)));
`,
  },
  {
    name: 'hono',
    module: 'module',
    packages: [`hono@${developedWith('hono')}`, `@hono/node-server@${developedWith('@hono/node-server')}`],
    // @hono/node-server's own declarations name the DOM's fetch types (RequestInfo).
    lib: ['es2022', 'dom'],
    server: `import { serve } from '@hono/node-server';
import { Hono } from 'hono';
import { type AccessVariables, createAccessControl } from '${PLUGIN.name}';

const access = createAccessControl(${SETTINGS});
const app = new Hono<{ Variables: AccessVariables }>();
app.use(access.hono());
app.get('/v1/words/:word', (context) =>
  context.json({ word: context.req.param('word'), plan: context.get('access').plan }),
);
const server = serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' }, (info) => {
  console.log(\`listening \${info.port}\`);
});
process.once('SIGTERM', () => {
  server.close();
  void access.close().then(() => process.exit(0));
});
`,
  },
];

const keyOf = (framework: Framework) => `key-${framework.name}`;
const appOf = (framework: Framework) => `app-${framework.name}`;

function platformConfig() {
  return {
    services: [
      {
        id: SERVICE_ID,
        providerKey: PROVIDER_KEY,
        authentication: 'user_key',
        metrics: [{ name: 'hits', children: [{ name: 'get_word' }] }],
        plans: [{ name: 'Basic', limits: [{ metric: 'hits', period: 'hour', value: HOURLY_LIMIT }] }],
        applications: FRAMEWORKS.map((framework) => ({
          id: appOf(framework),
          userKey: keyOf(framework),
          plan: 'Basic',
        })),
      },
    ],
  };
}

/** A new app of the framework: its package.json, a strict NodeNext tsconfig that checks every declaration. */
function createApp(directory: string, framework: Framework): void {
  mkdirSync(path.join(directory, 'src'), { recursive: true });
  writeFileSync(
    path.join(directory, 'package.json'),
    JSON.stringify({ name: `words-${framework.name}`, version: '0.1.0', type: framework.module }, null, 2),
  );
  writeFileSync(
    path.join(directory, 'tsconfig.json'),
    JSON.stringify(
      {
        compilerOptions: {
          target: 'ES2022',
          module: 'NodeNext',
          moduleResolution: 'NodeNext',
          lib: framework.lib ?? ['es2022'],
          strict: true,
          skipLibCheck: false,
          types: ['node'],
          rootDir: 'src',
          outDir: 'dist',
        },
        include: ['src'],
      },
      null,
      2,
    ),
  );
  writeFileSync(path.join(directory, 'src', 'server.ts'), framework.server);
}

interface App {
  readonly framework: Framework;
  readonly directory: string;
}

/** Installs the tarball and the framework (the npm cache first), then type-checks and compiles the app. */
async function buildApp(workspace: string, tarball: string, framework: Framework): Promise<App> {
  const directory = path.join(workspace, framework.name);
  createApp(directory, framework);
  await installInto(directory, [
    tarball,
    ...framework.packages,
    `@types/node@${MANIFEST.devDependencies['@types/node']}`,
  ]);
  await run(process.execPath, [require.resolve('typescript/bin/tsc'), '-p', directory], directory);
  return { framework, directory };
}

interface Running {
  readonly child: ChildProcessWithoutNullStreams;
  readonly url: string;
  output(): string;
}

async function startApp(app: App, env: Readonly<Record<string, string>>): Promise<Running> {
  const child = spawn(process.execPath, [path.join(app.directory, 'dist', 'server.js')], {
    cwd: app.directory,
    env: { PATH: process.env.PATH ?? '', ...env },
  });
  running.push(child);
  const { match, output } = await announcement(
    child,
    /listening (\d+)/,
    START_TIMEOUT_MS,
    'its listening line',
  );
  return { child, url: `http://127.0.0.1:${match[1]}`, output };
}

async function get(url: string, headers: Record<string, string> = {}) {
  const response = await fetch(url, { headers, signal: AbortSignal.timeout(10_000) });
  return { status: response.status, headers: response.headers, body: await response.text() };
}

let workspace: string;
let packedFiles: readonly string[];
let redis: LocalRedis;
let platform: RunningPlatform;
const apps = new Map<string, App>();
const running: ChildProcessWithoutNullStreams[] = [];

beforeAll(async () => {
  workspace = mkdtempSync(path.join(tmpdir(), 'plugin-consumer-'));
  const binary = findOnPath('redis-server');
  if (binary === undefined) throw new Error('redis-server is not installed (apt-get install redis-server)');
  const packed = await pack(workspace, 'packages/plugin');
  packedFiles = packed.files;
  // Settled, not raced: a failed app must not leave the others installing while the workspace is removed.
  const [startedRedis, startedPlatform, ...built] = await Promise.allSettled([
    startRedisServer(binary),
    startPlatform({ config: platformConfig() }),
    ...FRAMEWORKS.map((framework) => buildApp(workspace, packed.tarball, framework)),
  ]);
  if (startedRedis.status === 'fulfilled') redis = startedRedis.value as LocalRedis;
  if (startedPlatform.status === 'fulfilled') platform = startedPlatform.value as RunningPlatform;
  const failed = [startedRedis, startedPlatform, ...built].find((result) => result.status === 'rejected');
  if (failed) throw failed.reason;
  for (const app of built)
    if (app.status === 'fulfilled') apps.set((app.value as App).framework.name, app.value as App);
}, 15 * MINUTES);

afterAll(async () => {
  for (const child of running) if (child.exitCode === null) child.kill('SIGKILL');
  await platform?.stop();
  await redis?.stop();
  rmSync(workspace, { recursive: true, force: true });
});

describe('the packed plugin', () => {
  it('ships compiled JavaScript with declarations, and no sources, tests or construct library', () => {
    expect(packedFiles).toEqual(
      expect.arrayContaining([
        'package.json',
        'LICENSE',
        'README.md',
        'dist/plugin/index.js',
        'dist/plugin/index.d.ts',
      ]),
    );
    expect(packedFiles.filter((file) => file.endsWith('.ts') && !file.endsWith('.d.ts'))).toEqual([]);
    expect(packedFiles.filter((file) => /^dist\/(lib|lambdas|bundles)\/|^test\//.test(file))).toEqual([]);
  });
});

describe.each(FRAMEWORKS)('a new $name app ($module)', (framework) => {
  const app = () => apps.get(framework.name) as App;

  it('installed no aws-cdk-lib, no constructs and no AWS SDK, and ioredis once, as a peer', () => {
    const modules = path.join(app().directory, 'node_modules');
    for (const absent of ['aws-cdk-lib', 'constructs', 'cdk-nag', '@aws-sdk', '@aws-lambda-powertools']) {
      expect(existsSync(path.join(modules, absent)), absent).toBe(false);
    }
    expect(existsSync(path.join(modules, 'ioredis', 'package.json'))).toBe(true);
    expect(existsSync(path.join(modules, PLUGIN.name, 'node_modules', 'ioredis'))).toBe(false);
  });

  it('answers over HTTP as docs/plugin.md says, gives the handler its grant, and reports every allowed call at close', async () => {
    const started = await startApp(app(), {
      PLATFORM_URL: platform.url,
      REDIS_URL: `redis://${redis.host}:${redis.port}`,
      THREESCALE_PROVIDER_KEY: PROVIDER_KEY,
    });
    const url = `${started.url}/v1/words/hello.json`;
    const apikey = keyOf(framework);

    const missing = await get(url);
    expect(missing.status, started.output()).toBe(401);
    expect(missing.headers.get('www-authenticate')).not.toBeNull();
    expect(missing.headers.get('content-type')).toContain('application/problem+json');
    expect((await get(url, { apikey: 'not-a-key' })).status).toBe(401);

    for (let call = 0; call < HOURLY_LIMIT; call++) {
      const allowed = await get(url, { apikey });
      expect(allowed.status, allowed.body).toBe(200);
      // The handler reads the grant the plugin put on the request, through the package's types.
      expect(JSON.parse(allowed.body)).toEqual({ word: 'hello.json', plan: 'Basic' });
    }
    const over = await get(url, { apikey });
    expect(over.status, over.body).toBe(429);
    expect(over.headers.get('retry-after')).toMatch(/^\d+$/);
    expect(over.headers.get('content-type')).toContain('application/problem+json');

    started.child.kill('SIGTERM');
    expect(await exitOf(started.child), started.output()).toBe(0);
    expect(platform.usage(SERVICE_ID, appOf(framework), 'hits', 'hour')).toBe(HOURLY_LIMIT);
  });
});
