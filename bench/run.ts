/**
 * `npm run bench`: the project's authorizer and the original design (baseline.ts), side by side on one
 * real redis-server (and, for spread-cluster, a local Redis Cluster of three primaries), one in-process
 * local platform and one SNS endpoint with the same simulated publish latency. Prints the tables,
 * writes bench/results/latest.json, and with --check exits 1 on any FAIL.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { APIGatewayAuthorizerResult, APIGatewayRequestAuthorizerEvent } from 'aws-lambda';
import Redis from 'ioredis';
import { createAuthorizerHandler } from '../lambdas/authorizer/handler';
import {
  type AccessConfig,
  configToEnv,
  LOCAL_SECRET_ENV,
  parseConfig,
  type RedisSettings,
} from '../lambdas/core/config';
import { credentialIdOf } from '../lambdas/core/credentials';
import { credentialKeys } from '../lambdas/core/keys';
import { silentLogger, silentMetrics } from '../lambdas/core/observability';
import { platformClientFromConfig } from '../lambdas/core/platform/client';
import { createRedisClient } from '../lambdas/core/redis-client';
import { createReporterHandler, createSweepHandler } from '../lambdas/reporter/handler';
import { type RunningPlatform, startPlatform } from '../local/platform';
import { evaluateAuthorizerResult, MalformedAuthorizerResultError } from '../local/policy';
import { LocalQueue, type QueueConsumer } from '../local/queue';
import { findOnPath, type LocalRedis, startRedisCluster, startRedisServer } from '../local/redis';
import { LOCAL_REGION, type SnsEndpoint, startSnsEndpoint, topicArn } from '../local/sns-endpoint';
import { parseBenchArgs, UsageError } from './args';
import { createBaselineAuthorizer, createBaselineReporter } from './baseline';
import { bundleAuthorizer, measureModuleInit } from './bundle';
import { type CommandCalls, diffCommandStats, parseCommandStats, serverCpuSeconds } from './commandstats';
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
  type PrimaryFigures,
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
  'spread-cluster': { calls: 20_000, keys: 1_000, endpoints: 5, warmupCalls: 2_000, warmupKeys: 20 },
  cold: { calls: 1_000, keys: 1_000, endpoints: 1, warmupCalls: 100, warmupKeys: 100 },
};

/** spread-cluster keeps its 1,000 keys: its share per primary is judged over them. */
const QUICK: Readonly<Record<WorkloadName, WorkloadSize>> = {
  hot: { calls: 4_000, keys: 1, endpoints: 1, warmupCalls: 500, warmupKeys: 1 },
  spread: { calls: 4_000, keys: 200, endpoints: 5, warmupCalls: 500, warmupKeys: 10 },
  'spread-cluster': { calls: 6_000, keys: 1_000, endpoints: 5, warmupCalls: 500, warmupKeys: 10 },
  cold: { calls: 200, keys: 200, endpoints: 1, warmupCalls: 50, warmupKeys: 50 },
};

const WORKLOADS: readonly WorkloadName[] = ['hot', 'spread', 'spread-cluster', 'cold'];
/** The workloads that run on the local cluster; the others on the single redis-server. */
const CLUSTER_WORKLOADS: readonly WorkloadName[] = ['spread-cluster'];
const CLUSTER_PRIMARIES = 3;
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

/** A primary of the Redis under test, with an admin connection of its own (not counted anywhere). */
interface Primary {
  readonly address: string;
  readonly admin: Redis;
}

/** The Redis a workload runs on: one redis-server, or a cluster (one entry per primary). */
interface RedisUnderTest {
  readonly name: 'single' | 'cluster';
  readonly server: LocalRedis;
  readonly settings: RedisSettings;
  readonly primaries: readonly Primary[];
}

interface Servers {
  readonly redis: RedisUnderTest;
  readonly platform: RunningPlatform;
  readonly sns: SnsEndpoint;
}

function accessConfig(
  servers: Servers,
  redis: RedisUnderTest,
  design: Design,
  reportWindowSeconds: number,
): AccessConfig {
  return parseConfig({
    serviceId: BENCH_SERVICE_ID,
    platformUrl: servers.platform.url,
    platformCredential: BENCH_PROVIDER_KEY,
    mappingRules: MAPPING_RULES,
    reportWindowSeconds,
    redis: redis.settings,
    topicArn: topicArn(`bench-${design}-${redis.name}-reports`),
  });
}

function reportQueue(servers: Servers, name: string, design: Design, consumer: QueueConsumer): LocalQueue {
  const queue = new LocalQueue({
    name,
    consumer,
    deliveryDelayMs: HELD_UNTIL_FLUSH_MS,
    visibilityTimeoutMs: 30_000,
    maxReceiveCount: 3,
    onConsumerError: (error) => console.error(`${design} reporter failed:`, error),
  });
  servers.sns.addTopic(name, (message) => queue.send(message.message, message.messageAttributes));
  return queue;
}

function startSystem(
  servers: Servers,
  redis: RedisUnderTest,
  design: Design,
  snsLatencyMs: number,
  reportWindowSeconds: number,
): System {
  const config = accessConfig(servers, redis, design, reportWindowSeconds);
  const queueName = `bench-${design}-${redis.name}-reports`;
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
    queue = reportQueue(servers, queueName, design, createReporterHandler(reporterDeps));
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
      queueName,
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

interface PrimarySnapshot {
  readonly commands: CommandCalls;
  readonly cpuSeconds: number;
}

/** Commands executed and CPU used so far, per primary (INFO commandstats and cpu). */
function snapshot(redis: RedisUnderTest): Promise<PrimarySnapshot[]> {
  return Promise.all(
    redis.primaries.map(async ({ admin }) => ({
      commands: parseCommandStats(await admin.info('commandstats')),
      cpuSeconds: serverCpuSeconds(await admin.info('cpu')),
    })),
  );
}

function primaryDeltas(before: readonly PrimarySnapshot[], after: readonly PrimarySnapshot[]) {
  return after.map((end, i) => {
    const start = before[i] as PrimarySnapshot;
    return {
      executed: diffCommandStats(start.commands, end.commands),
      cpuSeconds: end.cpuSeconds - start.cpuSeconds,
    };
  });
}

/** Per-command totals over every primary. */
function sumByCommand(
  deltas: ReadonlyArray<ReadonlyArray<readonly [string, number]>>,
): Array<[string, number]> {
  const totals = new Map<string, number>();
  for (const byCommand of deltas) {
    for (const [command, calls] of byCommand) totals.set(command, (totals.get(command) ?? 0) + calls);
  }
  return [...totals].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]));
}

/** Which primary owns each of the workload's keys: CLUSTER KEYSLOT of its credential, CLUSTER SLOTS. */
async function primaryOfKeys(redis: RedisUnderTest, keys: readonly string[]) {
  const [first] = redis.primaries as [Primary];
  const ranges = (await first.admin.call('CLUSTER', 'SLOTS')) as [number, number, [string, number]][];
  const ownerOf = (slot: number) => {
    const range = ranges.find(([start, end]) => slot >= start && slot <= end);
    return range ? `${range[2][0]}:${range[2][1]}` : 'unowned';
  };
  const slotsOf = new Map<string, number>();
  for (const [start, end, [host, port]] of ranges) {
    slotsOf.set(`${host}:${port}`, (slotsOf.get(`${host}:${port}`) ?? 0) + end - start + 1);
  }
  const owners = new Map<string, string>();
  for (const key of keys) {
    const credential = credentialKeys(credentialIdOf(BENCH_SERVICE_ID, { kind: 'user_key', userKey: key }));
    owners.set(key, ownerOf(Number(await first.admin.call('CLUSTER', 'KEYSLOT', credential.app))));
  }
  return { owners, slotsOf };
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
  redis: RedisUnderTest,
  servers: Servers,
  system: System,
  workload: WorkloadName,
  size: WorkloadSize,
): Promise<WorkloadResult> {
  const { design } = system;
  await Promise.all(redis.primaries.map(({ admin }) => admin.flushall()));

  // Warm-up on other keys (JIT, connections, script cache), flushed so none of it is counted below.
  const warmup = traffic(
    keysOf(design, workload, 'warmup', size.warmupKeys),
    size.endpoints,
    size.warmupCalls,
  );
  await drive(system, warmup);
  await system.flush();

  const load = traffic(keysOf(design, workload, 'measured', size.keys), size.endpoints, size.calls);
  const placement =
    redis.primaries.length > 1 && design === 'project' ? await primaryOfKeys(redis, load.keys) : undefined;
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

  const statsBefore = await snapshot(redis);
  const sentBefore = system.redisCommandsSent();
  const platformBefore = platformCalls(servers);
  const publishedBefore = servers.sns.stats().published;
  const run = await drive(system, load);
  const spanMs = Number(process.hrtime.bigint() - spanStart) / 1e6;
  const sent = system.redisCommandsSent() - sentBefore;
  const platformAfter = platformCalls(servers);
  const published = servers.sns.stats().published - publishedBefore;
  const perPrimary = primaryDeltas(statsBefore, await snapshot(redis));
  const executedByCommand = sumByCommand(perPrimary.map((delta) => delta.executed.byCommand));
  const executedTotal = perPrimary.reduce((sum, delta) => sum + delta.executed.total, 0);
  const serverCpuSecondsUsed = perPrimary.reduce((sum, delta) => sum + delta.cpuSeconds, 0);

  const flushStart = process.hrtime.bigint();
  await system.flush();
  const flushMs = Number(process.hrtime.bigint() - flushStart) / 1e6;
  const flushCalls = platformCallsBetween(platformAfter, platformCalls(servers));

  const reported = load.keys.reduce(
    (sum, key) => sum + servers.platform.usage(BENCH_SERVICE_ID, key, 'hits', 'eternity'),
    0,
  );
  const primaries: PrimaryFigures[] | undefined =
    placement &&
    redis.primaries.map(({ address }, i) => ({
      address,
      slots: placement.slotsOf.get(address) ?? 0,
      keys: load.keys.filter((key) => placement.owners.get(key) === address).length,
      authorizations: load.events.filter(
        (event) => placement.owners.get(String(event.headers?.apikey)) === address,
      ).length,
      commandsExecuted: perPrimary[i]?.executed.total ?? 0,
      serverCpuMicros: (perPrimary[i]?.cpuSeconds ?? 0) * 1e6,
    }));
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
      executedPerAuthorization: executedTotal / run.calls,
      executedByCommand,
      serverCpuMicrosPerAuthorization: (serverCpuSecondsUsed * 1e6) / run.calls,
    },
    snsPublishes: published,
    platformCalls: platformCallsBetween(platformBefore, platformAfter),
    flush: { durationMs: flushMs, platformCalls: flushCalls },
    reportedUsage: { allowed: allowedBefore + (run.outcomes.allow ?? 0), reported },
    ...(prime && { prime }),
    ...(primaries && { primaries }),
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

function redisServerBinary(): string {
  const binary = findOnPath('redis-server');
  if (binary === undefined) throw new Error('redis-server is not installed (apt-get install redis-server)');
  return binary;
}

async function adminOf(host: string, port: number): Promise<Redis> {
  const admin = new Redis({ host, port, lazyConnect: true, commandTimeout: 10_000 });
  await admin.connect();
  return admin;
}

async function startSingle(): Promise<RedisUnderTest> {
  const server = await startRedisServer(redisServerBinary());
  const primaries = [
    { address: `${server.host}:${server.port}`, admin: await adminOf(server.host, server.port) },
  ];
  return { name: 'single', server, settings: server.settings, primaries };
}

/** A local cluster of primaries only: each one's share of the work is the figure. */
async function startCluster(): Promise<RedisUnderTest> {
  const server = await startRedisCluster(redisServerBinary(), { primaries: CLUSTER_PRIMARIES });
  const primaries = await Promise.all(
    server.nodes.map(async (node) => ({
      address: `${node.host}:${node.port}`,
      admin: await adminOf(node.host, node.port),
    })),
  );
  return { name: 'cluster', server, settings: server.settings, primaries };
}

async function stopRedis(redis: RedisUnderTest): Promise<void> {
  for (const { admin } of redis.primaries) admin.disconnect();
  await redis.server.stop();
}

async function startServers(keys: readonly string[]): Promise<Servers> {
  const redis = await startSingle();
  const platform = await startPlatform({ config: benchPlatformConfig(keys), port: 0 });
  const sns = await startSnsEndpoint();
  return { redis, platform, sns };
}

async function stopServers(servers: Servers): Promise<void> {
  await servers.sns.stop();
  await servers.platform.stop();
  await stopRedis(servers.redis);
}

/** Runs `workloads` for both designs on `redis`, each design with its own clients. */
async function runOn(
  redis: RedisUnderTest,
  servers: Servers,
  workloads: readonly WorkloadName[],
  sizes: Readonly<Record<WorkloadName, WorkloadSize>>,
  options: { readonly snsLatencyMs: number; readonly reportWindowSeconds: number },
): Promise<WorkloadResult[]> {
  const systems = DESIGNS.map((design) =>
    startSystem(servers, redis, design, options.snsLatencyMs, options.reportWindowSeconds),
  );
  const results: WorkloadResult[] = [];
  try {
    for (const workload of workloads) {
      for (const system of systems) {
        console.log(`bench: ${workload} / ${system.design} ...`);
        results.push(await runWorkload(redis, servers, system, workload, sizes[workload]));
      }
    }
  } finally {
    await Promise.all(systems.map((system) => system.close()));
  }
  return results;
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
    const [first] = servers.redis.primaries as [Primary];
    const redisVersion = /redis_version:(\S+)/.exec(await first.admin.info('server'))?.[1] ?? 'unknown';
    const results = await runOn(
      servers.redis,
      servers,
      WORKLOADS.filter((workload) => !CLUSTER_WORKLOADS.includes(workload)),
      sizes,
      options,
    );
    console.log(`bench: starting a local Redis cluster of ${CLUSTER_PRIMARIES} primaries ...`);
    const cluster = await startCluster();
    try {
      results.push(...(await runOn(cluster, servers, CLUSTER_WORKLOADS, sizes, options)));
    } finally {
      await stopRedis(cluster);
    }
    const workloads = WORKLOADS.flatMap((workload) =>
      results.filter((result) => result.workload === workload),
    );
    console.log('bench: bundling the authorizer and timing its module init ...');
    const bundles = await measureBundles(
      accessConfig(servers, servers.redis, 'project', options.reportWindowSeconds),
      initRuns,
    );

    const find = (workload: WorkloadName, design: Design) =>
      workloads.find((w) => w.workload === workload && w.design === design) as WorkloadResult;
    const hot = find('hot', 'project');
    const hotBaseline = find('hot', 'baseline');
    const externalSdk = bundles.find((b) => b.sdk === 'external') as BundleResult;
    const spreadCluster = workloads.find((w) => w.workload === 'spread-cluster' && w.design === 'project');
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
      ...(spreadCluster?.primaries && {
        authorizationsPerPrimary: spreadCluster.primaries.map((primary) => primary.authorizations),
      }),
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
