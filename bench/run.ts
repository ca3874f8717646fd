/**
 * `npm run bench`: the project's authorizer and the original design (baseline.ts), side by side on one
 * real redis-server, one in-process local platform and one SNS endpoint with the same simulated publish
 * latency. Prints the tables, writes bench/results/latest.json, and with --check exits 1 on any FAIL.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { APIGatewayAuthorizerResult, APIGatewayRequestAuthorizerEvent } from 'aws-lambda';
import Redis from 'ioredis';
import { createAuthorizerHandler } from '../lambdas/authorizer/handler';
import { type AccessConfig, configToEnv, LOCAL_SECRET_ENV, parseConfig } from '../lambdas/core/config';
import { silentLogger, silentMetrics } from '../lambdas/core/observability';
import { platformClientFromConfig } from '../lambdas/core/platform/client';
import { createRedisClient } from '../lambdas/core/redis-client';
import { createReporterHandler, createSweepHandler } from '../lambdas/reporter/handler';
import { type RunningPlatform, startPlatform } from '../local/platform';
import { evaluateAuthorizerResult, MalformedAuthorizerResultError } from '../local/policy';
import { LocalQueue, type QueueConsumer } from '../local/queue';
import { findOnPath, type LocalRedis, startRedisServer } from '../local/redis';
import { LOCAL_REGION, type SnsEndpoint, startSnsEndpoint, topicArn } from '../local/sns-endpoint';
import { parseBenchArgs, UsageError } from './args';
import { createBaselineAuthorizer, createBaselineReporter } from './baseline';
import { bundleAuthorizer, measureModuleInit } from './bundle';
import { diffCommandStats, parseCommandStats, serverCpuSeconds } from './commandstats';
import { runConcurrently } from './driver';
import {
  BENCH_PROVIDER_KEY,
  BENCH_SERVICE_ID,
  benchPlatformConfig,
  keyOf,
  MAPPING_RULES,
  type Traffic,
  traffic,
} from './fixture';
import { countSentCommands } from './redis-counter';
import {
  type BenchReport,
  type BundleResult,
  type Design,
  describeMachine,
  formatReport,
  type PlatformCalls,
  type WorkloadName,
  type WorkloadResult,
} from './report';
import { createSnsClientWithLatency } from './sns-client';
import { summarizeLatencies, throughput } from './stats';
import { evaluateTargets, soundnessProblems } from './targets';

const CONCURRENCY = 32;
const PROJECT_ROOT = path.resolve(__dirname, '..');
const RESULTS_DIR = path.join(PROJECT_ROOT, 'bench', 'results');
const AUTHORIZER_ENTRY = path.join(PROJECT_ROOT, 'lambdas', 'authorizer', 'index.ts');
/** Report messages wait in the queue until the flush delivers them, so the reporter's platform calls are counted apart. */
const HELD_UNTIL_FLUSH_MS = 24 * 60 * 60 * 1000;
/** The whole run is bounded: a hang fails the benchmark instead of blocking CI. */
const WATCHDOG_MS = 30 * 60 * 1000;

interface WorkloadSize {
  readonly calls: number;
  readonly keys: number;
  readonly endpoints: number;
  readonly warmupCalls: number;
  readonly warmupKeys: number;
}

const FULL: Readonly<Record<WorkloadName, WorkloadSize>> = {
  hot: { calls: 20_000, keys: 1, endpoints: 1, warmupCalls: 2_000, warmupKeys: 1 },
  spread: { calls: 20_000, keys: 1_000, endpoints: 5, warmupCalls: 2_000, warmupKeys: 20 },
  cold: { calls: 1_000, keys: 1_000, endpoints: 1, warmupCalls: 100, warmupKeys: 100 },
};

const QUICK: Readonly<Record<WorkloadName, WorkloadSize>> = {
  hot: { calls: 4_000, keys: 1, endpoints: 1, warmupCalls: 500, warmupKeys: 1 },
  spread: { calls: 4_000, keys: 200, endpoints: 5, warmupCalls: 500, warmupKeys: 10 },
  cold: { calls: 200, keys: 200, endpoints: 1, warmupCalls: 50, warmupKeys: 50 },
};

const WORKLOADS: readonly WorkloadName[] = ['hot', 'spread', 'cold'];
const DESIGNS: readonly Design[] = ['project', 'baseline'];

type Authorizer = (event: APIGatewayRequestAuthorizerEvent) => Promise<APIGatewayAuthorizerResult>;

/** One design wired to the shared servers, with its own clients, as its Lambdas would have. */
interface System {
  readonly design: Design;
  readonly authorize: Authorizer;
  /** Commands the authorizer's Redis client has sent so far. */
  readonly redisCommandsSent: () => number;
  /** Delivers every held report message to the reporter (and, for the project, runs the sweep). */
  flush(): Promise<void>;
  close(): Promise<void>;
}

interface Servers {
  readonly redis: LocalRedis;
  readonly admin: Redis;
  readonly platform: RunningPlatform;
  readonly sns: SnsEndpoint;
}

function accessConfig(servers: Servers, design: Design, reportWindowSeconds: number): AccessConfig {
  return parseConfig({
    serviceId: BENCH_SERVICE_ID,
    platformUrl: servers.platform.url,
    platformCredential: BENCH_PROVIDER_KEY,
    mappingRules: MAPPING_RULES,
    reportWindowSeconds,
    redis: { host: servers.redis.host, port: servers.redis.port },
    topicArn: topicArn(`bench-${design}-reports`),
  });
}

function reportQueue(servers: Servers, design: Design, consumer: QueueConsumer): LocalQueue {
  const queue = new LocalQueue({
    name: `bench-${design}-reports`,
    consumer,
    deliveryDelayMs: HELD_UNTIL_FLUSH_MS,
    visibilityTimeoutMs: 30_000,
    maxReceiveCount: 3,
    onConsumerError: (error) => console.error(`${design} reporter failed:`, error),
  });
  servers.sns.addTopic(`bench-${design}-reports`, (message) =>
    queue.send(message.message, message.messageAttributes),
  );
  return queue;
}

function startSystem(
  servers: Servers,
  design: Design,
  snsLatencyMs: number,
  reportWindowSeconds: number,
): System {
  const config = accessConfig(servers, design, reportWindowSeconds);
  const redisSettings = config.redis as NonNullable<AccessConfig['redis']>;
  // Each Lambda has its own clients: the authorizer's Redis client is the one whose commands are counted.
  const authorizerRedis = createRedisClient(redisSettings);
  const reporterRedis = createRedisClient(redisSettings);
  const counter = countSentCommands(authorizerRedis);
  const sns = createSnsClientWithLatency(servers.sns.url, snsLatencyMs);
  const authorizerPlatform = platformClientFromConfig(config, BENCH_PROVIDER_KEY);
  const reporterPlatform = platformClientFromConfig(config, BENCH_PROVIDER_KEY, { caller: 'reporter' });
  const ports = { config, logger: silentLogger, metrics: silentMetrics };
  let authorize: Authorizer;
  let queue: LocalQueue;
  let sweep: (() => Promise<unknown>) | undefined;
  if (design === 'project') {
    authorize = createAuthorizerHandler({
      ...ports,
      redis: authorizerRedis,
      sns,
      platform: authorizerPlatform,
    });
    const reporterDeps = { ...ports, redis: reporterRedis, platform: reporterPlatform };
    queue = reportQueue(servers, design, createReporterHandler(reporterDeps));
    // The bench's flush reports everything still pending, whatever its age (the scheduled sweep waits a few windows).
    sweep = createSweepHandler({ ...reporterDeps, sweepMinAgeMs: 0 });
  } else {
    authorize = createBaselineAuthorizer({
      config,
      redis: authorizerRedis,
      sns,
      platform: authorizerPlatform,
    });
    queue = reportQueue(
      servers,
      design,
      createBaselineReporter({ config, redis: reporterRedis, platform: reporterPlatform }),
    );
  }
  return {
    design,
    authorize,
    redisCommandsSent: counter.sent,
    async flush() {
      await queue.drain();
      await sweep?.();
    },
    async close() {
      await queue.stop();
      sns.destroy();
      authorizerPlatform.close();
      reporterPlatform.close();
      authorizerRedis.disconnect();
      reporterRedis.disconnect();
    },
  };
}

function platformCalls(servers: Servers): PlatformCalls {
  const { authorize, authrep, report } = servers.platform.stats();
  return { total: authorize + authrep + report, byEndpoint: { authorize, authrep, report } };
}

function platformCallsBetween(before: PlatformCalls, after: PlatformCalls): PlatformCalls {
  const byEndpoint = Object.fromEntries(
    Object.entries(after.byEndpoint).map(([endpoint, calls]) => [
      endpoint,
      calls - (before.byEndpoint[endpoint] ?? 0),
    ]),
  );
  return { total: after.total - before.total, byEndpoint };
}

async function commandStats(admin: Redis) {
  return parseCommandStats(await admin.info('commandstats'));
}

const errorSamples: string[] = [];

/** How API Gateway reads the answer: a thrown Unauthorized is 401, a policy is evaluated on the methodArn. */
function outcomeOf(settled: PromiseSettledResult<APIGatewayAuthorizerResult>, methodArn: string): string {
  if (settled.status === 'rejected') {
    const message = settled.reason instanceof Error ? settled.reason.message : String(settled.reason);
    if (message === 'Unauthorized') return 'unauthorized';
    if (errorSamples.length < 5) errorSamples.push(message);
    return 'error';
  }
  try {
    return evaluateAuthorizerResult(JSON.parse(JSON.stringify(settled.value)), methodArn).decision;
  } catch (error) {
    if (!(error instanceof MalformedAuthorizerResultError)) throw error;
    if (errorSamples.length < 5) errorSamples.push(error.message);
    return 'malformed';
  }
}

function drive(system: System, load: Traffic) {
  return runConcurrently(
    load.events.length,
    CONCURRENCY,
    (i) => system.authorize(load.events[i] as APIGatewayRequestAuthorizerEvent),
    (settled, i) => outcomeOf(settled, (load.events[i] as APIGatewayRequestAuthorizerEvent).methodArn),
  );
}

function keysOf(
  design: Design,
  workload: WorkloadName,
  phase: 'warmup' | 'measured',
  count: number,
): string[] {
  return Array.from({ length: count }, (_, n) => keyOf(design, workload, phase, n));
}

async function runWorkload(
  servers: Servers,
  system: System,
  workload: WorkloadName,
  size: WorkloadSize,
): Promise<WorkloadResult> {
  const { design } = system;
  await servers.admin.flushall();

  // Warm-up on other keys (JIT, connections, script cache), flushed so none of it is counted below.
  const warmup = traffic(
    keysOf(design, workload, 'warmup', size.warmupKeys),
    size.endpoints,
    size.warmupCalls,
  );
  await drive(system, warmup);
  await system.flush();

  const load = traffic(keysOf(design, workload, 'measured', size.keys), size.endpoints, size.calls);
  let prime: WorkloadResult['prime'];
  let allowedBefore = 0;
  const spanStart = process.hrtime.bigint();
  if (workload === 'hot') {
    // The key's first call is the cache miss; the cache-hit figures start after it.
    const before = platformCalls(servers);
    const primed = await drive(system, { ...load, events: load.events.slice(0, 1) });
    prime = {
      latencyMs: (primed.latenciesNs[0] as number) / 1e6,
      platformCalls: platformCallsBetween(before, platformCalls(servers)).total,
    };
    allowedBefore = primed.outcomes.allow ?? 0;
  }

  const statsBefore = await commandStats(servers.admin);
  const cpuBefore = serverCpuSeconds(await servers.admin.info('cpu'));
  const sentBefore = system.redisCommandsSent();
  const platformBefore = platformCalls(servers);
  const publishedBefore = servers.sns.stats().published;
  const run = await drive(system, load);
  const spanMs = Number(process.hrtime.bigint() - spanStart) / 1e6;
  const sent = system.redisCommandsSent() - sentBefore;
  const platformAfter = platformCalls(servers);
  const published = servers.sns.stats().published - publishedBefore;
  const executed = diffCommandStats(statsBefore, await commandStats(servers.admin));
  const serverCpuSecondsUsed = serverCpuSeconds(await servers.admin.info('cpu')) - cpuBefore;

  const flushStart = process.hrtime.bigint();
  await system.flush();
  const flushMs = Number(process.hrtime.bigint() - flushStart) / 1e6;
  const flushCalls = platformCallsBetween(platformAfter, platformCalls(servers));

  const reported = load.keys.reduce(
    (sum, key) => sum + servers.platform.usage(BENCH_SERVICE_ID, key, 'hits', 'eternity'),
    0,
  );
  return {
    workload,
    design,
    calls: run.calls,
    keys: size.keys,
    endpoints: size.endpoints,
    concurrency: CONCURRENCY,
    warmupCalls: size.warmupCalls,
    durationMs: run.durationMs,
    spanMs,
    authorizationsPerSecond: throughput(run.calls, run.durationMs),
    latency: summarizeLatencies(run.latenciesNs),
    outcomes: run.outcomes,
    redis: {
      sentPerAuthorization: sent / run.calls,
      executedPerAuthorization: executed.total / run.calls,
      executedByCommand: executed.byCommand,
      serverCpuMicrosPerAuthorization: (serverCpuSecondsUsed * 1e6) / run.calls,
    },
    snsPublishes: published,
    platformCalls: platformCallsBetween(platformBefore, platformAfter),
    flush: { durationMs: flushMs, platformCalls: flushCalls },
    reportedUsage: { allowed: allowedBefore + (run.outcomes.allow ?? 0), reported },
    ...(prime && { prime }),
  };
}

async function measureBundles(config: AccessConfig, initRuns: number): Promise<BundleResult[]> {
  await mkdir(RESULTS_DIR, { recursive: true });
  // The environment a deployed authorizer starts with (configuration only: nothing connects at init).
  const env = {
    ...configToEnv(config),
    [LOCAL_SECRET_ENV.providerKey]: BENCH_PROVIDER_KEY,
    AWS_REGION: LOCAL_REGION,
    AWS_LAMBDA_FUNCTION_NAME: 'bench-authorizer',
  };
  const results: BundleResult[] = [];
  for (const sdk of ['external', 'bundled'] as const) {
    const outfile = path.join(RESULTS_DIR, `authorizer.sdk-${sdk}.min.js`);
    const bundle = await bundleAuthorizer(AUTHORIZER_ENTRY, outfile, sdk);
    const init = await measureModuleInit(outfile, env, initRuns);
    results.push({
      sdk,
      minifiedBytes: bundle.minifiedBytes,
      initMedianMs: init.medianMs,
      initSamplesMs: init.samples,
      largestModules: bundle.composition.slice(0, 15),
    });
  }
  return results;
}

async function startServers(keys: readonly string[]): Promise<Servers> {
  const binary = findOnPath('redis-server');
  if (binary === undefined) throw new Error('redis-server is not installed (apt-get install redis-server)');
  const redis = await startRedisServer(binary);
  const admin = new Redis({ host: redis.host, port: redis.port, lazyConnect: true, commandTimeout: 10_000 });
  await admin.connect();
  const platform = await startPlatform({ config: benchPlatformConfig(keys), port: 0 });
  const sns = await startSnsEndpoint();
  return { redis, admin, platform, sns };
}

async function stopServers(servers: Servers): Promise<void> {
  servers.admin.disconnect();
  await servers.sns.stop();
  await servers.platform.stop();
  await servers.redis.stop();
}

async function main(): Promise<number> {
  const argv = process.argv.slice(2);
  const options = parseBenchArgs(argv);
  const sizes = options.quick ? QUICK : FULL;
  const initRuns = options.quick ? 5 : 15;
  const startedAt = new Date().toISOString();
  const loadAverageAtStart = os.loadavg()[0] as number;
  const keys = DESIGNS.flatMap((design) =>
    WORKLOADS.flatMap((workload) => [
      ...keysOf(design, workload, 'warmup', sizes[workload].warmupKeys),
      ...keysOf(design, workload, 'measured', sizes[workload].keys),
    ]),
  );
  console.log(
    `bench: report window ${options.reportWindowSeconds} s, SNS publish latency ${options.snsLatencyMs} ms, ` +
      `concurrency ${CONCURRENCY}${options.quick ? ', quick run' : ''}`,
  );
  const servers = await startServers(keys);
  try {
    const redisVersion = /redis_version:(\S+)/.exec(await servers.admin.info('server'))?.[1] ?? 'unknown';
    const systems = DESIGNS.map((design) =>
      startSystem(servers, design, options.snsLatencyMs, options.reportWindowSeconds),
    );
    const workloads: WorkloadResult[] = [];
    try {
      for (const workload of WORKLOADS) {
        for (const system of systems) {
          console.log(`bench: ${workload} / ${system.design} ...`);
          workloads.push(await runWorkload(servers, system, workload, sizes[workload]));
        }
      }
    } finally {
      await Promise.all(systems.map((system) => system.close()));
    }
    console.log('bench: bundling the authorizer and timing its module init ...');
    const bundles = await measureBundles(
      accessConfig(servers, 'project', options.reportWindowSeconds),
      initRuns,
    );

    const find = (workload: WorkloadName, design: Design) =>
      workloads.find((w) => w.workload === workload && w.design === design) as WorkloadResult;
    const hot = find('hot', 'project');
    const hotBaseline = find('hot', 'baseline');
    const externalSdk = bundles.find((b) => b.sdk === 'external') as BundleResult;
    const targets = evaluateTargets({
      reportWindowSeconds: options.reportWindowSeconds,
      hot: {
        project: {
          calls: hot.calls,
          spanMs: hot.spanMs,
          p50Ms: hot.latency.p50Ms,
          authorizationsPerSecond: hot.authorizationsPerSecond,
          redisCommandsPerAuthorization: hot.redis.sentPerAuthorization,
          platformCalls: hot.platformCalls.total,
          snsPublishes: hot.snsPublishes,
          flushPlatformCalls: hot.flush.platformCalls.total,
        },
        baseline: {
          p50Ms: hotBaseline.latency.p50Ms,
          authorizationsPerSecond: hotBaseline.authorizationsPerSecond,
        },
      },
      bundle: { minifiedBytes: externalSdk.minifiedBytes, initMedianMs: externalSdk.initMedianMs },
    });
    const report: BenchReport = {
      startedAt,
      command: ['npm run bench', ...(argv.length > 0 ? ['--', ...argv] : [])].join(' '),
      machine: describeMachine(redisVersion, loadAverageAtStart),
      settings: {
        quick: options.quick,
        snsLatencyMs: options.snsLatencyMs,
        reportWindowSeconds: options.reportWindowSeconds,
        concurrency: CONCURRENCY,
        initRuns,
      },
      workloads,
      bundles,
      targets,
      soundness: soundnessProblems(workloads),
      errorSamples,
    };
    console.log(`\n${formatReport(report)}`);
    await mkdir(RESULTS_DIR, { recursive: true });
    const latest = path.join(RESULTS_DIR, 'latest.json');
    await writeFile(latest, `${JSON.stringify(report, null, 2)}\n`);
    console.log(`\nbench: results written to ${path.relative(PROJECT_ROOT, latest)}`);
    const failed = targets.filter((target) => !target.pass);
    return options.check && (failed.length > 0 || report.soundness.length > 0) ? 1 : 0;
  } finally {
    await stopServers(servers);
  }
}

const watchdog = setTimeout(() => {
  console.error(`bench: still running after ${WATCHDOG_MS / 60_000} minutes; giving up`);
  process.exit(2);
}, WATCHDOG_MS);
watchdog.unref();

main().then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    console.error(error instanceof UsageError ? error.message : error);
    process.exitCode = error instanceof UsageError ? 64 : 1;
  },
);
