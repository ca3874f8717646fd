/**
 * The plugin on real components: redis-server and a local Redis Cluster, the local platform over HTTP,
 * and each framework's own app (Express over HTTP, Fastify's inject, Hono's request, a Function URL
 * handler called with its event). One clock is shared by the platform and the plugin.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import Fastify from 'fastify';
import { Hono } from 'hono';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type RunningPlatform, startPlatform } from '../../../local/platform';
import {
  type AccessControl,
  type AccessControlSettings,
  type AccessGrant,
  type AccessVariables,
  createAccessControl,
  type FunctionUrlEvent,
} from '../../../plugin';
import { describeOnTopologies, REAL_REDIS_TOPOLOGIES, type TestRedis } from '../../support/redis-topology';

const SERVICE = 'svc-plugin';
const PROVIDER_KEY = 'pk-plugin';
const HOUR = 3_600_000;
const LIMIT = 5;
const RULES = [
  { method: 'GET', pattern: '/v1/words/{word}', metric: 'get_word', delta: 1 },
  { method: 'POST', pattern: '/v1/words/{word}', metric: 'post_word', delta: 1 },
];

const PLATFORM = {
  services: [
    {
      id: SERVICE,
      providerKey: PROVIDER_KEY,
      authentication: 'user_key',
      metrics: [{ name: 'hits', children: [{ name: 'get_word' }, { name: 'post_word' }] }],
      plans: [
        { name: 'Basic', limits: [{ metric: 'hits', period: 'hour', value: LIMIT }] },
        { name: 'Roomy', limits: [{ metric: 'hits', period: 'hour', value: 1000 }] },
      ],
      applications: [
        { id: 'app-limited', userKey: 'key-limited', plan: 'Basic' },
        { id: 'app-roomy', userKey: 'key-roomy', plan: 'Roomy' },
        { id: 'app-suspended', userKey: 'key-suspended', plan: 'Roomy', state: 'suspended' },
      ],
    },
  ],
};

/** One minute into an hour, so hourly counters never roll over during a test; tests may move it. */
const clock = { at: Math.floor(Date.now() / HOUR) * HOUR + 60_000 };
const now = () => clock.at;

let platform: RunningPlatform;
beforeAll(async () => {
  platform = await startPlatform({ config: PLATFORM, now });
});
afterAll(async () => {
  await platform.stop();
});

const controls: AccessControl[] = [];
const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  await Promise.all(closers.splice(0).map((close) => close()));
  await Promise.all(controls.splice(0).map((control) => control.close()));
});

function plugin(settings: Partial<AccessControlSettings> = {}): AccessControl {
  const control = createAccessControl({
    serviceId: SERVICE,
    platformUrl: platform.url,
    platformCredential: PROVIDER_KEY,
    mappingRules: RULES,
    reporting: 'in-process',
    sweepIntervalMs: 0,
    now,
    ...settings,
  });
  controls.push(control);
  return control;
}

/** The hourly hits the platform has counted for a user key (authorize records nothing). */
async function platformHits(userKey: string): Promise<number> {
  const url = new URL('/transactions/authorize.xml', platform.url);
  url.search = new URLSearchParams({
    provider_key: PROVIDER_KEY,
    service_id: SERVICE,
    user_key: userKey,
  }).toString();
  const xml = await (await fetch(url, { signal: AbortSignal.timeout(10_000) })).text();
  const match =
    /<usage_report metric="hits" period="hour">[\s\S]*?<current_value>(\d+)<\/current_value>/.exec(xml);
  if (!match) throw new Error(`no hourly hits in ${xml}`);
  return Number(match[1]);
}

/** A call of the roomy application, as a framework hands it over. */
const ROOMY_CALL = { method: 'GET', url: '/v1/words/a', headers: { apikey: 'key-roomy' } };

async function listen(server: http.Server): Promise<string> {
  server.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  closers.push(() => new Promise((resolve) => server.close(() => resolve())));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

async function expressApp(control: AccessControl, failing: ReadonlySet<string> = new Set()): Promise<string> {
  const app = express();
  app.use(control.express());
  app.get('/v1/words/:word', (req, res) => {
    if (req.params.word === 'throw') throw new Error('handler failed');
    if (failing.has(req.params.word)) {
      res.status(502).json({ error: 'backend down' });
      return;
    }
    res.json({ grant: req.access });
  });
  return listen(http.createServer(app));
}

function get(base: string, path: string, key?: string) {
  return fetch(`${base}${path}`, {
    headers: key === undefined ? {} : { apikey: key },
    signal: AbortSignal.timeout(10_000),
  });
}

describeOnTopologies(REAL_REDIS_TOPOLOGIES, (redis: () => TestRedis) => {
  afterEach(async () => {
    await redis().flushAll();
  });

  it('holds the hard limit exactly through Express and reports every allowed call on close()', async () => {
    // A fresh hour for each topology: the platform's count of the limited application starts again.
    clock.at += HOUR;
    const control = plugin({ redis: redis().settings });
    const base = await expressApp(control);
    const before = await platformHits('key-limited');
    const statuses: number[] = [];
    for (let i = 0; i < LIMIT + 3; i++) statuses.push((await get(base, '/v1/words/a', 'key-limited')).status);
    expect(statuses.filter((status) => status === 200)).toHaveLength(LIMIT);
    expect(statuses.slice(LIMIT)).toEqual([429, 429, 429]);
    await control.close();
    expect((await platformHits('key-limited')) - before).toBe(LIMIT);
  });

  it('meters only what succeeded: N calls, K failing (5xx or thrown) give N - K', async () => {
    const control = plugin({ redis: redis().settings, countFailedResponses: false });
    const base = await expressApp(control, new Set(['bad']));
    const before = await platformHits('key-roomy');
    // The first call is the budget's authrep: the platform counts it whatever the handler does.
    expect((await get(base, '/v1/words/first', 'key-roomy')).status).toBe(200);
    const paths = ['/v1/words/ok', '/v1/words/bad', '/v1/words/throw', '/v1/words/ok', '/v1/words/bad'];
    const answers = [];
    for (const path of paths) answers.push((await get(base, path, 'key-roomy')).status);
    expect(answers).toEqual([200, 502, 500, 200, 502]);
    await control.close();
    expect((await platformHits('key-roomy')) - before).toBe(1 + paths.length - 3);
  });

  it('close() reports only once the give-backs of calls that just failed are done', async () => {
    const control = plugin({ redis: redis().settings, countFailedResponses: false });
    const before = await platformHits('key-roomy');
    expect((await control.check(ROOMY_CALL)).allowed).toBe(true);
    const failed = [await control.check(ROOMY_CALL), await control.check(ROOMY_CALL)];
    // The handlers failed just now: their settles are still running when the application closes.
    for (const outcome of failed) {
      if (!outcome.allowed || outcome.settle === undefined) throw new Error('a metered call settles');
      void outcome.settle(502);
    }
    await control.close();
    expect((await platformHits('key-roomy')) - before).toBe(1);
  });

  it('lets usage of a process that died be reported by another process (close sweeps all pending usage)', async () => {
    // Two processes on one Redis: the first never closes (its flush is a report window away).
    const dying = createAccessControl({
      serviceId: SERVICE,
      platformUrl: platform.url,
      platformCredential: PROVIDER_KEY,
      mappingRules: RULES,
      redis: redis().settings,
      reporting: 'in-process',
      reportWindowSeconds: 900,
      sweepIntervalMs: 0,
      now,
    });
    const survivor = plugin({ redis: redis().settings });
    const before = await platformHits('key-roomy');
    const request = { method: 'GET', path: '/v1/words/a', query: {}, headers: { apikey: ['key-roomy'] } };
    let allowed = 0;
    for (const control of [dying, survivor, dying, dying, survivor, dying]) {
      if ((await control.decide(request)).allowed) allowed++;
    }
    expect(allowed).toBe(6);
    await survivor.close();
    expect((await platformHits('key-roomy')) - before).toBe(6);
    // The dead process's own flush, had it run, finds nothing left: nothing is reported twice.
    await dying.close();
    expect((await platformHits('key-roomy')) - before).toBe(6);
  });
});

describe('frameworks', () => {
  let redisServer: TestRedis;
  beforeAll(async () => {
    const { startRedisTopology } = await import('../../support/redis-topology');
    redisServer = await startRedisTopology('redis-server');
  });
  afterAll(async () => {
    await redisServer.stop();
  });
  afterEach(async () => {
    await redisServer.flushAll();
  });

  it('Fastify: guards the routes of the context that registers it, not its siblings, and closes on onClose', async () => {
    const control = plugin({ redis: redisServer.settings });
    const app = Fastify();
    app.register(async (api) => {
      await api.register(control.fastify);
      api.get('/v1/words/:word', async (request) => ({
        plan: (request as { access?: AccessGrant }).access?.plan,
      }));
    });
    app.get('/health', async () => ({ ok: true }));
    await app.ready();
    expect((await app.inject({ url: '/health' })).statusCode).toBe(200);
    const refused = await app.inject({ url: '/v1/words/a' });
    expect(refused.statusCode).toBe(401);
    expect(refused.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(refused.headers['www-authenticate']).toMatch(/^ApiKey/);
    const before = await platformHits('key-roomy');
    for (let i = 0; i < 3; i++) {
      const allowed = await app.inject({ url: '/v1/words/a', headers: { apikey: 'key-roomy' } });
      expect(allowed.statusCode).toBe(200);
      expect(allowed.json()).toEqual({ plan: 'Roomy' });
    }
    const limited = await app.inject({ url: '/v1/words/a', headers: { apikey: 'key-roomy' } });
    expect(limited.headers['ratelimit-policy']).toBe('"default";q=1000;w=3600');
    await app.close();
    expect((await platformHits('key-roomy')) - before).toBe(4);
  });

  it('Hono: refuses with problem+json, puts the grant in the context and the RateLimit fields on the answer', async () => {
    const control = plugin({ redis: redisServer.settings });
    const app = new Hono<{ Variables: AccessVariables }>();
    app.use('/v1/*', control.hono());
    app.get('/v1/words/:word', (c) => c.json({ plan: c.get('access').plan }));
    const refused = await app.request('/v1/words/a', { headers: { apikey: 'nobody' } });
    expect(refused.status).toBe(401);
    expect(await refused.json()).toMatchObject({ status: 401, reason: 'invalid_credential' });
    const suspended = await app.request('/v1/words/a', { headers: { apikey: 'key-suspended' } });
    expect(suspended.status).toBe(403);
    await app.request('/v1/words/a', { headers: { apikey: 'key-roomy' } });
    const allowed = await app.request('/v1/words/a', { headers: { apikey: 'key-roomy' } });
    expect(allowed.status).toBe(200);
    expect(await allowed.json()).toEqual({ plan: 'Roomy' });
    expect(allowed.headers.get('ratelimit')).toMatch(/^"default";r=\d+;t=\d+$/);
  });

  it('Function URL: answers a refusal itself and hands the grant to the handler as a Lambda authorizer would', async () => {
    const control = plugin({ redis: redisServer.settings });
    const handler = control.functionUrl(async (event: FunctionUrlEvent) => ({
      statusCode: 200,
      body: JSON.stringify(event.requestContext.authorizer?.lambda),
    }));
    const event = (headers: Record<string, string>): FunctionUrlEvent => ({
      rawPath: '/v1/words/a',
      rawQueryString: 'x=1',
      headers,
      requestContext: { http: { method: 'GET', sourceIp: '192.0.2.1' } },
    });
    const refused = await handler(event({}), {});
    expect(refused).toMatchObject({
      statusCode: 401,
      headers: { 'content-type': 'application/problem+json' },
    });
    const allowed = await handler(event({ apikey: 'key-roomy' }), {});
    expect(allowed.statusCode).toBe(200);
    expect(JSON.parse(allowed.body ?? '')).toMatchObject({
      checked: true,
      plan: 'Roomy',
      metrics: ['get_word'],
    });
  });

  it('gives an allowed call a settle only when its end matters (countFailedResponses: false)', async () => {
    const counted = await plugin({ redis: redisServer.settings }).check(ROOMY_CALL);
    expect(counted).toMatchObject({ allowed: true, grant: { checked: true } });
    expect(counted).not.toHaveProperty('settle');
    const metered = plugin({ redis: redisServer.settings, countFailedResponses: false });
    const checked = await metered.check(ROOMY_CALL);
    expect(checked.allowed && typeof checked.settle).toBe('function');
    // Nothing was counted for a call let through unchecked: there is nothing to give back.
    const preflight = await metered.check({ method: 'OPTIONS', url: '/v1/words/a', headers: {} });
    expect(preflight).toMatchObject({ allowed: true, grant: { checked: false } });
    expect(preflight).not.toHaveProperty('settle');
  });

  it('Fastify, Hono and Function URL: with countFailedResponses false, a call whose handler fails gives its usage back', async () => {
    const control = plugin({ redis: redisServer.settings, countFailedResponses: false });
    const fail = (word: string) => {
      if (word === 'throw') throw new Error('handler failed');
      return word === 'bad' ? 502 : 200;
    };
    const fastify = Fastify();
    await fastify.register(control.fastify);
    fastify.get('/v1/words/:word', async (request, reply) =>
      reply.code(fail((request.params as { word: string }).word)).send({ ok: true }),
    );
    const hono = new Hono();
    hono.use('/v1/*', control.hono());
    hono.get('/v1/words/:word', (c) => c.json({ ok: true }, fail(c.req.param('word')) as 200 | 502));
    const functionUrl = control.functionUrl(async (event: FunctionUrlEvent) => ({
      statusCode: fail(event.rawPath.slice('/v1/words/'.length)),
    }));
    const before = await platformHits('key-roomy');
    // The first call is the budget's authrep: the platform counts it whatever the handler does.
    expect(
      (await fastify.inject({ url: '/v1/words/first', headers: { apikey: 'key-roomy' } })).statusCode,
    ).toBe(200);
    const words = ['ok', 'bad', 'throw'];
    const statuses: (number | string)[] = [];
    for (const word of words) {
      const url = `/v1/words/${word}`;
      statuses.push((await fastify.inject({ url, headers: { apikey: 'key-roomy' } })).statusCode);
      statuses.push((await hono.request(url, { headers: { apikey: 'key-roomy' } })).status);
      const event = {
        rawPath: url,
        headers: { apikey: 'key-roomy' },
        requestContext: { http: { method: 'GET' } },
      };
      statuses.push(
        await functionUrl(event, {}).then(
          (result) => result.statusCode ?? 200,
          () => 'threw',
        ),
      );
    }
    expect(statuses).toEqual([200, 200, 200, 502, 502, 502, 500, 500, 'threw']);
    await fastify.close();
    expect((await platformHits('key-roomy')) - before).toBe(1 + words.length);
  });

  it('throttles: refuses past the burst with 429, Retry-After and the burst policy; the platform counts the allowed', async () => {
    clock.at += HOUR;
    const control = plugin({ redis: redisServer.settings, throttles: { Roomy: { rate: 1, burst: 3 } } });
    const before = await platformHits('key-roomy');
    const request = ROOMY_CALL;
    let allowed = 0;
    let refusal: Awaited<ReturnType<AccessControl['check']>> | undefined;
    for (let i = 0; i < 50 && refusal === undefined; i++) {
      const outcome = await control.check(request);
      if (outcome.allowed) allowed++;
      else refusal = outcome;
    }
    expect(allowed).toBeGreaterThanOrEqual(3);
    expect(refusal?.allowed).toBe(false);
    if (refusal === undefined || refusal.allowed) throw new Error('never throttled');
    expect(refusal.reason).toBe('rate_limited');
    expect(refusal.answer.status).toBe(429);
    expect(refusal.answer.headers['retry-after']).toBe('1');
    expect(JSON.parse(refusal.answer.body)).toMatchObject({ limit: 3, remaining: 0, limitPeriod: 'second' });
    await control.close();
    expect((await platformHits('key-roomy')) - before).toBe(allowed);
  });

  it('lets unprotected methods through unchecked: CORS preflights by default, or the ones named', async () => {
    const preflights = plugin({ redis: redisServer.settings });
    const preflight = await preflights.check({ method: 'OPTIONS', url: '/v1/words/a', headers: {} });
    expect(preflight.allowed && preflight.grant.checked).toBe(false);
    const health = plugin({ redis: redisServer.settings, unprotectedMethods: ['GET /health'] });
    const open = await health.check({ method: 'GET', url: '/health', headers: {} });
    expect(open.allowed && open.grant.checked).toBe(false);
    const guarded = await health.check({ method: 'GET', url: '/v1/words/a', headers: {} });
    expect(!guarded.allowed && guarded.answer.status).toBe(401);
    const options = await health.check({ method: 'OPTIONS', url: '/v1/words/a', headers: {} });
    expect(!options.allowed && options.answer.status).toBe(401);
  });

  it('lets a refusal callback replace the answer', async () => {
    const control = plugin({
      redis: redisServer.settings,
      onRefusal: ({ reason, answer }) => ({ ...answer, body: JSON.stringify({ mine: reason }) }),
    });
    const outcome = await control.check({ method: 'GET', url: '/v1/words/a', headers: {} });
    expect(outcome.allowed).toBe(false);
    expect(!outcome.allowed && JSON.parse(outcome.answer.body)).toEqual({ mine: 'invalid_credential' });
  });
});

describe('never throws into the application', () => {
  it('without Redis, asks the platform for every call (authrep: the slow path), and the platform counts each', async () => {
    const control = plugin();
    const before = await platformHits('key-roomy');
    const request = ROOMY_CALL;
    for (let i = 0; i < 3; i++) expect((await control.check(request)).allowed).toBe(true);
    expect((await platformHits('key-roomy')) - before).toBe(3);
  });

  it('with Redis down, decides through the platform', async () => {
    const closed = http.createServer();
    const port = await new Promise<number>((resolve) =>
      closed.listen(0, '127.0.0.1', () => resolve((closed.address() as AddressInfo).port)),
    );
    await new Promise((resolve) => closed.close(resolve));
    const control = plugin({ redis: `redis://127.0.0.1:${port}` });
    const before = await platformHits('key-roomy');
    const outcome = await control.check(ROOMY_CALL);
    expect(outcome.allowed).toBe(true);
    expect((await platformHits('key-roomy')) - before).toBe(1);
  });

  it('with a Redis that never answers, cuts it off at the command deadline and decides through the platform', async () => {
    const sockets = new Set<import('node:net').Socket>();
    const { createServer } = await import('node:net');
    const hung = createServer((socket) => sockets.add(socket));
    const port = await new Promise<number>((resolve) =>
      hung.listen(0, '127.0.0.1', () => resolve((hung.address() as AddressInfo).port)),
    );
    closers.push(async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => hung.close(resolve));
    });
    const control = plugin({ redis: `redis://127.0.0.1:${port}` });
    const outcome = await control.check(ROOMY_CALL);
    expect(outcome.allowed).toBe(true);
  });

  it('with the platform down, lets the failure mode decide: strict refuses 503 with Retry-After', async () => {
    const control = plugin({ platformUrl: 'http://127.0.0.1:9', failureMode: 'strict' });
    const outcome = await control.check(ROOMY_CALL);
    expect(outcome.allowed).toBe(false);
    expect(!outcome.allowed && outcome.answer.status).toBe(503);
    expect(!outcome.allowed && outcome.answer.headers['retry-after']).toBe('5');
  });

  it('answers an unexpected failure 500 "access check unavailable", or lets the call through under failureMode allow', async () => {
    const unreadableSecret = {
      platformCredential: undefined,
      platformCredentialSecretArn: 'arn:aws:secretsmanager:us-east-1:123456789012:secret:missing',
    };
    const previous = { region: process.env.AWS_REGION, defaultRegion: process.env.AWS_DEFAULT_REGION };
    delete process.env.AWS_REGION;
    delete process.env.AWS_DEFAULT_REGION;
    try {
      const closed = plugin({ ...unreadableSecret, failureMode: 'resilient' });
      const refused = await closed.check(ROOMY_CALL);
      expect(refused.allowed).toBe(false);
      expect(!refused.allowed && refused.answer.status).toBe(500);
      expect(!refused.allowed && JSON.parse(refused.answer.body).title).toBe('Access check unavailable');
      const open = plugin({ ...unreadableSecret, failureMode: 'allow' });
      const allowed = await open.check(ROOMY_CALL);
      expect(allowed.allowed && allowed.grant.checked).toBe(false);
    } finally {
      if (previous.region !== undefined) process.env.AWS_REGION = previous.region;
      if (previous.defaultRegion !== undefined) process.env.AWS_DEFAULT_REGION = previous.defaultRegion;
    }
  });

  it('refuses bad input with a 4xx before any Redis or platform call', async () => {
    const control = plugin({ redis: 'redis://127.0.0.1:9', platformUrl: 'http://127.0.0.1:9' });
    const cases = [
      { url: '/v1/words/a', headers: { apikey: 'bad key with spaces' }, status: 401 },
      { url: '/v1/words/a', headers: { apikey: 'k'.repeat(300) }, status: 401 },
      { url: '/v1/words/%zz%E0', headers: { apikey: 'key-roomy' }, status: 400 },
      { url: `/v1/words/a?q=${'x'.repeat(70_000)}`, headers: { apikey: 'key-roomy' }, status: 414 },
      { url: '/v1/words/a', headers: { apikey: 'key-roomy', big: 'x'.repeat(20_000) }, status: 431 },
    ];
    const stats = platform.stats();
    for (const { url, headers, status } of cases) {
      const outcome = await control.check({ method: 'GET', url, headers });
      expect(!outcome.allowed && outcome.answer.status).toBe(status);
    }
    expect(platform.stats()).toEqual(stats);
  });
});
