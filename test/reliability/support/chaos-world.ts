/**
 * The product under steady load with faults injected at random: several authorizer instances and
 * reporter containers (each its own Redis and platform clients, as Lambdas have) on a Redis with
 * replicas (chaos-redis.ts), the local platform behind a fault proxy, SNS and SQS-like queues.
 *
 *   callers --> authorizers (K) --> Redis (failovers, cuts) ; platform line (outages)
 *                    \--> SNS --> queues (Q, each delivering to its own reporters; redeliveries)
 *   reporters (crash before the POST, inside it, after the sent mark) ; sweep (every second)
 *
 * A crashed reporter is gone at once (its Redis connection closed, its platform calls refused): its
 * batch comes back to the queue and its lease is left behind, as a killed Lambda's is. A new container
 * replaces it. At the end, once every process is idle, the leases of the dead are let run out (deleted:
 * no live process holds a lease then) and everything pending is flushed.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { SNSClient } from '@aws-sdk/client-sns';
import { serviceKeys } from '../../../core/budget/keys';
import type { RedisConnection } from '../../../core/budget/redis-client';
import { createRedisClient } from '../../../core/budget/redis-client';
import { SCRIPTS } from '../../../core/budget/scripts';
import { GIVE_BACK_SCRIPT } from '../../../core/budget/scripts/give-back-script';
import { REPORT_BATCH_SCRIPTS } from '../../../core/budget/scripts/report-batch-scripts';
import { type LogPort, METRIC } from '../../../core/observability/observability';
import { createPlatformClient, type PlatformClient } from '../../../core/platform/client';
import type { PlatformPort } from '../../../core/platform/types';
import type { AccessConfig } from '../../../core/settings/config';
import { createAuthorizerHandler } from '../../../lambdas/authorizer/handler';
import { createReporterHandler, createSweepHandler } from '../../../lambdas/reporter/handler';
import { type RunningPlatform, startPlatform } from '../../../local/platform';
import { LocalQueue } from '../../../local/queue';
import {
  LOCAL_AWS_CREDENTIALS,
  LOCAL_REGION,
  type SnsEndpoint,
  startSnsEndpoint,
} from '../../../local/sns-endpoint';
import { type Answer, type Authorizer, answerOf } from './answers';
import { type CountingMetrics, countingMetrics } from './capture';
import type { ChaosRedis } from './chaos-redis';
import { durableWrites } from './durable-writes';
import { type FaultProxy, startFaultProxy } from './fault-proxy';
import { accessConfig, SERVICE_ID, type ServiceFixture, serviceFixture } from './fixture';
import { keyEvent } from './request-events';

const silent: LogPort = { debug() {}, info() {}, warn() {}, error() {} };

/** Where a reporter dies: before its POST, inside it (after the platform's 202, before the sent mark), or after the mark. */
export type CrashPoint = 'before-post' | 'inside-post' | 'after-mark';

export interface ChaosWorldOptions {
  readonly redis: ChaosRedis;
  readonly apps: number;
  /** Applications (the first ones) on a plan with a hard limit of `hardLimit` hits, ever. */
  readonly limitedApps: number;
  readonly hardLimit: number;
  readonly authorizers: number;
  /** Queues, each with its own reporter container: reporters run in parallel. */
  readonly queues: number;
  readonly random: () => number;
  /** Chance of an SNS delivery reaching its queue twice (an SQS redelivery of a report). */
  readonly duplicateDelivery: number;
  /** Every script acknowledged only once a replica has its writes (durable-writes.ts). */
  readonly durable?: boolean;
}

interface ReporterContainer {
  readonly id: number;
  dead: boolean;
  readonly died: Promise<never>;
  die(): void;
  readonly reporter: (event: Parameters<ReturnType<typeof createReporterHandler>>[0]) => Promise<unknown>;
  readonly sweepAll: () => Promise<unknown>;
  close(): void;
}

export interface ChaosFigures {
  readonly allowed: number;
  readonly atPlatform: number;
  readonly lost: number;
  readonly countedTwice: number;
  readonly wrongAllows: number;
  readonly calls: number;
  readonly firstCalls: number;
  readonly refused: number;
  readonly crashes: Readonly<Record<CrashPoint, number>>;
  readonly duplicates: number;
  /** Batches (and their units) sent again although a report may have carried them (the metric). */
  readonly resentMaybeSent: number;
  readonly unitsResentMaybeSent: number;
  readonly settledByMark: number;
  /**
   * Calls the authorizer answered through the platform because a Redis command failed (a failover, a
   * cut): each may count twice, when its script ran but the answer was lost (over, never under).
   */
  readonly cacheFallbacks: number;
  /** Of those, the calls whose script may have run (command-fate.ts): only these may count twice. */
  readonly cacheAnswersLost: number;
  /** Calls allowed whose usage the authorizer could record nowhere (said in its log): lost by design. */
  readonly unrecorded: number;
  /** The units of the reports a reporter died inside of (after the platform's 202): the most a crash may count twice. */
  readonly unitsInCrashedPosts: number;
}

export interface ChaosWorld {
  readonly fixture: ServiceFixture;
  readonly platform: RunningPlatform;
  readonly platformLine: FaultProxy;
  /** Callers calling random applications through random authorizers until stopTraffic(). */
  startTraffic(callers: number): void;
  stopTraffic(): Promise<void>;
  /** The next report at `point` kills the reporter that makes it; resolves once one died there. */
  crashReporter(point: CrashPoint): Promise<void>;
  /** Waits for the queues and sweeps to be idle, lets dead leases run out, flushes everything pending. */
  settle(): Promise<string[]>;
  figures(): ChaosFigures;
  /** Errors the callers met (crashes of the authorizer; there must be none). */
  readonly errors: string[];
  stop(): Promise<void>;
}

export async function startChaosWorld(options: ChaosWorldOptions): Promise<ChaosWorld> {
  const { random, redis } = options;
  const base = serviceFixture(options.apps);
  const [service] = base.platformConfig.services;
  if (!service) throw new Error('the fixture has no service');
  const limited = new Set(base.active.slice(0, options.limitedApps).map((app) => app.id));
  const fixture: ServiceFixture = {
    ...base,
    platformConfig: {
      services: [
        {
          ...service,
          plans: [
            ...service.plans,
            { name: 'Hard', limits: [{ metric: 'hits', period: 'eternity', value: options.hardLimit }] },
          ],
          applications: service.applications.map((app) =>
            limited.has(app.id) ? { ...app, plan: 'Hard' } : app,
          ),
        },
      ],
    },
  };
  const metrics: CountingMetrics = countingMetrics();
  const platform = await startPlatform({ config: fixture.platformConfig, port: 0 });
  const platformLine = await startFaultProxy(platform.url);
  const sns: SnsEndpoint = await startSnsEndpoint();
  const queues: LocalQueue[] = [];
  let duplicates = 0;
  const topicArn = sns.addTopic('chaos-usage', (message) => {
    const queue = queues[Math.floor(random() * queues.length)];
    queue?.send(message.message, message.messageAttributes);
    if (random() < options.duplicateDelivery) {
      duplicates++;
      queues[Math.floor(random() * queues.length)]?.send(message.message, message.messageAttributes);
    }
  });
  const config: AccessConfig = accessConfig({
    fixture,
    platformUrl: platformLine.url,
    topicArn,
    overrides: { redis: redis.settings, reportWindowSeconds: 1, failureMode: 'resilient' },
  });
  const redisClients: RedisConnection[] = [];
  const platformClients: PlatformClient[] = [];
  const scriptNames = new Set(
    [...SCRIPTS, ...REPORT_BATCH_SCRIPTS, GIVE_BACK_SCRIPT].map((script) => script.name),
  );
  const redisClient = () => {
    const client = createRedisClient(redis.settings, { logger: silent });
    redisClients.push(client);
    return options.durable ? durableWrites(client, scriptNames) : client;
  };
  const platformClient = () => {
    const client = createPlatformClient({
      serviceId: SERVICE_ID,
      serviceAuth: { kind: 'provider_key', providerKey: fixture.providerKey },
      baseUrl: platformLine.url,
      timeoutMs: config.platformTimeoutMs,
      reportTimeoutMs: config.reportTimeoutMs,
    });
    platformClients.push(client);
    return client;
  };
  const snsClient = new SNSClient({
    endpoint: sns.url,
    region: LOCAL_REGION,
    credentials: LOCAL_AWS_CREDENTIALS,
  });
  const authorizers: Authorizer[] = Array.from({ length: options.authorizers }, () =>
    createAuthorizerHandler({
      config,
      redis: redisClient(),
      sns: snsClient,
      platform: platformClient(),
      logger: silent,
      metrics,
    }),
  );

  // Reporters, and the crash armed for the next report at its point.
  const crashes: Record<CrashPoint, number> = { 'before-post': 0, 'inside-post': 0, 'after-mark': 0 };
  let unitsInCrashedPosts = 0;
  let armed: { point: CrashPoint; done: () => void } | undefined;
  const crashAt = (point: CrashPoint, container: ReporterContainer): boolean => {
    if (armed?.point !== point || container.dead) return false;
    const { done } = armed;
    armed = undefined;
    crashes[point]++;
    container.die();
    done();
    return true;
  };
  let containerIds = 0;
  const newContainer = (): ReporterContainer => {
    const id = containerIds++;
    const client = redisClient();
    const platformPort = platformClient();
    let kill: (error: Error) => void = () => undefined;
    const died = new Promise<never>((_, reject) => {
      kill = reject;
    });
    died.catch(() => undefined);
    const container = {
      id,
      dead: false,
      died,
      die() {
        container.dead = true;
        client.disconnect();
        kill(new Error(`reporter ${id} died`));
      },
      close() {
        client.disconnect();
      },
    } as ReporterContainer;
    const dying: PlatformPort = {
      authorize: (credential, usage) => platformPort.authorize(credential, usage),
      authrep: (credential, usage) => platformPort.authrep(credential, usage),
      async report(transactions) {
        if (container.dead || crashAt('before-post', container)) return container.died;
        const outcome = await platformPort.report(transactions);
        if (outcome.kind === 'accepted' && crashAt('inside-post', container)) {
          unitsInCrashedPosts += transactions.reduce(
            (sum, transaction) => sum + Object.values(transaction.usage).reduce((a, b) => a + b, 0),
            0,
          );
          return container.died;
        }
        return outcome;
      },
    };
    // The acknowledgement is the write after the sent mark: a crash there leaves a batch marked sent.
    const crashing = new Proxy(client, {
      get(target, property, receiver) {
        const value = Reflect.get(target, property, receiver);
        if (property !== 'accessAcknowledge' || typeof value !== 'function') return value;
        return (...args: unknown[]) =>
          crashAt('after-mark', container) ? container.died : value.apply(target, args);
      },
    }) as RedisConnection;
    const deps = { config, redis: crashing, platform: dying, logger: silent, metrics };
    return Object.assign(container, {
      reporter: createReporterHandler(deps),
      sweepAll: createSweepHandler({ ...deps, sweepMinAgeMs: 2000 }),
    });
  };
  const containers: ReporterContainer[] = [];
  /** The live container of a queue; a dead one is replaced, as Lambda starts a new one. */
  const containerOf = (index: number): ReporterContainer => {
    let container = containers[index];
    if (!container || container.dead) {
      container = newContainer();
      containers[index] = container;
    }
    return container;
  };
  for (let i = 0; i < options.queues; i++) {
    queues.push(
      new LocalQueue({
        name: `chaos-usage-${i}`,
        deliveryDelayMs: 1000,
        visibilityTimeoutMs: 2000,
        maxReceiveCount: 20,
        consumer: async (event) => {
          const container = containerOf(i);
          return Promise.race([container.reporter(event), container.died]);
        },
      }),
    );
  }
  const sweeper = options.queues;
  let sweeping = true;
  const sweeps = (async () => {
    while (sweeping) {
      const container = containerOf(sweeper);
      await Promise.race([container.sweepAll(), container.died]).catch(() => undefined);
      await sleep(1000);
    }
  })();

  // Traffic.
  const allowed = new Map<string, number>();
  const seen = new Set<string>();
  const errors: string[] = [];
  let calls = 0;
  let firstCalls = 0;
  let refused = 0;
  let running = false;
  let callers: Promise<void>[] = [];
  /** New applications join over time (their first calls); most calls go to the ones already seen. */
  let unlocked = Math.min(options.limitedApps + 4, fixture.active.length);
  const pickApp = () => {
    if (unlocked < fixture.active.length && random() < 0.01) unlocked++;
    return fixture.active[Math.floor(random() * unlocked)] ?? fixture.active[0];
  };
  const caller = async () => {
    while (running) {
      const app = pickApp();
      if (!app) return;
      const authorizer = authorizers[Math.floor(random() * authorizers.length)] as Authorizer;
      const answer: Answer = await answerOf(authorizer, keyEvent(app.userKey));
      calls++;
      if (!seen.has(app.id)) {
        seen.add(app.id);
        firstCalls++;
      }
      if (answer.kind === 'allow') allowed.set(app.id, (allowed.get(app.id) ?? 0) + 1);
      else if (answer.kind === 'deny') refused++;
      else errors.push(answer.kind === 'crash' ? answer.detail : answer.kind);
    }
  };

  return {
    fixture,
    platform,
    platformLine,
    errors,
    startTraffic(count) {
      running = true;
      callers = Array.from({ length: count }, caller);
    },
    async stopTraffic() {
      running = false;
      await Promise.all(callers);
    },
    crashReporter(point) {
      return new Promise<void>((resolve) => {
        armed = { point, done: resolve };
      });
    },
    async settle() {
      armed = undefined;
      sweeping = false;
      await sweeps;
      // Deliveries under way end; the messages still queued stay for the drain below.
      await Promise.all(queues.map((queue) => queue.stop()));
      // No live process holds a lease now: those left are the dead reporters', whose time runs out.
      await redis.del(await redis.keys(serviceKeys(SERVICE_ID).pattern('lease')));
      // Every queue delivered until empty (dead containers are replaced on the way); what goes to the
      // dead-letter queue the sweep reports.
      await Promise.all(queues.map((queue) => queue.drain()));
      // The sweep takes usage older than its minimum age: the last calls' too, once that has passed.
      await sleep(2500);
      const final = newContainer();
      for (let round = 0; round < 5; round++) {
        await final.sweepAll();
        const left = await redis.keys(serviceKeys(SERVICE_ID).pattern('since'));
        if (left.length === 0) return [];
      }
      return redis.keys(serviceKeys(SERVICE_ID).pattern('since'));
    },
    figures() {
      let allowedTotal = 0;
      let atPlatform = 0;
      let lost = 0;
      let countedTwice = 0;
      let wrongAllows = 0;
      for (const app of fixture.active) {
        const mine = allowed.get(app.id) ?? 0;
        const reported = platform.usage(SERVICE_ID, app.id, 'hits', 'eternity');
        allowedTotal += mine;
        atPlatform += reported;
        lost += Math.max(0, mine - reported);
        countedTwice += Math.max(0, reported - mine);
        if (limited.has(app.id)) wrongAllows += Math.max(0, mine - options.hardLimit);
      }
      return {
        allowed: allowedTotal,
        atPlatform,
        lost,
        countedTwice,
        wrongAllows,
        calls,
        firstCalls,
        refused,
        crashes: { ...crashes },
        duplicates,
        resentMaybeSent: metrics.total('BatchResentMaybeSent'),
        unitsResentMaybeSent: metrics.total('UnitsResentMaybeSent'),
        settledByMark: metrics.total('BatchSettledByMark'),
        unitsInCrashedPosts,
        cacheFallbacks: metrics.total(METRIC.cacheUnavailable),
        cacheAnswersLost: metrics.total(METRIC.cacheAnswerLost),
        unrecorded: metrics.total(METRIC.usageNotRecorded),
      };
    },
    async stop() {
      running = false;
      sweeping = false;
      await Promise.all(queues.map((queue) => queue.stop()));
      for (const container of containers) container.close();
      for (const client of redisClients) client.disconnect();
      for (const client of platformClients) client.close();
      snsClient.destroy();
      await sns.stop();
      await platformLine.stop();
      await platform.stop();
    },
  };
}
