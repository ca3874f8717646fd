/**
 * One test per failure: Redis killed or hanging, the platform failing on a first call in each failure
 * mode, the platform failing during reporting, SNS throttling, and a reporter that dies between the
 * platform's 202 and its clean-up. Every part is real (redis-server, the local platform over HTTP, the
 * SNS endpoint through the SDK client, the local queue); the faults are injected on the lines between
 * them (support/harness.ts).
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, describe, expect, it } from 'vitest';
import { credentialKeys } from '../../core/budget/keys';
import { REDIS_COMMAND_TIMEOUT_MS, REDIS_CONNECT_TIMEOUT_MS } from '../../core/budget/redis-client';
import { METRIC } from '../../core/observability/observability';
import { THROTTLING } from '../../local/sns-endpoint';
import { usageIn } from '../unit/core/fakes';
import type { Answer } from './support/answers';
import { countingMetrics } from './support/capture';
import { SERVICE_ID } from './support/fixture';
import { type Harness, type HarnessOptions, reporterDeath, startHarness } from './support/harness';

/** Scheduling slack on a loaded 2-core CI machine, added to the product's own deadlines. */
const MARGIN_MS = 750;
/** The authorizer Lambda's timeout in the CDK stack (lib/api-access-authorizer.ts). */
const AUTHORIZER_LAMBDA_TIMEOUT_MS = 10_000;

let harness: Harness | undefined;

async function start(options: HarnessOptions): Promise<Harness> {
  harness = await startHarness(options);
  return harness;
}

afterEach(async () => {
  await harness?.stop();
  harness = undefined;
});

async function timed(call: () => Promise<Answer>): Promise<{ answer: Answer; elapsedMs: number }> {
  const startedAt = performance.now();
  const answer = await call();
  return { answer, elapsedMs: performance.now() - startedAt };
}

/** Calls `times` times, expecting each answer to be `kind`; returns how many were allowed. */
async function callsOf(h: Harness, userKey: string, times: number, kind: Answer['kind'] = 'allow') {
  for (let i = 0; i < times; i++) expect((await h.call(userKey, `w${i % 5}`)).kind).toBe(kind);
  return kind === 'allow' ? times : 0;
}

describe('Redis faults', () => {
  it('answers through the platform while redis-server is killed, and goes back to the cache once it is back', async () => {
    const h = await start({ apps: 3, overrides: { reportWindowSeconds: 60, platformTimeoutMs: 1000 } });
    const keys = h.fixture.active.map((app) => app.userKey);
    for (const key of keys) await callsOf(h, key, 10);
    const cachedAuthreps = h.platform.stats().authrep;
    expect(cachedAuthreps).toBe(keys.length);

    await h.redisServer.kill();
    const outage: number[] = [];
    for (let round = 0; round < 3; round++) {
      for (const key of keys) {
        const { answer, elapsedMs } = await timed(() => h.call(key));
        expect(answer.kind).toBe('allow');
        outage.push(elapsedMs);
      }
    }
    expect((await h.call('never:{issued}')).kind).toBe('unauthorized');
    // Each call went to the platform, and authrep recorded it there.
    expect(h.platform.stats().authrep).toBe(cachedAuthreps + 3 * keys.length + 1);
    const slowest = Math.max(...outage);
    expect(slowest).toBeLessThan(REDIS_CONNECT_TIMEOUT_MS + h.config.platformTimeoutMs + MARGIN_MS);

    await h.redisServer.restart();
    // The restarted server is empty: one miss per key, then hits. Bounded wait for the reconnect.
    let rounds = 0;
    let authreps = -1;
    while (authreps !== h.platform.stats().authrep && rounds < 30) {
      authreps = h.platform.stats().authrep;
      for (const key of keys) expect((await h.call(key)).kind).toBe('allow');
      rounds++;
    }
    const backOnCache = h.platform.stats().authrep;
    for (const key of keys) await callsOf(h, key, 20);
    expect(h.platform.stats().authrep).toBe(backOnCache);
    console.log(
      `[redis killed] slowest answer while down ${slowest.toFixed(0)} ms; cache hits again after ${rounds} rounds`,
    );
  });

  it('counts each call once when the connection to Redis drops between calls', async () => {
    const h = await start({ apps: 1, overrides: { reportWindowSeconds: 60 } });
    const [app] = h.fixture.active;
    if (!app) throw new Error('no application');
    let allowed = await callsOf(h, app.userKey, 5);
    const authreps = h.platform.stats().authrep;
    h.redisLine.cut();
    // The cache cannot answer: each call is an authrep, which records it at the platform.
    allowed += await callsOf(h, app.userKey, 3);
    expect(h.platform.stats().authrep).toBe(authreps + 3);
    h.redisLine.restore();
    await sleep(2500);
    allowed += await callsOf(h, app.userKey, 5);
    expect(await h.flush()).toEqual([]);
    // A command the authorizer gave up on must not run once the connection is back: the call it
    // belonged to was already recorded by the authrep.
    expect(h.reportedHits(app.id)).toBe(allowed);
  });

  it('answers within the Redis command timeout plus the platform timeout while Redis hangs, and loses nothing', async () => {
    const h = await start({ apps: 1, overrides: { reportWindowSeconds: 60, platformTimeoutMs: 1000 } });
    const [app] = h.fixture.active;
    if (!app) throw new Error('no application');
    let allowed = await callsOf(h, app.userKey, 5);
    await h.redisServer.inspector.call('CLIENT', 'PAUSE', '1500', 'ALL');
    const { answer, elapsedMs } = await timed(() => h.call(app.userKey));
    expect(answer.kind).toBe('allow');
    allowed++;
    expect(elapsedMs).toBeLessThan(REDIS_COMMAND_TIMEOUT_MS + h.config.platformTimeoutMs + MARGIN_MS);
    await sleep(1600);
    allowed += await callsOf(h, app.userKey, 5);
    expect(await h.flush()).toEqual([]);
    const reported = h.reportedHits(app.id);
    // The timed-out script may still run once Redis resumes: that call is then counted twice (the
    // platform's authrep and the cache's pending usage). Over, never under.
    expect(reported).toBeGreaterThanOrEqual(allowed);
    expect(reported - allowed).toBeLessThanOrEqual(1);
    console.log(
      `[redis hangs] answered in ${elapsedMs.toFixed(0)} ms; reported - allowed = ${reported - allowed}`,
    );
  });
});

describe('platform down on a first call', () => {
  it('strict: refuses a 503 with a Deny (403), never a 401 or a crash, and allows once the platform is back', async () => {
    const h = await start({ apps: 1, overrides: { failureMode: 'strict', platformTimeoutMs: 500 } });
    const [app] = h.fixture.active;
    if (!app) throw new Error('no application');
    h.platformLine.setFault('unavailable', 'auth');
    const { answer, elapsedMs } = await timed(() => h.call(app.userKey));
    expect(answer).toMatchObject({ kind: 'deny', reason: 'platform_unavailable' });
    expect(elapsedMs).toBeLessThan(h.config.platformTimeoutMs + MARGIN_MS);
    expect(h.platformLine.stats().refused).toBe(1);
    h.platformLine.setFault('pass');
    expect((await h.call(app.userKey)).kind).toBe('allow');
    expect(await h.flush()).toEqual([]);
    expect(h.reportedHits(app.id)).toBe(1);
  });

  it('strict: refuses a platform that does not answer within the platform timeout', async () => {
    const h = await start({ apps: 1, overrides: { failureMode: 'strict', platformTimeoutMs: 400 } });
    const [app] = h.fixture.active;
    if (!app) throw new Error('no application');
    h.platformLine.setFault('hang', 'auth');
    const { answer, elapsedMs } = await timed(() => h.call(app.userKey));
    expect(answer).toMatchObject({ kind: 'deny', reason: 'platform_unavailable' });
    expect(h.platformLine.stats().hung).toBe(1);
    expect(elapsedMs).toBeLessThan(h.config.platformTimeoutMs + MARGIN_MS);
    expect(elapsedMs).toBeLessThan(AUTHORIZER_LAMBDA_TIMEOUT_MS);
    console.log(`[strict, platform hangs] refused after ${elapsedMs.toFixed(0)} ms (timeout 400 ms)`);
  });

  it('resilient: keeps applying the last cached answer, refuses what it never saw, reports later', async () => {
    const h = await start({
      apps: 2,
      overrides: { failureMode: 'resilient', platformTimeoutMs: 300, reportTimeoutMs: 300 },
    });
    const [known, neverSeen] = h.fixture.active;
    const [suspended] = h.fixture.suspended;
    if (!known || !neverSeen || !suspended) throw new Error('fixture too small');
    let allowed = await callsOf(h, known.userKey, 3);
    expect(await h.call(suspended.userKey)).toMatchObject({ kind: 'deny', reason: 'application_not_active' });

    h.platformLine.setFault('hang', 'all');
    // A new endpoint of a cached credential is a miss, answered from the credential's snapshot.
    for (let i = 0; i < 4; i++) {
      const { answer, elapsedMs } = await timed(() => h.call(known.userKey, `s${i}`, 'sentences'));
      expect(answer.kind).toBe('allow');
      expect(elapsedMs).toBeLessThan(h.config.platformTimeoutMs + MARGIN_MS);
      allowed++;
    }
    allowed += await callsOf(h, known.userKey, 3);
    expect(await h.call(suspended.userKey)).toMatchObject({ kind: 'deny', reason: 'application_not_active' });
    expect(await h.call(neverSeen.userKey)).toMatchObject({ kind: 'deny', reason: 'platform_unavailable' });

    expect((await h.reporterContainer().sweepAll()).failed).toBe(1);
    expect(h.reportedHits(known.id)).toBeLessThan(allowed);
    h.platformLine.setFault('pass');
    expect(await h.flush()).toEqual([]);
    expect(h.reportedHits(known.id)).toBe(allowed);
    expect(h.reportedHits(neverSeen.id)).toBe(0);
  });

  it('allow: lets a credential it never saw through while the platform is down, and reports it once back', async () => {
    const h = await start({ apps: 1, overrides: { failureMode: 'allow', platformTimeoutMs: 300 } });
    const [app] = h.fixture.active;
    if (!app) throw new Error('no application');
    h.platformLine.setFault('unavailable', 'all');
    const allowed = await callsOf(h, app.userKey, 6);
    expect(h.reportedHits(app.id)).toBe(0);
    expect((await h.reporterContainer().sweepAll()).failed).toBe(1);
    h.platformLine.setFault('pass');
    expect(await h.flush()).toEqual([]);
    expect(h.reportedHits(app.id)).toBe(allowed);
    expect((await h.call(app.userKey)).kind).toBe('allow');
  });

  it('allow: a key the platform never issued, let through during an outage, costs no other credential its usage', async () => {
    const h = await start({
      apps: 2,
      overrides: { failureMode: 'allow', platformTimeoutMs: 300, reportWindowSeconds: 60 },
    });
    const [first, second] = h.fixture.active;
    if (!first || !second) throw new Error('fixture too small');
    let allowedFirst = await callsOf(h, first.userKey, 3);
    h.platformLine.setFault('unavailable', 'all');
    allowedFirst += await callsOf(h, first.userKey, 3);
    const allowedSecond = await callsOf(h, second.userKey, 3);
    await callsOf(h, 'forged:{key}', 3);
    h.platformLine.setFault('pass');
    await h.flush();
    // The forged key is refused as soon as the platform can tell.
    expect((await h.call('forged:{key}')).kind).toBe('unauthorized');
    const dropped = JSON.stringify(h.platform.reportErrors());
    expect(h.reportedHits(first.id), `platform report errors: ${dropped}`).toBe(allowedFirst);
    expect(h.reportedHits(second.id), `platform report errors: ${dropped}`).toBe(allowedSecond);
  });
});

describe('reporting faults', () => {
  it('platform 5xx during reporting: the records fail, come back, and nothing is lost', async () => {
    const metrics = countingMetrics();
    const h = await start({ apps: 5, metrics, overrides: { reportWindowSeconds: 60 } });
    const apps = h.fixture.active;
    const allowed = new Map(apps.map((app) => [app.id, 0]));
    for (const app of apps) allowed.set(app.id, await callsOf(h, app.userKey, 20));
    expect(h.queue.stats().queued).toBe(apps.length);

    h.platformLine.setFault('unavailable', 'report');
    await h.queue.deliverNow();
    expect(h.queue.stats()).toMatchObject({ queued: apps.length, failedDeliveries: apps.length, deleted: 0 });
    expect(metrics.total(METRIC.reportFailed)).toBeGreaterThan(0);
    for (const app of apps) expect(h.reportedHits(app.id)).toBe(1);
    // Calls go on meanwhile; their usage waits behind the in-flight usage.
    for (const app of apps)
      allowed.set(app.id, (allowed.get(app.id) ?? 0) + (await callsOf(h, app.userKey, 10)));

    h.platformLine.setFault('pass');
    await h.queue.drain();
    expect(h.queue.stats()).toMatchObject({ queued: 0, deadLetters: 0, deleted: apps.length });
    // The redelivered records report the in-flight usage, then what joined pending meanwhile.
    for (const app of apps) expect(h.reportedHits(app.id)).toBe(allowed.get(app.id));
    expect(await h.flush()).toEqual([]);
    for (const app of apps) expect(h.reportedHits(app.id)).toBe(allowed.get(app.id));
  });

  it('SNS ThrottlingException: the usage stays pending and the sweep flushes it', async () => {
    const metrics = countingMetrics();
    let clockOffsetMs = 0;
    const h = await start({
      apps: 3,
      metrics,
      overrides: { reportWindowSeconds: 60 },
      now: () => Date.now() + clockOffsetMs,
    });
    const apps = h.fixture.active;
    // Enough refusals for every publish attempt of the SDK's standard retries.
    h.sns.failNextPublishes(apps.length * 3, THROTTLING);
    const allowed = new Map<string, number>();
    for (const app of apps) allowed.set(app.id, await callsOf(h, app.userKey, 8));
    expect(h.sns.stats().published).toBe(0);
    expect(metrics.total(METRIC.reportPublishFailed)).toBe(apps.length);
    expect(h.queue.stats().sent).toBe(0);
    for (const app of apps) {
      expect(
        await usageIn(
          h.redisServer.inspector,
          credentialKeys(SERVICE_ID, h.credentialId(app.userKey)).pending,
        ),
      ).toEqual({
        get_word: 7,
      });
    }

    // Too young for the sweep: it waits a few report windows for a message that may still come.
    expect((await h.reporterContainer().sweep()).found).toBe(0);
    clockOffsetMs = 4 * 60_000;
    expect(await h.reporterContainer().sweep()).toMatchObject({ found: apps.length, flushed: apps.length });
    for (const app of apps) expect(h.reportedHits(app.id)).toBe(allowed.get(app.id));
  });

  it('the reporter dies after the POST and before its clean-up: reported again on the retry, nothing lost', async () => {
    const death = reporterDeath();
    const h = await start({
      apps: 3,
      overrides: { reportWindowSeconds: 60 },
      reporterPlatform: death.reporterPlatform,
    });
    const apps = h.fixture.active;
    const allowed = new Map<string, number>();
    for (const app of apps) allowed.set(app.id, await callsOf(h, app.userKey, 10));

    death.arm();
    await h.queue.deliverNow();
    expect(h.reporterContainer().dead).toBe(true);
    // The platform has the usage; Redis still holds it in flight, under the dead container's lease.
    const inFlightAtDeath = new Map<string, number>();
    for (const app of apps) {
      expect(h.reportedHits(app.id)).toBe(allowed.get(app.id));
      const keys = credentialKeys(SERVICE_ID, h.credentialId(app.userKey));
      const inFlight = (await usageIn(h.redisServer.inspector, keys.inFlight)).get_word;
      expect(inFlight).toBe(9);
      expect(await h.redisServer.inspector.exists(keys.lease)).toBe(1);
      inFlightAtDeath.set(app.id, inFlight);
    }
    expect(h.queue.stats()).toMatchObject({ queued: apps.length, deleted: 0 });

    h.replaceReporter();
    // The dead container's lease runs out (fast-forwarded: it is a Redis PX of at least a minute).
    for (const app of apps)
      await h.redisServer.inspector.del(credentialKeys(SERVICE_ID, h.credentialId(app.userKey)).lease);
    await h.queue.drain();
    expect(h.queue.stats()).toMatchObject({ queued: 0, deadLetters: 0 });
    expect(await h.flush()).toEqual([]);

    let lost = 0;
    let twice = 0;
    for (const app of apps) {
      const reported = h.reportedHits(app.id);
      const expected = allowed.get(app.id) ?? 0;
      lost += Math.max(0, expected - reported);
      twice += reported - expected;
      // At-least-once: the in-flight usage at the death is what the retry reports a second time.
      expect(reported - expected).toBe(inFlightAtDeath.get(app.id));
    }
    expect(lost).toBe(0);
    console.log(
      `[reporter dies after POST] lost 0, reported twice ${twice} (the in-flight usage at the death)`,
    );
  });
});
