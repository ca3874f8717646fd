/**
 * Changes made at the platform reach the gateway while calls keep coming: a raised limit, an upgraded
 * plan or a resumed application reach keys the cache refuses; a suspension reaches keys it allows, also
 * when the platform answers slower than the authorizer's deadline. Each case runs the whole local stack
 * over HTTP (real redis-server, the local platform, the queue's real report window) and asserts the
 * first answer that shows the change comes within the bound: one report window without webhooks.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, describe, expect, it } from 'vitest';
import { type RunningPlatform, startPlatform } from '../../local/platform';
import { type LocalStack, startLocalStack } from '../../local/stack';
import { type FaultProxy, startFaultProxy } from '../reliability/support/fault-proxy';
import { ACCESS_PATHS, stopPluginApps } from './access-paths';
import { call, clockFromStartOfHour } from './fixtures';

const PROVIDER_KEY = 'pk-changes';
const SERVICE = 'svc-changes';
const APP_SERVICE = 'svc-changes-app';
const WINDOW_SECONDS = 2;
/** One report window, plus the reporter's round trip and scheduling slack on a loaded 2-core machine. */
const WINDOW_BOUND_MS = WINDOW_SECONDS * 1000 + 1500;
/** How often a consumer calls while the test waits for a change to show. */
const CALL_INTERVAL_MS = 50;

const CHANGES_PLATFORM = {
  services: [
    {
      id: SERVICE,
      providerKey: PROVIDER_KEY,
      authentication: 'user_key',
      metrics: [{ name: 'hits' }],
      plans: [
        { name: 'Five', limits: [{ metric: 'hits', period: 'hour', value: 5 }] },
        { name: 'Hundred', limits: [{ metric: 'hits', period: 'hour', value: 100 }] },
        { name: 'Lifetime', limits: [{ metric: 'hits', period: 'eternity', value: 3 }] },
      ],
      applications: [
        { id: 'app-five', userKey: 'key-five', plan: 'Five' },
        { id: 'app-hundred', userKey: 'key-hundred', plan: 'Hundred' },
        { id: 'app-lifetime', userKey: 'key-lifetime', plan: 'Lifetime' },
        { id: 'app-paused', userKey: 'key-paused', plan: 'Hundred', state: 'suspended' },
      ],
    },
    {
      id: APP_SERVICE,
      providerKey: PROVIDER_KEY,
      authentication: 'app_id',
      metrics: [{ name: 'hits' }],
      plans: [{ name: 'Hundred', limits: [{ metric: 'hits', period: 'hour', value: 100 }] }],
      applications: [{ id: 'app-keys', appKeys: ['key-one', 'key-two'], plan: 'Hundred' }],
    },
  ],
};
const GATEWAY = { serviceId: SERVICE, routes: ['GET /v1/words/{word}'], reportWindowSeconds: WINDOW_SECONDS };
const APP_GATEWAY = { ...GATEWAY, serviceId: APP_SERVICE, basePath: '/appid', credentialMode: 'app_id' };

const running: { stop(): Promise<unknown> }[] = [];
afterEach(async () => {
  await stopPluginApps();
  for (const part of running.splice(0).reverse()) await part.stop();
});

/** `entry`: the gateway entries' API kind (default a REST API). */
/** The clock each stack was started with, for the plugin path to run on it too. */
const clocks = new WeakMap<LocalStack, () => number>();

async function start(webhooks = false, entry: object = {}): Promise<LocalStack> {
  const now = clockFromStartOfHour();
  const stack = await startLocalStack({
    stack: {
      platform: CHANGES_PLATFORM,
      gateway: [
        { ...GATEWAY, ...entry },
        { ...APP_GATEWAY, ...entry },
      ],
    },
    redis: 'auto',
    sweepIntervalMs: 0,
    now,
    webhooks,
  });
  running.push(stack);
  clocks.set(stack, now);
  return stack;
}

function platformOf(stack: LocalStack): RunningPlatform {
  if (stack.platform === undefined) throw new Error('the stack started no local platform');
  return stack.platform;
}

function caller(stack: LocalStack, userKey: string): () => Promise<number> {
  return userCaller(stack.gatewayUrl, userKey);
}

function userCaller(url: string, userKey: string): () => Promise<number> {
  return async () => (await call(`${url}/v1/words/w`, { headers: { apikey: userKey } })).status;
}

/** Calls until the status is `wanted` (or `limitMs` passed); the time from the start to that answer. */
async function timeUntil(
  send: () => Promise<number>,
  wanted: number,
  limitMs: number,
  intervalMs = CALL_INTERVAL_MS,
): Promise<number> {
  const startedAt = performance.now();
  let status = 0;
  while (performance.now() - startedAt < limitMs) {
    status = await send();
    if (status === wanted) return performance.now() - startedAt;
    await sleep(intervalMs);
  }
  throw new Error(`still ${status} after ${limitMs} ms, not ${wanted}`);
}

/**
 * The allowed calls' usage reported and their report window closed: from here on only refused calls can
 * bring the change, so a test of them cannot pass on the allowed calls' resync.
 */
async function settled(stack: LocalStack): Promise<void> {
  await stack.flush();
  await sleep(WINDOW_SECONDS * 1000);
}

async function callTimes(send: () => Promise<number>, times: number): Promise<number[]> {
  const statuses: number[] = [];
  for (let i = 0; i < times; i++) statuses.push(await send());
  return statuses;
}

function printTime(change: string, elapsedMs: number): void {
  console.log(`[platform changes] ${change}: applied after ${Math.round(elapsedMs)} ms`);
}

describe('without webhooks, a change reaches refused keys within one report window while calls come', () => {
  it('a limit raised from 5 to 100 lets a refused key through again, and only the allowed calls count', async () => {
    const stack = await start();
    const platform = platformOf(stack);
    const send = caller(stack, 'key-five');
    expect(await callTimes(send, 7)).toEqual([200, 200, 200, 200, 200, 403, 403]);
    await settled(stack);
    platform.setLimit(SERVICE, 'Five', 'hits', 'hour', 100);
    const elapsed = await timeUntil(send, 200, WINDOW_BOUND_MS);
    printTime('limit up (5 -> 100), no webhook', elapsed);
    expect(await callTimes(send, 10)).toEqual(Array(10).fill(200));
    await stack.flush();
    expect(platform.usage(SERVICE, 'app-five', 'hits', 'hour')).toBe(16);
  });

  it('an upgraded plan lets a refused key through again', async () => {
    const stack = await start();
    const send = caller(stack, 'key-five');
    expect(await callTimes(send, 6)).toEqual([200, 200, 200, 200, 200, 403]);
    await settled(stack);
    platformOf(stack).setApplicationPlan(SERVICE, 'app-five', 'Hundred');
    printTime('plan change (up), no webhook', await timeUntil(send, 200, WINDOW_BOUND_MS));
  });

  it('a raised eternity limit lets a refused key through again (no period end would ever do it)', async () => {
    const stack = await start();
    const send = caller(stack, 'key-lifetime');
    expect(await callTimes(send, 4)).toEqual([200, 200, 200, 403]);
    await settled(stack);
    platformOf(stack).setLimit(SERVICE, 'Lifetime', 'hits', 'eternity', 50);
    await timeUntil(send, 200, WINDOW_BOUND_MS);
  });

  it('a resumed application is let through again', async () => {
    const stack = await start();
    const send = caller(stack, 'key-paused');
    expect(await callTimes(send, 3)).toEqual([403, 403, 403]);
    platformOf(stack).setApplicationState(SERVICE, 'app-paused', 'active');
    printTime('resume, no webhook', await timeUntil(send, 200, WINDOW_BOUND_MS));
  });
});

/** A change through the platform's Account Management API, as a provider makes it. */
async function admin(stack: LocalStack, method: string, path: string, params: Record<string, string> = {}) {
  const response = await fetch(`${platformOf(stack).url}/admin/api/${path}`, {
    method,
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ provider_key: PROVIDER_KEY, ...params }).toString(),
    signal: AbortSignal.timeout(5000),
  });
  expect(response.status).toBeLessThan(300);
}

function appCaller(url: string, appKey: string): () => Promise<number> {
  return async () =>
    (await call(`${url}/v1/words/w`, { headers: { app_id: 'app-keys', app_key: appKey } })).status;
}

/** The base URLs of the user-key API and the app_id API on one path. */
interface Urls {
  readonly users: string;
  readonly apps: string;
}

/** The bound with webhooks: the webhook's delivery, one authorize and one Redis write. */
const WEBHOOK_BOUND_MS = 1000;

describe('with webhooks, application changes reach the cache within 1 s; without, within one report window', () => {
  const cases = [
    {
      change: 'suspend',
      send: (urls: Urls) => userCaller(urls.users, 'key-hundred'),
      make: (stack: LocalStack) => admin(stack, 'PUT', 'accounts/1/applications/app-hundred/suspend.xml'),
      before: 200,
      after: 403,
    },
    {
      change: 'revoke a key',
      send: (urls: Urls) => appCaller(urls.apps, 'key-one'),
      make: (stack: LocalStack) =>
        admin(stack, 'DELETE', 'accounts/1/applications/app-keys/keys/key-one.xml'),
      before: 200,
      after: 'refused credential',
    },
    {
      change: 'plan change (down)',
      send: (urls: Urls) => userCaller(urls.users, 'key-hundred'),
      make: (stack: LocalStack) =>
        admin(stack, 'PUT', 'accounts/1/applications/app-hundred/change_plan.xml', { plan_id: 'Five' }),
      before: 200,
      after: 'refused limit',
    },
  ];
  // On an HTTP API only the webhook cases run: they cover its answers and its webhook route; the timing
  // without webhooks is the core's, the same on either kind of API. The plugin runs both: its usage is
  // reported on its own path (its report messages), which brings the change without webhooks.
  for (const kind of ACCESS_PATHS) {
    for (const webhooks of kind.name === 'http' ? [true] : [true, false]) {
      for (const { change, send: senderOf, make, before, after: changed } of cases) {
        const after =
          typeof changed === 'number'
            ? changed
            : changed === 'refused limit'
              ? kind.refusedLimit
              : kind.refusedCredential;
        it(`${change}, ${webhooks ? 'with' : 'without'} webhooks, ${kind.name}`, async () => {
          const stack = await start(webhooks, kind.entry);
          const now = clocks.get(stack);
          const send = senderOf({
            users: await kind.urlOf(stack, 0, now),
            apps: await kind.urlOf(stack, 1, now),
          });
          expect(await callTimes(send, 6)).toEqual(Array(6).fill(before));
          await make(stack);
          const elapsed = await timeUntil(send, after, webhooks ? WEBHOOK_BOUND_MS : WINDOW_BOUND_MS, 10);
          printTime(`${change}, ${webhooks ? 'webhook' : 'no webhook'}, ${kind.name}`, elapsed);
          expect(await send()).toBe(after);
        });
      }
    }
  }

  it('a lowered limit sends no webhook (the platform has none for limits): one report window either way', async () => {
    const stack = await start(true);
    const send = caller(stack, 'key-hundred');
    expect(await callTimes(send, 20)).toEqual(Array(20).fill(200));
    await admin(stack, 'PUT', 'application_plans/Hundred/metrics/hits/limits/hour.xml', { value: '15' });
    printTime('limit down (100 -> 15), webhooks on', await timeUntil(send, 403, WINDOW_BOUND_MS));
    expect(platformOf(stack).webhookDeliveries()).toEqual([]);
  });

  it('a raised limit reaches a refused key in one report window, webhooks on', async () => {
    const stack = await start(true);
    const send = caller(stack, 'key-five');
    expect(await callTimes(send, 6)).toEqual([200, 200, 200, 200, 200, 403]);
    await admin(stack, 'PUT', 'application_plans/Five/metrics/hits/limits/hour.xml', { value: '100' });
    printTime('limit up (5 -> 100), webhooks on', await timeUntil(send, 200, WINDOW_BOUND_MS));
  });
});

describe('a platform slower than the authorizer deadline', () => {
  /** The platform answers every request this late: after the authorizer's 1 s, well before the report's 5 s. */
  const LATENCY_MS = 1200;

  async function startBehindSlowProxy(): Promise<{
    stack: LocalStack;
    platform: RunningPlatform;
    proxy: FaultProxy;
  }> {
    const now = clockFromStartOfHour();
    const platform = await startPlatform({ config: CHANGES_PLATFORM, now });
    running.push(platform);
    const proxy = await startFaultProxy(platform.url);
    running.push(proxy);
    const stack = await startLocalStack({
      stack: {
        gateway: {
          ...GATEWAY,
          platformUrl: proxy.url,
          providerKey: PROVIDER_KEY,
          platformTimeoutMs: 1000,
          reportTimeoutMs: 5000,
        },
      },
      redis: 'auto',
      sweepIntervalMs: 0,
      now,
    });
    running.push(stack);
    return { stack, platform, proxy };
  }

  it('still brings a suspension to the cache, and the usage allowed before it is reported', async () => {
    const { stack, platform, proxy } = await startBehindSlowProxy();
    const send = caller(stack, 'key-hundred');
    expect(await callTimes(send, 3)).toEqual([200, 200, 200]);
    // Their window delivered and closed: the next call opens a new one.
    await sleep(WINDOW_SECONDS * 1000 + 500);
    proxy.setLatency(LATENCY_MS);
    platform.setApplicationState(SERVICE, 'app-hundred', 'suspended');
    // The re-check takes the platform's 1.2 s on top of the window.
    const elapsed = await timeUntil(send, 403, WINDOW_BOUND_MS + LATENCY_MS);
    printTime('suspend behind a 1.2 s platform, no webhook', elapsed);
    await stack.flush();
    const allowed = platform.usage(SERVICE, 'app-hundred', 'hits', 'hour');
    expect(allowed).toBeGreaterThan(3);
    expect(await callTimes(send, 5)).toEqual(Array(5).fill(403));
    const result = await stack.flush();
    expect(result.unreported).toBe(0);
    expect(platform.usage(SERVICE, 'app-hundred', 'hits', 'hour')).toBe(allowed);
  });

  it('reports the usage when the re-check gets no answer at all', async () => {
    const { stack, platform, proxy } = await startBehindSlowProxy();
    const send = caller(stack, 'key-hundred');
    expect(await callTimes(send, 2)).toEqual([200, 200]);
    await stack.flush();
    proxy.setFault('hang', 'auth');
    expect(await callTimes(send, 4)).toEqual([200, 200, 200, 200]);
    const result = await stack.flush();
    expect(result.unreported).toBe(0);
    expect(platform.usage(SERVICE, 'app-hundred', 'hits', 'hour')).toBe(6);
    expect(stack.metrics().ReportedUnverified).toBe(1);
  });
});
