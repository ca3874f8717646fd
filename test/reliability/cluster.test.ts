/**
 * Sharded Redis under traffic, through the real local stack (gateway, authorizer, SNS endpoint, queue,
 * reporter, local platform over HTTP) on a local Redis Cluster:
 * - resharding: slots holding live credentials move between primaries while calls run; after the
 *   flush the platform's counters equal the allowed calls and no limit is passed;
 * - failover: a primary is killed under traffic and its replica promoted; every call is answered
 *   within the deadlines, the sweep keeps working meanwhile, and nothing allowed goes unreported.
 */
import http from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, describe, expect, it } from 'vitest';
import { credentialKeys } from '../../core/budget/keys';
import { REDIS_COMMAND_TIMEOUT_MS } from '../../core/budget/redis-client';
import { credentialIdOf } from '../../core/credentials';
import { firstCallWaitMs } from '../../core/decision/access';
import { METRIC } from '../../core/observability/observability';
import type { AccessConfig } from '../../core/settings/config';
import type { PlatformConfig } from '../../local/platform';
import { terminateProcess } from '../../local/redis';
import { type LocalStack, startLocalStack } from '../../local/stack';
import { ClusterAdmin } from '../support/cluster-admin';
import { awayFromHourEnd } from '../support/hour-margin';
import { startRedisTopology, type TestRedis } from '../support/redis-topology';
import { type Application, ROUTES, SERVICE_ID, type ServiceFixture, serviceFixture } from './support/fixture';
import { reliabilitySeed, seededRandom } from './support/seed';

const PLATFORM_TIMEOUT_MS = 1000;
const WORKERS = 8;
const REQUEST_TIMEOUT_MS = 10_000;
/** Time for the callers to take every application to its limit once the slots have moved. */
const LIMITS_REACHED_WITHIN_MS = 90_000;
/** The resharding run's calls all fall in one hour: it starts no later than this before the hour ends. */
const HOUR_END_MARGIN_MS = LIMITS_REACHED_WITHIN_MS + 30_000;

/**
 * The slowest answer the authorizer's own deadlines allow, however Redis fails: a wait for a
 * reconnecting client and a cache command (one command timeout each), the first-call lock's wait, then
 * the platform. Each deadline is a timer on a loaded event loop and may run late by as much as it
 * lasts, so the bound is twice that: a functional bound (answered within the deadlines, not hung),
 * not a speed target (speed is `npm run bench`'s). It stays below the callers' request timeout, so a
 * hang still fails.
 */
function answerBoundMs(config: AccessConfig): number {
  const deadlines = 2 * REDIS_COMMAND_TIMEOUT_MS + firstCallWaitMs(config) + config.platformTimeoutMs;
  const bound = 2 * deadlines;
  if (bound >= REQUEST_TIMEOUT_MS) throw new Error(`answer bound ${bound} ms would not catch a hang`);
  return bound;
}
/** A flush that left nothing behind: no message waiting or dead, all usage reported and accepted. */
const FLUSHED_CLEAN = { queued: 0, deadLetters: 0, unreported: 0, notAccepted: [] };

let redis: TestRedis | undefined;
let stack: LocalStack | undefined;
let admin: ClusterAdmin | undefined;
let runningTraffic: Traffic | undefined;
const agent = new http.Agent({ keepAlive: true, maxSockets: WORKERS });

afterEach(async () => {
  // A test that failed with its callers still running: the stack stops taking calls only once they stop.
  await runningTraffic?.stop();
  await stack?.stop();
  admin?.close();
  await redis?.stop();
  runningTraffic = undefined;
  stack = undefined;
  admin = undefined;
  redis = undefined;
});

function get(url: string, key: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const request = http.get(
      url,
      { agent, headers: { apikey: key }, timeout: REQUEST_TIMEOUT_MS },
      (response) => {
        response.resume();
        response.on('end', () => resolve(response.statusCode ?? 0));
        response.on('error', reject);
      },
    );
    request.on('timeout', () => request.destroy(new Error(`no answer within ${REQUEST_TIMEOUT_MS} ms`)));
    request.on('error', reject);
  });
}

/** The fixture's applications on one plan with an hourly limit of `limit` hits (none when undefined). */
function platformWithLimit(fixture: ServiceFixture, limit: number | undefined): PlatformConfig {
  const [service] = fixture.platformConfig.services;
  if (!service) throw new Error('the fixture has no service');
  const limits = limit === undefined ? [] : [{ metric: 'hits', period: 'hour' as const, value: limit }];
  return {
    services: [
      {
        ...service,
        plans: [{ name: 'Plan', limits }],
        applications: service.applications.map((application) => ({ ...application, plan: 'Plan' })),
      },
    ],
  };
}

async function startStackOnCluster(
  fixture: ServiceFixture,
  limit: number | undefined,
  reportWindowSeconds: number,
  replicasPerPrimary: number,
): Promise<{ stack: LocalStack; redis: TestRedis; admin: ClusterAdmin }> {
  redis = await startRedisTopology('cluster', { replicasPerPrimary, nodeTimeoutMs: 2000 });
  const nodes = redis.cluster?.nodes ?? [];
  admin = new ClusterAdmin(nodes);
  stack = await startLocalStack({
    stack: {
      platform: platformWithLimit(fixture, limit),
      gateway: {
        serviceId: SERVICE_ID,
        mappingRules: ROUTES,
        routes: ['GET /v1/words/{word}', 'GET /v1/sentences/{word}'],
        reportWindowSeconds,
        platformTimeoutMs: PLATFORM_TIMEOUT_MS,
        // The first calls of every application come from one address at once: this suite is about the
        // cluster, not the first-call gate's share per address.
        unseenCredentialCallsPerSecond: 100_000,
      },
    },
    redis: { cluster: nodes.map(({ host, port }) => ({ host, port })) },
    sweepIntervalMs: 0,
  });
  return { stack, redis, admin };
}

interface Traffic {
  readonly allowed: Map<string, number>;
  /** Applications refused at least once: they reached their limit. */
  readonly refused: Set<string>;
  readonly statuses: Map<number, number>;
  readonly slowest: () => number;
  readonly calls: () => number;
  readonly errors: string[];
  stop(): Promise<void>;
}

/** WORKERS callers, each calling a random application in turn until stopped. */
function startTraffic(url: string, apps: readonly Application[], seed: number): Traffic {
  const random = seededRandom(seed);
  const allowed = new Map<string, number>();
  const refused = new Set<string>();
  const statuses = new Map<number, number>();
  const errors: string[] = [];
  let slowest = 0;
  let running = true;
  const worker = async () => {
    while (running) {
      const app = apps[Math.floor(random() * apps.length)] as Application;
      const startedAt = performance.now();
      try {
        const status = await get(`${url}/v1/words/w.json`, app.userKey);
        slowest = Math.max(slowest, performance.now() - startedAt);
        statuses.set(status, (statuses.get(status) ?? 0) + 1);
        if (status === 200) allowed.set(app.id, (allowed.get(app.id) ?? 0) + 1);
        if (status === 403) refused.add(app.id);
      } catch (error) {
        errors.push(String(error));
      }
    }
  };
  const workers = Array.from({ length: WORKERS }, worker);
  return {
    allowed,
    refused,
    statuses,
    errors,
    slowest: () => slowest,
    calls: () => [...statuses.values()].reduce((sum, n) => sum + n, 0) + errors.length,
    async stop() {
      running = false;
      await Promise.all(workers);
    },
  };
}

function slotKeyOf(app: Application): string {
  return credentialKeys(SERVICE_ID, credentialIdOf(SERVICE_ID, { kind: 'user_key', userKey: app.userKey }))
    .app;
}

describe('Redis Cluster under traffic', () => {
  it('moves slots holding live credentials while calls run: counters equal the allowed calls, no limit passed', {
    timeout: 180_000 + HOUR_END_MARGIN_MS,
  }, async () => {
    // The limit is hourly and the clock real: a run across the hour's end would see every application
    // allowed again after it and its usage counted in the next hour (CI once read 38 calls over).
    await awayFromHourEnd(HOUR_END_MARGIN_MS);
    const LIMIT = 30;
    const fixture = serviceFixture(12);
    const { stack, admin } = await startStackOnCluster(fixture, LIMIT, 1, 0);
    const platform = stack.platform;
    if (!platform) throw new Error('the stack started no local platform');
    const [gateway] = stack.gateways;
    if (!gateway) throw new Error('the stack has no gateway');
    for (const app of fixture.active)
      expect(await get(`${stack.gatewayUrl}/v1/words/w.json`, app.userKey)).toBe(200);

    const traffic = startTraffic(stack.gatewayUrl, fixture.active, reliabilitySeed('cluster resharding'));
    runningTraffic = traffic;
    let moves = 0;
    for (const app of fixture.active) {
      const slot = await admin.slotOf(slotKeyOf(app));
      const owner = await admin.ownerOf(slot);
      const target = (await admin.primaries()).find((primary) => primary.id !== owner.id);
      if (!target) throw new Error('no other primary');
      await admin.moveSlot(slot, target);
      moves++;
      await sleep(100);
    }
    // Every application reaches its limit. A machine too slow for that within the deadline fails here,
    // with what the callers saw, rather than as a test timeout.
    const deadline = Date.now() + LIMITS_REACHED_WITHIN_MS;
    while (traffic.refused.size < fixture.active.length) {
      if (Date.now() > deadline) {
        throw new Error(
          `${traffic.refused.size} of ${fixture.active.length} applications reached their limit within ` +
            `${LIMITS_REACHED_WITHIN_MS} ms: ${traffic.calls()} calls ` +
            `${JSON.stringify(Object.fromEntries(traffic.statuses))}, errors ${traffic.errors.slice(0, 3)}`,
        );
      }
      await sleep(100);
    }
    await traffic.stop();

    const flushed = await stack.flush();
    expect(traffic.errors).toEqual([]);
    expect([...traffic.statuses.keys()].sort()).toEqual([200, 403]);
    expect(flushed).toEqual(FLUSHED_CLEAN);
    expect(traffic.slowest()).toBeLessThan(answerBoundMs(gateway.config));
    // A cache command that outlived its timeout (a slot held open longer than it) went to the platform
    // as well: the README's "over, never under" case, and the platform then decides without the usage
    // still pending in Redis. Without one, counters equal the allowed calls and every limit holds.
    const timedOut = stack.metrics()[METRIC.cacheUnavailable] ?? 0;
    const counts = fixture.active.map((app) => ({
      app: app.id,
      allowed: (traffic.allowed.get(app.id) ?? 0) + 1,
      reported: platform.usage(SERVICE_ID, app.id, 'hits', 'hour'),
    }));
    console.log(
      `[cluster resharding] ${moves} slots moved under ${traffic.calls()} calls ` +
        `(${JSON.stringify(Object.fromEntries(traffic.statuses))}); cache commands timed out: ${timedOut}; ` +
        `slowest answer ${traffic.slowest().toFixed(0)} ms; over-counted ` +
        `${counts.reduce((sum, { allowed, reported }) => sum + reported - allowed, 0)}`,
    );
    let overCounted = 0;
    for (const { app, allowed, reported } of counts) {
      expect(reported, app).toBeGreaterThanOrEqual(allowed);
      expect(allowed, app).toBeLessThanOrEqual(LIMIT + timedOut);
      overCounted += reported - allowed;
    }
    expect(overCounted).toBeLessThanOrEqual(timedOut);
    if (timedOut === 0) {
      for (const { app, allowed, reported } of counts) {
        expect(reported, app).toBe(allowed);
        expect(allowed, app).toBeLessThanOrEqual(LIMIT);
      }
    }
  });

  it('keeps answering while a primary is killed and its replica promoted, and loses no allowed call', {
    timeout: 180_000,
  }, async () => {
    const fixture = serviceFixture(12);
    const { stack, redis, admin } = await startStackOnCluster(fixture, undefined, 60, 1);
    const platform = stack.platform;
    if (!platform) throw new Error('the stack started no local platform');
    const [gateway] = stack.gateways;
    if (!gateway) throw new Error('the stack has no gateway');
    for (const app of fixture.active)
      expect(await get(`${stack.gatewayUrl}/v1/words/w.json`, app.userKey)).toBe(200);
    // The sweep asserted below is a warm one, as a scheduled sweep mostly is: its client connected before
    // the kill. A cold client's first connect during a failover is the cluster client suite's case
    // (test/integration/redis-cluster-client.test.ts): here it would add the connect's load-dependent
    // time, not what the sweep does with a shard that has no primary.
    await gateway.sweepAll();

    const traffic = startTraffic(stack.gatewayUrl, fixture.active, reliabilitySeed('cluster failover'));
    runningTraffic = traffic;
    await sleep(500);
    const [victimApp] = fixture.active as [Application];
    const slot = await admin.slotOf(slotKeyOf(victimApp));
    const owner = await admin.ownerOf(slot);
    const victim = redis.cluster?.nodes.find((node) => node.port === owner.port);
    if (!victim) throw new Error('the slot owner is no node of ours');
    const killedAt = performance.now();
    await terminateProcess(victim.child, 'SIGKILL');
    // The sweep while the shard has no primary: the others' pending usage is still found and reported.
    const sweep = await gateway.sweepAll();
    expect(sweep.found).toBeGreaterThan(0);
    const promoted = await admin.waitForFailover(slot, owner, 30_000);
    const failoverMs = performance.now() - killedAt;
    await sleep(1500);
    await traffic.stop();

    // Back on the cache: the promoted replica answers the dead primary's credentials.
    const authreps = platform.stats().authrep;
    for (let i = 0; i < 10; i++)
      expect(await get(`${stack.gatewayUrl}/v1/words/w.json`, victimApp.userKey)).toBe(200);
    expect(platform.stats().authrep).toBe(authreps);
    traffic.allowed.set(victimApp.id, (traffic.allowed.get(victimApp.id) ?? 0) + 10);

    expect(traffic.errors).toEqual([]);
    expect([...traffic.statuses.keys()]).toEqual([200]);
    expect(traffic.slowest()).toBeLessThan(answerBoundMs(gateway.config));
    expect(await stack.flush()).toEqual(FLUSHED_CLEAN);
    let overCounted = 0;
    for (const app of fixture.active) {
      const allowed = (traffic.allowed.get(app.id) ?? 0) + 1;
      // Every hour's usage: a run across the hour's end counts its calls in two.
      const reported = platform.usage(SERVICE_ID, app.id, 'hits', 'eternity');
      expect(reported, app.id).toBeGreaterThanOrEqual(allowed);
      overCounted += reported - allowed;
    }
    // At least once: a call whose script ran on the killed primary (and reached its replica) but whose
    // answer was lost went to the platform too. At most one such call per caller in flight at the kill.
    expect(overCounted).toBeLessThanOrEqual(WORKERS);
    console.log(
      `[cluster failover] replica ${promoted.port} promoted ${failoverMs.toFixed(0)} ms after the kill; ` +
        `${traffic.calls()} calls, slowest ${traffic.slowest().toFixed(0)} ms; ` +
        `sweep during the failover found ${sweep.found}; over-counted ${overCounted}`,
    );
  });
});
