/**
 * The core promise, exact: an application's limit holds whatever keys it uses, mapping rules see the path
 * the backend sees, first calls of a new credential or endpoint never pass a hard limit, usage lands in
 * the period it happened, and nothing allowed is dropped. Each case runs the whole local stack over HTTP
 * with a real redis-server and the local platform, and asserts the exact numbers, through the gateway's
 * authorizer and through the code plugin alike (access-paths.ts).
 */
import http from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { startPlatform } from '../../local/platform';
import { type LocalStack, startLocalStack } from '../../local/stack';
import { shutdownWarnings } from '../../local/start';
import { ACCESS_PATHS, type AccessPath, AUTHORIZER_AND_PLUGIN, stopPluginApps } from './access-paths';
import { call, clockFromStartOfHour, IN_PROCESS_COMMAND_TIMEOUT_MS } from './fixtures';

const PROVIDER_KEY = 'pk-correctness';

const stacks: LocalStack[] = [];
afterEach(async () => {
  await stopPluginApps();
  await Promise.all(stacks.splice(0).map((stack) => stack.stop()));
});

/** The clock each stack was started with, for the plugin path to run on it too. */
const clocks = new WeakMap<LocalStack, () => number>();

/** The base URL of the stack's first gateway on the path. */
function urlOn(path: AccessPath, stack: LocalStack): Promise<string> {
  return path.urlOf(stack, 0, clocks.get(stack));
}

async function start(options: Parameters<typeof startLocalStack>[0]): Promise<LocalStack> {
  const stack = await startLocalStack({
    redis: 'auto',
    sweepIntervalMs: 0,
    redisCommandTimeoutMs: IN_PROCESS_COMMAND_TIMEOUT_MS,
    ...options,
  });
  stacks.push(stack);
  if (options.now) clocks.set(stack, options.now);
  return stack;
}

/** A GET with the path sent byte for byte as given (fetch would normalize it first), under the API's URL. */
function rawGet(baseUrl: string, rawPath: string, headers: Record<string, string>): Promise<number> {
  const url = new URL(baseUrl);
  const path = `${url.pathname.replace(/\/$/, '')}${rawPath}`;
  return new Promise((resolve, reject) => {
    const request = http.request(
      { host: url.hostname, port: url.port, path, method: 'GET', headers, timeout: 10_000 },
      (response) => {
        response.resume();
        response.on('end', () => resolve(response.statusCode ?? 0));
      },
    );
    request.on('timeout', () => request.destroy(new Error('no answer within 10 s')));
    request.on('error', reject);
    request.end();
  });
}

function statuses(answers: readonly { status: number }[]): Record<number, number> {
  const counts: Record<number, number> = {};
  for (const { status } of answers) counts[status] = (counts[status] ?? 0) + 1;
  return counts;
}

describe.each(AUTHORIZER_AND_PLUGIN)('one application, one budget (app_id mode, $name)', (path) => {
  const SERVICE = 'svc-budget';
  const platform = {
    services: [
      {
        id: SERVICE,
        providerKey: PROVIDER_KEY,
        authentication: 'app_id',
        metrics: [{ name: 'hits' }],
        plans: [{ name: 'Ten', limits: [{ metric: 'hits', period: 'hour', value: 10 }] }],
        applications: [
          { id: 'app-keys', appKeys: ['key-1', 'key-2', 'key-3', 'key-4'], plan: 'Ten' },
          { id: 'app-keyless', plan: 'Ten' },
        ],
      },
    ],
  };
  const gateway = { serviceId: SERVICE, routes: ['GET /v1/words/{word}'] };

  it('gives an application with four keys its limit once, not once per key', async () => {
    const stack = await start({ stack: { platform, gateway }, now: clockFromStartOfHour() });
    const url = await urlOn(path, stack);
    let allowed = 0;
    for (const key of ['key-1', 'key-2', 'key-3', 'key-4']) {
      for (let i = 0; i < 12; i++) {
        const { status } = await call(`${url}/v1/words/w`, {
          headers: { app_id: 'app-keys', app_key: key },
        });
        if (status === 200) allowed++;
        else expect(status).toBe(path.refusedLimit);
      }
    }
    await stack.flush();
    expect(allowed).toBe(10);
    expect(stack.platform?.usage(SERVICE, 'app-keys', 'hits', 'hour')).toBe(10);
  });

  it('does not open a new budget for made-up keys of an application without keys', async () => {
    const stack = await start({ stack: { platform, gateway }, now: clockFromStartOfHour() });
    const url = await urlOn(path, stack);
    const answers = await Promise.all(
      Array.from({ length: 15 }, (_, key) =>
        Promise.all(
          Array.from({ length: 5 }, () =>
            call(`${url}/v1/words/w`, {
              headers: { app_id: 'app-keyless', app_key: `made-up-${key}` },
            }),
          ),
        ),
      ),
    );
    await stack.flush();
    expect(statuses(answers.flat())).toEqual({ 200: 10, [path.refusedLimit]: 65 });
    expect(stack.platform?.usage(SERVICE, 'app-keyless', 'hits', 'hour')).toBe(10);
  });

  it.each(ACCESS_PATHS)('still refuses a wrong key of an application with keys ($name)', async (kind) => {
    const stack = await start({
      stack: { platform, gateway: { ...gateway, ...kind.entry } },
      now: clockFromStartOfHour(),
    });
    const url = await urlOn(kind, stack);
    const good = await call(`${url}/v1/words/w`, {
      headers: { app_id: 'app-keys', app_key: 'key-1' },
    });
    const wrong = await call(`${url}/v1/words/w`, {
      headers: { app_id: 'app-keys', app_key: 'key-9' },
    });
    const missing = await call(`${url}/v1/words/w`, { headers: { app_id: 'app-keys' } });
    const refused = kind.refusedCredential;
    expect([good.status, wrong.status, missing.status]).toEqual([200, refused, refused]);
  });
});

describe.each(ACCESS_PATHS)('mapping rules match the path the backend sees ($name)', (kind) => {
  const SERVICE = 'svc-paths';
  const platform = {
    services: [
      {
        id: SERVICE,
        providerKey: PROVIDER_KEY,
        authentication: 'user_key',
        metrics: [{ name: 'hits', children: [{ name: 'premium' }, { name: 'pdf' }, { name: 'basic' }] }],
        plans: [
          {
            name: 'NoPremium',
            limits: [
              { metric: 'premium', period: 'eternity', value: 0 },
              { metric: 'pdf', period: 'eternity', value: 0 },
            ],
          },
        ],
        applications: [{ id: 'app-paths', userKey: 'key-paths', plan: 'NoPremium' }],
      },
    ],
  };
  const gateway = {
    ...kind.entry,
    serviceId: SERVICE,
    routes: ['ANY /{proxy+}'],
    mappingRules: [
      { method: 'GET', pattern: '/v1/premium', metric: 'premium', delta: 1 },
      { method: 'GET', pattern: '/v1/report?format=pdf', metric: 'pdf', delta: 1 },
      { method: 'GET', pattern: '/v1', metric: 'basic', delta: 1 },
    ],
  };

  it('applies a rule to every spelling of its path: percent-encoded, dot segments, repeated slashes', async () => {
    const stack = await start({ stack: { platform, gateway }, now: clockFromStartOfHour() });
    const url = await urlOn(kind, stack);
    const headers = { apikey: 'key-paths' };
    expect(await rawGet(url, '/v1/basic/x', headers)).toBe(200);
    for (const path of [
      '/v1/premium/x',
      '/v1/%70remium/x',
      '/v1/%70%72%65%6D%69%75%6D/x',
      '/v1//premium/x',
      '/v1/basic/../premium/x',
      '/v1/./premium/x',
      '/v1/basic/%2E%2E/premium/x',
      '/v1%2Fpremium/x',
      '/v1/%2fpremium',
    ]) {
      expect({ path, status: await rawGet(url, path, headers) }).toEqual({ path, status: 403 });
    }
    await stack.flush();
    expect(stack.platform?.usage(SERVICE, 'app-paths', 'premium', 'eternity')).toBe(0);
    expect(stack.platform?.usage(SERVICE, 'app-paths', 'hits', 'hour')).toBe(1);
  });

  it('matches a query rule when any of the repeated values is the rule value', async () => {
    const stack = await start({ stack: { platform, gateway }, now: clockFromStartOfHour() });
    const url = await urlOn(kind, stack);
    const headers = { apikey: 'key-paths' };
    expect(await rawGet(url, '/v1/report?format=csv', headers)).toBe(200);
    expect(await rawGet(url, '/v1/report?format=pdf&format=csv', headers)).toBe(403);
    expect(await rawGet(url, '/v1/report?format=csv&format=pdf', headers)).toBe(403);
    expect(await rawGet(url, '/v1/report?format=%70df', headers)).toBe(403);
  });
});

describe.each(AUTHORIZER_AND_PLUGIN)('first calls never pass a hard limit ($name)', (path) => {
  const SERVICE = 'svc-first';
  const platform = {
    services: [
      {
        id: SERVICE,
        providerKey: PROVIDER_KEY,
        authentication: 'user_key',
        metrics: [{ name: 'hits', children: [{ name: 'a' }, { name: 'b' }, { name: 'c' }, { name: 'd' }] }],
        plans: [
          { name: 'Fifty', limits: [{ metric: 'hits', period: 'hour', value: 50 }] },
          {
            name: 'Nested',
            limits: [
              { metric: 'hits', period: 'hour', value: 15 },
              { metric: 'a', period: 'hour', value: 10 },
            ],
          },
        ],
        applications: [
          { id: 'app-fifty', userKey: 'key-fifty', plan: 'Fifty' },
          { id: 'app-nested', userKey: 'key-nested', plan: 'Nested' },
        ],
      },
    ],
  };
  const gateway = {
    serviceId: SERVICE,
    routes: ['GET /{endpoint}'],
    mappingRules: ['a', 'b', 'c', 'd', 'e'].map((name) => ({
      method: 'GET',
      pattern: `/${name}$`,
      metric: name === 'e' ? 'hits' : name,
      delta: 1,
    })),
  };

  it('allows exactly the 5 calls left to 200 concurrent calls over 4 endpoints not yet cached', async () => {
    const stack = await start({ stack: { platform, gateway }, now: clockFromStartOfHour() });
    const url = await urlOn(path, stack);
    for (let i = 0; i < 45; i++) {
      expect((await call(`${url}/e`, { headers: { apikey: 'key-fifty' } })).status).toBe(200);
    }
    const answers = await Promise.all(
      Array.from({ length: 200 }, (_, i) =>
        call(`${url}/${'abcd'[i % 4]}`, { headers: { apikey: 'key-fifty' } }),
      ),
    );
    await stack.flush();
    expect(statuses(answers)).toEqual({ 200: 5, [path.refusedLimit]: 195 });
    expect(stack.platform?.usage(SERVICE, 'app-fifty', 'hits', 'hour')).toBe(50);
  });

  it('holds a child limit and its parent for a fresh key called 200 times at once', async () => {
    const stack = await start({ stack: { platform, gateway }, now: clockFromStartOfHour() });
    const url = await urlOn(path, stack);
    const endpoints = Array.from({ length: 200 }, (_, i) => `/${'abcde'[i % 5]}`);
    const answers = await Promise.all(
      endpoints.map(async (endpoint) => ({
        path: endpoint,
        ...(await call(`${url}${endpoint}`, { headers: { apikey: 'key-nested' } })),
      })),
    );
    await stack.flush();
    const allowed = answers.filter((answer) => answer.status === 200);
    const allowedA = allowed.filter((answer) => answer.path === '/a').length;
    expect(allowed.length).toBe(15);
    expect(allowedA).toBeLessThanOrEqual(10);
    expect(stack.platform?.usage(SERVICE, 'app-nested', 'hits', 'hour')).toBe(15);
    expect(stack.platform?.usage(SERVICE, 'app-nested', 'a', 'hour')).toBe(allowedA);
  });
});

describe.each(AUTHORIZER_AND_PLUGIN)('usage lands in the period it happened ($name)', (path) => {
  const SERVICE = 'svc-periods';
  const platform = {
    services: [
      {
        id: SERVICE,
        providerKey: PROVIDER_KEY,
        authentication: 'user_key',
        metrics: [{ name: 'hits' }],
        plans: [{ name: 'PerMinute', limits: [{ metric: 'hits', period: 'minute', value: 5 }] }],
        applications: [{ id: 'app-minute', userKey: 'key-minute', plan: 'PerMinute' }],
      },
    ],
  };
  const gateway = { serviceId: SERVICE, routes: ['GET /v1/words/{word}'] };

  it('charges calls of the last 1.6 s of a minute to that minute, so the next one allows its 5', async () => {
    const minuteStart = Math.floor(Date.now() / 60_000) * 60_000 + 10 * 60_000;
    let now = minuteStart + 58_400;
    const stack = await start({ stack: { platform, gateway }, now: () => now });
    const url = await urlOn(path, stack);
    const get = () => call(`${url}/v1/words/w`, { headers: { apikey: 'key-minute' } });
    for (const at of [58_400, 58_900, 59_500, 59_900]) {
      now = minuteStart + at;
      expect((await get()).status).toBe(200);
    }
    now = minuteStart + 60_500;
    await stack.flush();
    expect(stack.platform?.usage(SERVICE, 'app-minute', 'hits', 'minute')).toBe(0);
    const next = [];
    for (let i = 0; i < 6; i++) next.push((await get()).status);
    expect(next).toEqual([200, 200, 200, 200, 200, path.refusedLimit]);
    now = minuteStart + 61_000;
    await stack.flush();
    expect(stack.platform?.usage(SERVICE, 'app-minute', 'hits', 'minute')).toBe(5);
    now = minuteStart + 59_999;
    expect(stack.platform?.usage(SERVICE, 'app-minute', 'hits', 'minute')).toBe(4);
  });
});

describe('usage the platform cannot take is kept and said, never dropped with the rest', () => {
  const SERVICE = 'svc-ghost';
  const platformConfig = {
    services: [
      {
        id: SERVICE,
        providerKey: PROVIDER_KEY,
        authentication: 'user_key',
        metrics: [{ name: 'hits', children: [{ name: 'get_word' }] }],
        plans: [{ name: 'Roomy', limits: [{ metric: 'hits', period: 'hour', value: 1000 }] }],
        applications: Array.from({ length: 8 }, (_, i) => ({
          id: `app-${i}`,
          userKey: `key-${i}`,
          plan: 'Roomy',
        })),
      },
    ],
  };

  it('reports every valid call of 8 applications when one route names a metric the platform lacks', async () => {
    const now = clockFromStartOfHour();
    const platform = await startPlatform({ config: platformConfig, now });
    try {
      const stack = await start({
        stack: {
          gateway: {
            serviceId: SERVICE,
            platformUrl: platform.url,
            providerKey: PROVIDER_KEY,
            routes: ['GET /v1/words/{word}', 'GET /v1/ghost'],
            mappingRules: [
              { method: 'GET', pattern: '/v1/words/{word}', metric: 'get_word', delta: 1 },
              { method: 'GET', pattern: '/v1/ghost', metric: 'ghost', delta: 1 },
            ],
          },
        },
        now,
      });
      let allowedWords = 0;
      let allowedGhosts = 0;
      for (let app = 0; app < 8; app++) {
        const headers = { apikey: `key-${app}` };
        for (let i = 0; i < 5; i++) {
          if ((await call(`${stack.gatewayUrl}/v1/words/w`, { headers })).status === 200) allowedWords++;
        }
        for (let i = 0; i < 5; i++) {
          if ((await call(`${stack.gatewayUrl}/v1/ghost`, { headers })).status === 200) allowedGhosts++;
        }
      }
      const result = await stack.flush();
      expect(allowedWords).toBe(40);
      const reported = Array.from({ length: 8 }, (_, app) =>
        platform.usage(SERVICE, `app-${app}`, 'get_word', 'hour'),
      );
      expect(reported).toEqual(Array(8).fill(5));
      expect(platform.reportErrors()).toEqual([]);
      expect(allowedGhosts).toBe(40);
      expect(result.notAccepted).toEqual([{ metric: 'ghost', usage: allowedGhosts, applications: 8 }]);
      expect(result.unreported).toBe(0);
      expect(shutdownWarnings(result)).toEqual([
        'the platform does not take metric "ghost": 40 call(s) of 8 application(s) were allowed but not reported (fix the mapping rule or add the metric)',
      ]);
    } finally {
      await platform.stop();
    }
  });
});
