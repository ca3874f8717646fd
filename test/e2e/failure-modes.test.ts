/**
 * A platform outage longer than strict's bound (strictTrustSeconds), through the whole local stack over
 * HTTP: a real redis-server, the local platform behind a fault proxy that answers 503 for the outage,
 * and one gateway per failure mode. `strict` refuses a hot key once the platform's last confirmation is
 * older than the bound; `resilient` keeps allowing it within its limits; `allow` also admits a key it
 * never saw. Every call that was allowed reaches the platform once it is back.
 */
import { afterEach, expect, it } from 'vitest';
import type { FailureMode } from '../../core/settings/settings';
import { startPlatform } from '../../local/platform';
import { startLocalStack } from '../../local/stack';
import { startFaultProxy } from '../reliability/support/fault-proxy';
import { call, clockFromStartOfHour } from './fixtures';

const PROVIDER_KEY = 'pk-modes';
const TRUST_SECONDS = 30;
const HOURLY_LIMIT = 8;
const MODES: readonly FailureMode[] = ['strict', 'resilient', 'allow'];

/** One service per failure mode, each with a key called before the outage and one never called before. */
const PLATFORM = {
  services: MODES.map((mode) => ({
    id: `svc-${mode}`,
    providerKey: PROVIDER_KEY,
    authentication: 'user_key',
    metrics: [{ name: 'hits' }],
    plans: [{ name: 'Eight', limits: [{ metric: 'hits', period: 'hour', value: HOURLY_LIMIT }] }],
    applications: [
      { id: `app-hot-${mode}`, userKey: `key-hot-${mode}`, plan: 'Eight' },
      { id: `app-new-${mode}`, userKey: `key-new-${mode}`, plan: 'Eight' },
    ],
  })),
};

const running: { stop(): Promise<unknown> }[] = [];
afterEach(async () => {
  for (const part of running.splice(0).reverse()) await part.stop();
});

it('an outage longer than the bound: strict refuses the hot key, resilient keeps it within its limits, allow admits a new key; nothing allowed is lost', async () => {
  const realTime = clockFromStartOfHour();
  let skippedMs = 0;
  const now = () => realTime() + skippedMs;
  const platform = await startPlatform({ config: PLATFORM, now });
  running.push(platform);
  const platformLine = await startFaultProxy(platform.url);
  running.push(platformLine);
  const stack = await startLocalStack({
    stack: {
      gateway: MODES.map((mode) => ({
        serviceId: `svc-${mode}`,
        basePath: `/${mode}`,
        routes: ['GET /v1/words/{word}'],
        platformUrl: platformLine.url,
        providerKey: PROVIDER_KEY,
        platformTimeoutMs: 500,
        failureMode: mode,
        strictTrustSeconds: TRUST_SECONDS,
      })),
    },
    redis: 'auto',
    sweepIntervalMs: 0,
    now,
  });
  running.push(stack);
  const allowed = new Map<string, number>();
  const callAs = async (mode: FailureMode, key: 'hot' | 'new') => {
    const url = `${stack.gateways[MODES.indexOf(mode)]?.url}/v1/words/w`;
    const answer = await call(url, { headers: { apikey: `key-${key}-${mode}` } });
    if (answer.status === 200) {
      const app = `app-${key}-${mode}`;
      allowed.set(app, (allowed.get(app) ?? 0) + 1);
    }
    return { status: answer.status, reason: answer.body.reason };
  };
  const ok = { status: 200, reason: undefined };
  const unavailable = { status: 403, reason: 'platform_unavailable' };

  // Before the outage: each hot key's first call (authrep) and the reporter's resync confirm it.
  for (const mode of MODES) for (let i = 0; i < 2; i++) expect(await callAs(mode, 'hot')).toEqual(ok);
  skippedMs += 20_000;
  // (The stack's gateways share one Redis: each one's sweep finds the others' budgets too and leaves
  // them to their own gateway, so the flush's `unreported` counts them; the platform's counts tell.)
  await stack.flush();
  const reportedAll = () => {
    for (const mode of MODES) {
      for (const key of ['hot', 'new']) {
        const app = `app-${key}-${mode}`;
        expect(platform.usage(`svc-${mode}`, app, 'hits', 'hour'), app).toBe(allowed.get(app) ?? 0);
      }
    }
  };
  reportedAll();

  platformLine.setFault('unavailable', 'all');
  // Within the bound of the resync (not of the first call): strict still decides from the cache.
  skippedMs += 20_000;
  for (const mode of MODES) expect(await callAs(mode, 'hot')).toEqual(ok);
  // Past the bound: strict asks the platform, which cannot answer.
  skippedMs += 15_000;
  expect(await callAs('strict', 'hot')).toEqual(unavailable);
  expect(await callAs('strict', 'new')).toEqual(unavailable);
  expect(await callAs('resilient', 'new')).toEqual(unavailable);
  expect(await callAs('allow', 'new')).toEqual(ok);
  expect(await callAs('allow', 'hot')).toEqual(ok);
  // Resilient decides from its cached limits however old they are: allowed up to the limit, then refused.
  while ((allowed.get('app-hot-resilient') ?? 0) < HOURLY_LIMIT) {
    expect(await callAs('resilient', 'hot')).toEqual(ok);
  }
  expect(await callAs('resilient', 'hot')).toMatchObject({ status: 403, reason: 'limits_exceeded' });
  expect(platformLine.stats().refused).toBeGreaterThan(0);

  platformLine.setFault('pass');
  expect(await callAs('strict', 'hot')).toEqual(ok);
  expect(await stack.flush()).toMatchObject({ queued: 0, deadLetters: 0 });
  reportedAll();
});
