/**
 * `npm run bench`: the project's authorizer and the original design (baseline.ts), side by side on one
 * real redis-server (and, for spread-cluster, a local Redis Cluster of three primaries), one in-process
 * local platform and one SNS endpoint with the same simulated publish latency. Prints the tables,
 * writes bench/results/latest.json, and with --check exits 1 on any FAIL.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type {
  APIGatewayAuthorizerResult,
  APIGatewayProxyEvent,
  APIGatewayProxyResult,
  APIGatewayRequestAuthorizerEvent,
  APIGatewayRequestAuthorizerEventV2,
} from 'aws-lambda';
import Redis from 'ioredis';
import type { SimpleAnswer } from '../adapters/gateway/http-v2';
import { createMetrics } from '../adapters/powertools/observability';
import { snsAlertPublisher } from '../adapters/sns/alert-publisher';
import { credentialKeys } from '../core/budget/keys';
import { createRedisClient } from '../core/budget/redis-client';
import { credentialIdOf } from '../core/credentials';
import { silentLogger, silentMetrics } from '../core/observability/observability';
import { platformClientFromConfig } from '../core/platform/client';
import { type AccessConfig, configToEnv, LOCAL_SECRET_ENV, parseConfig } from '../core/settings/config';
import { parseSoapSettings } from '../core/soap/settings';
import { AUTHORIZER_SERVICE_NAME, createAuthorizerHandler } from '../lambdas/authorizer/handler';
import { createReporterHandler, createSweepHandler } from '../lambdas/reporter/handler';
import { createSoapAccessProxyHandler } from '../lambdas/soap/handler';
import { NODE_RUNTIME_NAME } from '../lib/lambda-bundles';
import { type RunningPlatform, startPlatform } from '../local/platform';
import { evaluateAuthorizerResult, MalformedAuthorizerResultError } from '../local/policy';
import { LocalQueue, type QueueConsumer } from '../local/queue';
import { findOnPath, startRedisCluster, startRedisServer } from '../local/redis';
import { LOCAL_REGION, startSnsEndpoint, topicArn } from '../local/sns-endpoint';
import { startAppSystem } from './app-system';
import { type BenchOptions, parseBenchArgs, UsageError } from './args';
import { createBaselineAuthorizer, createBaselineReporter } from './baseline';
import { bundleLambda, initNodeBinaries, measureModuleInit } from './bundle';
import { type CommandStats, diffCommandStats, parseCommandStats, serverCpuSeconds } from './commandstats';
import { runConcurrently } from './driver';
import {
  BENCH_PROVIDER_KEY,
  BENCH_SERVICE_ID,
  type BenchServiceId,
  benchPlatformConfig,
  type Call,
  httpV2AuthorizerEvent,
  type KeyPhase,
  keyOf,
  MAPPING_RULES,
  soapProxyEvent,
  type Traffic,
  traffic,
} from './fixture';
import { type HotAuthorizer, LOGGING_BEFORE, LOGGING_NOW, type LogBytes, measureLogBytes } from './log-bytes';
import { otherCpuPerCore, readCpu } from './other-load';
import { type Placement, pinBench, pinProcess, placementText } from './placement';
import { measurePortal } from './portal';
import { countSentCommands } from './redis-counter';
import {
  type BenchReport,
  type BundleResult,
  type Design,
  describeMachine,
  formatReport,
  machineLine,
  type PlatformCalls,
  type PrimaryFigures,
  portalLines,
  type WorkloadName,
  type WorkloadResult,
} from './report';
import { createSnsClientWithLatency } from './sns-client';
import { summarizeLatencies, throughput } from './stats';
import type { Caller, Primary, RedisUnderTest, Servers, System, SystemOptions } from './system';
import { addPlatformCalls, NO_PLATFORM_CALLS, Tally } from './tally';
import {
  type AppFigures,
  comparisonTargets,
  evaluateComparisons,
  evaluateTargets,
  PLATFORM_BUSY,
  secondsTouched,
  soundnessProblems,
} from './targets';
import { startTokenIssuer } from './token-issuer';
import {
  FLOOD_UNSEEN_CALLS_PER_SECOND,
  GROUP_ROUNDS,
  interleavedChunks,
  OVER_LIMIT_WORKLOADS,
  REFUSED_WORKLOADS,
  type RequestShape,
  type Run,
  runGroups,
  SETUPS,
  type Setup,
  type SetupName,
  WORKLOAD_NAMES,
  WORKLOADS,
  type Workload,
  type WorkloadSize,
} from './workloads';

const PROJECT_ROOT = path.resolve(__dirname, '..');
const RESULTS_DIR = path.join(PROJECT_ROOT, 'bench', 'results');
const AUTHORIZER_ENTRY = path.join(PROJECT_ROOT, 'lambdas', 'authorizer', 'index.ts');
/** Report messages wait in the queue until the flush delivers them, so the reporter's platform calls are counted apart. */
const HELD_UNTIL_FLUSH_MS = 24 * 60 * 60 * 1000;
/** The whole run is bounded: a hang fails the benchmark instead of blocking CI. */
const WATCHDOG_MS = 30 * 60 * 1000;

const CLUSTER_PRIMARIES = 3;
/** The concurrent workloads' callers (the serial ones have one). */
const CONCURRENCY = 32;
/** Where the SOAP proxy would forward: never called, the bench's backend port answers at once. */
const UNUSED_SOAP_BACKEND = 'http://127.0.0.1:9/soap';

type Authorizer = (event: APIGatewayRequestAuthorizerEvent) => Promise<APIGatewayAuthorizerResult>;

type SoapProxyHandler = (event: APIGatewayProxyEvent) => Promise<APIGatewayProxyResult>;

/** The largest `unseenCredentialCallsPerSecond` the setting takes. */
const UNSEEN_CALLS_OUT_OF_REACH = 100_000;

function accessConfig(
  servers: Servers,
  redis: RedisUnderTest,
  name: string,
  setup: Setup,
  reportWindowSeconds: number,
): AccessConfig {
  return parseConfig({
    serviceId: setup.serviceId,
    platformUrl: servers.platform.url,
    platformCredential: BENCH_PROVIDER_KEY,
    mappingRules: MAPPING_RULES,
    reportWindowSeconds,
    redis: redis.settings,
    topicArn: topicArn(`${name}-reports`),
    // The workloads measure what first calls cost, not the bound on them (spread and cold make thousands
    // a second): the bound is out of reach, but for the set-up that measures it.
    unseenCredentialCallsPerSecond: UNSEEN_CALLS_OUT_OF_REACH,
    ...(setup.alerts && { alertsTopicArn: topicArn(`${name}-alerts`) }),
    ...setup.settings(servers.issuer.url),
  });
}

function reportQueue(
  servers: Servers,
  name: string,
  design: Design,
  deliveryDelayMs: number,
  consumer: QueueConsumer,
): LocalQueue {
  const queue = new LocalQueue({
    name,
    consumer,
    deliveryDelayMs,
    visibilityTimeoutMs: 30_000,
    maxReceiveCount: 3,
    onConsumerError: (error) => console.error(`${design} reporter failed:`, error),
  });
  servers.sns.addTopic(name, (message) => queue.send(message.message, message.messageAttributes));
  return queue;
}

/** How API Gateway reads a REQUEST authorizer's answers to `events`. */
function authorizerCaller(
  authorize: Authorizer,
  events: readonly APIGatewayRequestAuthorizerEvent[],
): Caller {
  return {
    send: (i) => authorize(events[i] as APIGatewayRequestAuthorizerEvent),
    outcome: (settled, i) =>
      outcomeOf(
        settled as PromiseSettledResult<APIGatewayAuthorizerResult>,
        (events[i] as APIGatewayRequestAuthorizerEvent).methodArn,
      ),
  };
}

/** How an HTTP API reads a simple response: isAuthorized, else the reason of the refusal. */
function simpleResponseCaller(
  authorize: (event: APIGatewayRequestAuthorizerEventV2) => Promise<SimpleAnswer>,
  events: readonly APIGatewayRequestAuthorizerEventV2[],
): Caller {
  return {
    send: (i) => authorize(events[i] as APIGatewayRequestAuthorizerEventV2),
    outcome: (settled) => {
      if (settled.status === 'rejected') {
        if (errorSamples.length < 5) errorSamples.push(String(settled.reason));
        return 'error';
      }
      const answer = settled.value as SimpleAnswer;
      return answer.isAuthorized ? 'allow' : `deny ${String(answer.context.reason)}`;
    },
  };
}

/** One event per distinct call (calls of a key and endpoint share one object, and so do their events). */
function eventsOf<E>(load: Traffic, eventOf: (call: Call) => E): E[] {
  const made = new Map<Call, E>();
  return load.calls.map((call) => {
    const event = made.get(call) ?? eventOf(call);
    made.set(call, event);
    return event;
  });
}

/** The call's event with its key header replaced by the header `name` (an app id, a Bearer token). */
function withCredentialHeader(call: Call, name: string, value: string): APIGatewayRequestAuthorizerEvent {
  const { apikey: _key, ...headers } = call.event.headers ?? {};
  const { apikey: _keys, ...multiValueHeaders } = call.event.multiValueHeaders ?? {};
  return {
    ...call.event,
    headers: { ...headers, [name]: value },
    multiValueHeaders: { ...multiValueHeaders, [name]: [value] },
  };
}

const SOAP_OUTCOMES: Readonly<Record<number, string>> = { 200: 'allow', 401: 'unauthorized', 403: 'deny' };

/** The SOAP route's answers read as the REST ones: 200 allowed, 401 and 403 refused, anything else an error. */
function soapCaller(proxy: SoapProxyHandler, events: readonly APIGatewayProxyEvent[]): Caller {
  return {
    send: (i) => proxy(events[i] as APIGatewayProxyEvent),
    outcome: (settled) => {
      if (settled.status === 'rejected') {
        if (errorSamples.length < 5) errorSamples.push(String(settled.reason));
        return 'error';
      }
      const { statusCode } = settled.value as APIGatewayProxyResult;
      return SOAP_OUTCOMES[statusCode] ?? `status ${statusCode}`;
    },
  };
}

/** The proxy's backend port: an answer at once, so the workload times the proxy alone. */
const instantBackend = async () => ({
  ok: true as const,
  status: 200,
  contentType: 'text/xml; charset=utf-8',
  body: Buffer.from(
    '<soap:Envelope xmlns:soap="http://schemas.xmlsoap.org/soap/envelope/"><soap:Body/></soap:Envelope>',
  ),
});

function startSystem(
  servers: Servers,
  redis: RedisUnderTest,
  design: Design,
  setupName: SetupName,
  options: SystemOptions,
): System {
  const setup = SETUPS[setupName];
  if (setup.request === 'app') return startAppSystem(servers, redis, design, setup, options);
  const name = `bench-${design}-${setupName}-${redis.name}`;
  const config = accessConfig(servers, redis, name, setup, options.reportWindowSeconds);
  const redisSettings = config.redis as NonNullable<AccessConfig['redis']>;
  // Each Lambda has its own clients: the authorizer's Redis client is the one whose commands are counted.
  const authorizerRedis = createRedisClient(redisSettings);
  const reporterRedis = createRedisClient(redisSettings);
  const counter = countSentCommands(authorizerRedis);
  const sns = createSnsClientWithLatency(servers.sns.url, options.snsLatencyMs);
  const authorizerPlatform = platformClientFromConfig(config, BENCH_PROVIDER_KEY);
  const reporterPlatform = platformClientFromConfig(config, BENCH_PROVIDER_KEY, { caller: 'reporter' });
  const ports = { config, logger: silentLogger, metrics: silentMetrics };
  const deliveryDelayMs = setup.delivery === 'held' ? HELD_UNTIL_FLUSH_MS : config.reportWindowSeconds * 1000;
  let caller: (load: Traffic) => Promise<Caller>;
  let queue: LocalQueue;
  let sweep: (() => Promise<unknown>) | undefined;
  if (design === 'project') {
    const deciderPorts = { ...ports, redis: authorizerRedis, sns, platform: authorizerPlatform };
    // The Lambda that receives the set-up's calls: the REST authorizer, or the SOAP proxy on the same ports.
    const callers: Readonly<Record<Exclude<RequestShape, 'app'>, () => (load: Traffic) => Promise<Caller>>> =
      {
        rest: () => {
          const authorize = createAuthorizerHandler(deciderPorts);
          return async (load) => authorizerCaller(authorize, load.events);
        },
        'http-v2': () => {
          const authorize = createAuthorizerHandler(deciderPorts);
          return async (load) => {
            let made = 0;
            const events = eventsOf(load, (call) => httpV2AuthorizerEvent(call.key, call.endpoint, made++));
            return simpleResponseCaller(authorize, events);
          };
        },
        'app-id': () => {
          const authorize = createAuthorizerHandler(deciderPorts);
          const header = config.appIdHeader;
          return async (load) =>
            authorizerCaller(
              authorize,
              eventsOf(load, (call) => withCredentialHeader(call, header, call.key)),
            );
        },
        bearer: () => {
          const authorize = createAuthorizerHandler(deciderPorts);
          return async (load) => {
            const tokens = new Map<string, string>();
            for (const key of load.keys) tokens.set(key, await servers.issuer.token(key));
            const events = eventsOf(load, (call) =>
              withCredentialHeader(call, 'Authorization', `Bearer ${tokens.get(call.key) as string}`),
            );
            return authorizerCaller(authorize, events);
          };
        },
        soap: () => {
          const proxy = createSoapAccessProxyHandler({
            ...deciderPorts,
            settings: parseSoapSettings({ soapBackendUrl: UNUSED_SOAP_BACKEND }),
            forward: instantBackend,
          });
          return async (load) =>
            soapCaller(
              proxy,
              eventsOf(load, (call) => soapProxyEvent(call.key, call.endpoint)),
            );
        },
      };
    caller = callers[setup.request as Exclude<RequestShape, 'app'>]();
    const reporterDeps = {
      ...ports,
      redis: reporterRedis,
      platform: reporterPlatform,
      ...(config.alertsTopicArn && { alertPublisher: snsAlertPublisher(sns, config.alertsTopicArn) }),
    };
    queue = reportQueue(
      servers,
      `${name}-reports`,
      design,
      deliveryDelayMs,
      createReporterHandler(reporterDeps),
    );
    if (config.alertsTopicArn) servers.sns.addTopic(`${name}-alerts`, () => undefined);
    // The bench's flush reports everything still pending, whatever its age (the scheduled sweep waits a few windows).
    sweep = createSweepHandler({ ...reporterDeps, sweepMinAgeMs: 0 });
  } else {
    const authorize = createBaselineAuthorizer({
      config,
      redis: authorizerRedis,
      sns,
      platform: authorizerPlatform,
    });
    caller = async (load) => authorizerCaller(authorize, load.events);
    queue = reportQueue(
      servers,
      `${name}-reports`,
      design,
      deliveryDelayMs,
      createBaselineReporter({ config, redis: reporterRedis, platform: reporterPlatform }),
    );
  }
  return {
    design,
    setup,
    platform: servers.platform,
    metered: true,
    caller,
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

function platformCalls(platform: RunningPlatform): PlatformCalls {
  const { authorize, authrep, report } = platform.stats();
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
  readonly commands: CommandStats;
  readonly cpuSeconds: number;
}

/** Commands executed (calls and time) and CPU used so far, per primary (INFO commandstats and cpu). */
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
    const credential = credentialKeys(
      BENCH_SERVICE_ID,
      credentialIdOf(BENCH_SERVICE_ID, { kind: 'user_key', userKey: key }),
    );
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

/** `count` calls of `caller` from call `from` on, `concurrency` at a time, until `stop` if given. */
function drive(caller: Caller, from: number, count: number, concurrency: number, stop?: AbortSignal) {
  return runConcurrently(
    count,
    concurrency,
    (i) => caller.send(from + i),
    (settled, i) => caller.outcome(settled, from + i),
    stop,
  );
}

/** A flood's answers by reason: a Deny names why (`platform_busy`, an invalid credential), so they count apart. */
function byReason(caller: Caller): Caller {
  return {
    send: caller.send,
    outcome: (settled, i) => {
      const outcome = caller.outcome(settled, i);
      if (outcome !== 'explicit_deny' || settled.status !== 'fulfilled') return outcome;
      const reason = (settled.value as APIGatewayAuthorizerResult).context?.reason;
      return `deny ${String(reason)}`;
    },
  };
}

/** The made-up keys of a workload's flood, called beside its measured calls: what they made so far. */
interface FloodUnderWay {
  readonly caller: Caller;
  readonly keys: number;
  readonly callers: number;
  made: number;
  readonly outcomes: Record<string, number>;
  platformCalls: PlatformCalls;
  ranOut: boolean;
  /** When each of its chunks started and ended (epoch ms, the clock the first-call bound counts by). */
  readonly spansMs: Array<readonly [number, number]>;
}

function keysOf(design: Design, workload: WorkloadName, phase: KeyPhase, count: number): string[] {
  return Array.from({ length: count }, (_, n) => keyOf(design, workload, phase, n));
}

/** A workload of one design, warmed up and its key primed: its calls are measured in one or more chunks. */
interface Prepared {
  readonly workload: WorkloadName;
  readonly spec: Workload;
  readonly size: WorkloadSize;
  readonly system: System;
  readonly load: Traffic;
  readonly caller: Caller;
  readonly placement?: Awaited<ReturnType<typeof primaryOfKeys>>;
  readonly prime?: WorkloadResult['prime'];
  readonly flood?: FloodUnderWay;
  /** Allowed calls of the workload's keys before its measured ones (the priming call). */
  readonly allowedBefore: number;
  /** The start of the priming call: the span the key's report windows cover starts here. */
  readonly spanStart: bigint;
  spanEnd: bigint;
  readonly tally: Tally;
}

/** Warm-up on other keys (JIT, connections, script cache), flushed so none of it is counted; then the priming call. */
async function prepare(
  redis: RedisUnderTest,
  system: System,
  workload: WorkloadName,
  spec: Workload,
  quick: boolean,
): Promise<Prepared> {
  const size = quick ? spec.quick : spec.full;
  const { design } = system;
  const warmup = traffic(
    keysOf(design, workload, 'warmup', size.warmupKeys),
    size.endpoints,
    size.warmupCalls,
  );
  await drive(await system.caller(warmup), 0, size.warmupCalls, spec.concurrency);
  await system.flush();

  const load = traffic(keysOf(design, workload, 'measured', size.keys), size.endpoints, size.calls);
  const caller = await system.caller(load);
  const placement =
    redis.primaries.length > 1 && design === 'project' ? await primaryOfKeys(redis, load.keys) : undefined;
  const spanStart = process.hrtime.bigint();
  let prime: WorkloadResult['prime'];
  let allowedBefore = 0;
  if (spec.primed) {
    // The key's first call is the cache miss; the cache-hit figures start after it.
    const before = platformCalls(system.platform);
    const primed = await drive(caller, 0, 1, 1);
    prime = {
      latencyMs: (primed.latenciesNs[0] as number) / 1e6,
      platformCalls: platformCallsBetween(before, platformCalls(system.platform)).total,
    };
    allowedBefore = primed.outcomes.allow ?? 0;
  }
  let flood: FloodUnderWay | undefined;
  if (spec.unknownKeyFlood) {
    const keys = spec.unknownKeyFlood.keys[quick ? 'quick' : 'full'];
    const madeUp = traffic(keysOf(design, workload, 'made-up', keys), 1, keys);
    flood = {
      caller: byReason(await system.caller(madeUp)),
      keys,
      callers: spec.unknownKeyFlood.callers,
      made: 0,
      outcomes: {},
      platformCalls: NO_PLATFORM_CALLS,
      ranOut: false,
      spansMs: [],
    };
  }
  return {
    workload,
    spec,
    size,
    system,
    load,
    caller,
    ...(placement && { placement }),
    ...(prime && { prime }),
    ...(flood && { flood }),
    allowedBefore,
    spanStart,
    spanEnd: spanStart,
    tally: new Tally(size.calls),
  };
}

/** Calls `from` .. `from + count - 1` of a prepared workload, timed, then the flush of what they left pending. */
async function measureChunk(
  redis: RedisUnderTest,
  servers: Servers,
  prepared: Prepared,
  from: number,
  count: number,
): Promise<void> {
  const { system, caller, spec, flood } = prepared;
  const statsBefore = await snapshot(redis);
  const sentBefore = system.redisCommandsSent();
  const platformBefore = platformCalls(system.platform);
  const publishedBefore = servers.sns.stats().published;
  const cpuBefore = process.cpuUsage();
  const flooding = flood && floodBeside(flood);
  const run = await drive(caller, from, count, spec.concurrency);
  await flooding?.stop();
  const cpu = process.cpuUsage(cpuBefore);
  prepared.spanEnd = process.hrtime.bigint();
  const sent = system.redisCommandsSent() - sentBefore;
  const platformAfter = platformCalls(system.platform);
  if (flood)
    flood.platformCalls = addPlatformCalls(
      flood.platformCalls,
      platformCallsBetween(platformBefore, platformAfter),
    );
  const published = servers.sns.stats().published - publishedBefore;
  const perPrimary = primaryDeltas(statsBefore, await snapshot(redis));

  const flushStart = process.hrtime.bigint();
  await system.flush();
  const flushMs = Number(process.hrtime.bigint() - flushStart) / 1e6;
  prepared.tally.add({
    from,
    latenciesNs: run.latenciesNs,
    outcomes: run.outcomes,
    durationMs: run.durationMs,
    cpuMicros: cpu.user + cpu.system,
    redisCommandsSent: sent,
    snsPublishes: published,
    platformCalls: platformCallsBetween(platformBefore, platformAfter),
    primaries: perPrimary.map((delta) => ({
      byCommand: delta.executed.byCommand,
      cpuSeconds: delta.cpuSeconds,
      scriptMicros: delta.executed.scriptMicros,
    })),
    flush: {
      durationMs: flushMs,
      platformCalls: platformCallsBetween(platformAfter, platformCalls(system.platform)),
    },
  });
}

/**
 * Starts the flood's next made-up keys; `stop` ends it once the calls beside it are done. Its platform
 * calls are those of the chunk: the hot key beside it is cached and its reports are held until the flush.
 */
function floodBeside(flood: FloodUnderWay): { stop(): Promise<void> } {
  const stopping = new AbortController();
  const startMs = Date.now();
  const remaining = flood.keys - flood.made;
  const run =
    remaining > 0 ? drive(flood.caller, flood.made, remaining, flood.callers, stopping.signal) : undefined;
  return {
    async stop() {
      stopping.abort();
      const made = await run;
      flood.spansMs.push([startMs, Date.now()]);
      flood.made += made?.calls ?? 0;
      for (const [outcome, n] of Object.entries(made?.outcomes ?? {})) {
        flood.outcomes[outcome] = (flood.outcomes[outcome] ?? 0) + (n ?? 0);
      }
      // Every key used: the calls beside it may have gone on without a flood.
      flood.ranOut = flood.made >= flood.keys;
    },
  };
}

function resultOf(redis: RedisUnderTest, prepared: Prepared): WorkloadResult {
  const { workload, system, size, spec, load, tally, placement, prime, flood } = prepared;
  if (!tally.complete) throw new Error(`bench: ${workload}/${system.design} left calls unmeasured`);
  const calls = tally.calls;
  const roundThroughputs = tally.chunkThroughputs;
  const roundRedisCpuMicrosPerCall = tally.chunkRedisCpuMicrosPerCall;
  const roundScriptMicrosPerCall = tally.chunkScriptMicrosPerCall;
  const perPrimary = tally.primaries;
  const executedTotal = perPrimary.reduce((sum, primary) => sum + primary.total, 0);
  const serverCpuSecondsUsed = perPrimary.reduce((sum, primary) => sum + primary.cpuSeconds, 0);
  const scriptMicrosUsed = perPrimary.reduce((sum, primary) => sum + primary.scriptMicros, 0);
  const reported = load.keys.reduce(
    (sum, key) => sum + system.platform.usage(system.setup.serviceId, key, 'hits', 'eternity'),
    0,
  );
  const primaries: PrimaryFigures[] | undefined =
    placement &&
    redis.primaries.map(({ address }, i) => {
      const primary = perPrimary[i] ?? { total: 0, cpuSeconds: 0 };
      return {
        address,
        slots: placement.slotsOf.get(address) ?? 0,
        keys: load.keys.filter((key) => placement.owners.get(key) === address).length,
        authorizations: load.events.filter(
          (event) => placement.owners.get(String(event.headers?.apikey)) === address,
        ).length,
        commandsExecuted: primary.total,
        serverCpuMicros: primary.cpuSeconds * 1e6,
      };
    });
  return {
    workload,
    design: system.design,
    calls,
    keys: size.keys,
    endpoints: size.endpoints,
    concurrency: spec.concurrency,
    warmupCalls: size.warmupCalls,
    durationMs: tally.durationMs,
    spanMs: Number(prepared.spanEnd - prepared.spanStart) / 1e6,
    authorizationsPerSecond: throughput(calls, tally.durationMs),
    ...(roundThroughputs.length > 1 && { roundThroughputs }),
    ...(roundRedisCpuMicrosPerCall.length > 1 && { roundRedisCpuMicrosPerCall }),
    ...(roundScriptMicrosPerCall.length > 1 && { roundScriptMicrosPerCall }),
    latency: summarizeLatencies(tally.latenciesNs),
    processCpuMicrosPerCall: tally.cpuMicros / calls,
    outcomes: tally.outcomes,
    redis: {
      sentPerAuthorization: tally.redisCommandsSent / calls,
      executedPerAuthorization: executedTotal / calls,
      executedByCommand: tally.executedByCommand,
      serverCpuMicrosPerAuthorization: (serverCpuSecondsUsed * 1e6) / calls,
      scriptMicrosPerAuthorization: scriptMicrosUsed / calls,
    },
    snsPublishes: tally.snsPublishes,
    platformCalls: tally.platformCalls,
    flush: { durationMs: tally.flushDurationMs, platformCalls: tally.flushPlatformCalls },
    // An unprotected app meters nothing: none of its calls was allowed by an access check.
    reportedUsage: {
      allowed: system.metered ? prepared.allowedBefore + (tally.outcomes.allow ?? 0) : 0,
      reported,
    },
    ...(prime && { prime }),
    ...(primaries && { primaries }),
    ...(flood && {
      unknownKeyFlood: {
        keys: flood.keys,
        calls: flood.made,
        callers: flood.callers,
        outcomes: flood.outcomes,
        platformCalls: flood.platformCalls,
        gateSeconds: secondsTouched(flood.spansMs),
        ranOut: flood.ranOut,
      },
    }),
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
    const bundle = await bundleLambda(AUTHORIZER_ENTRY, outfile, sdk);
    const lazyPackages = Object.keys(bundle.lazyBytes);
    // The deployed variant on every Node.js at hand (the Lambda runtime's major when installed).
    const nodes = initNodeBinaries(PROJECT_ROOT, NODE_RUNTIME_NAME).slice(
      0,
      sdk === 'external' ? undefined : 1,
    );
    for (const node of nodes) {
      const init = await measureModuleInit(outfile, lazyPackages, env, initRuns, node.path);
      results.push({
        sdk,
        node: node.label,
        minifiedBytes: bundle.minifiedBytes,
        lazyBytes: bundle.lazyBytes,
        initMedianMs: init.medianMs,
        initSamplesMs: init.samples,
        eagerInitMedianMs: init.eagerMedianMs,
        firstPublishMedianMs: init.firstPublishMedianMs,
        lazyMedianMs: init.lazyMedianMs,
        largestModules: bundle.composition.slice(0, 15),
      });
    }
  }
  return results;
}

/** Warm calls of each portal page. */
const PORTAL_CALLS = { full: 1_000, quick: 200 } as const;

function measurePortalLambda(servers: Servers, options: BenchOptions, initRuns: number) {
  console.log('bench: bundling the portal, timing its module init and its pages warm ...');
  return measurePortal({
    projectRoot: PROJECT_ROOT,
    outDirectory: RESULTS_DIR,
    config: accessConfig(servers, servers.redis, 'bench-portal', SETUPS.rest, options.reportWindowSeconds),
    providerKey: BENCH_PROVIDER_KEY,
    initRuns,
    callsPerPage: options.quick ? PORTAL_CALLS.quick : PORTAL_CALLS.full,
  });
}

/** `--portal-only`: the portal's figures alone, printed; no workload, no target, latest.json kept. */
async function portalOnly(options: BenchOptions, initRuns: number): Promise<number> {
  const loadAverageAtStart = os.loadavg()[0] as number;
  const servers = await startServers({}, new Set(), undefined, options.platformLatencyMs);
  try {
    await mkdir(RESULTS_DIR, { recursive: true });
    const portal = await measurePortalLambda(servers, options, initRuns);
    const [first] = servers.redis.primaries as [Primary];
    const redisVersion = /redis_version:(\S+)/.exec(await first.admin.info('server'))?.[1] ?? 'unknown';
    const machine = describeMachine(redisVersion, loadAverageAtStart, 'not pinned');
    console.log(`\nMachine: ${machineLine(machine)}\n\n${portalLines(portal).join('\n')}`);
    return 0;
  } finally {
    await stopServers(servers);
  }
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

/** Pins each Redis process (its pid as INFO tells it) to the placement's CPUs. */
async function pinRedis(primaries: readonly Primary[], placement: Placement | undefined): Promise<void> {
  if (placement === undefined) return;
  for (const { admin } of primaries) {
    const pid = /process_id:(\d+)/.exec(await admin.info('server'))?.[1];
    if (pid === undefined) throw new Error('redis-server INFO names no process_id');
    pinProcess(Number(pid), placement.redisCpus);
  }
}

async function startSingle(placement: Placement | undefined): Promise<RedisUnderTest> {
  const server = await startRedisServer(redisServerBinary());
  const primaries = [
    { address: `${server.host}:${server.port}`, admin: await adminOf(server.host, server.port) },
  ];
  await pinRedis(primaries, placement);
  return { name: 'single', server, settings: server.settings, primaries };
}

/** A local cluster of primaries only: each one's share of the work is the figure. */
async function startCluster(placement: Placement | undefined): Promise<RedisUnderTest> {
  const server = await startRedisCluster(redisServerBinary(), { primaries: CLUSTER_PRIMARIES });
  const primaries = await Promise.all(
    server.nodes.map(async (node) => ({
      address: `${node.host}:${node.port}`,
      admin: await adminOf(node.host, node.port),
    })),
  );
  await pinRedis(primaries, placement);
  return { name: 'cluster', server, settings: server.settings, primaries };
}

async function stopRedis(redis: RedisUnderTest): Promise<void> {
  for (const { admin } of redis.primaries) admin.disconnect();
  await redis.server.stop();
}

/** The platforms (at once, and at the run's latency) with the run's applications on their services. */
async function startServers(
  applications: Partial<Record<BenchServiceId, string[]>>,
  overLimit: ReadonlySet<string>,
  placement: Placement | undefined,
  platformLatencyMs: number,
): Promise<Servers> {
  const redis = await startSingle(placement);
  const config = benchPlatformConfig(applications, overLimit);
  const platform = await startPlatform({ config, port: 0 });
  const distantPlatform = await startPlatform({ config, port: 0, latencyMs: platformLatencyMs });
  const sns = await startSnsEndpoint();
  const issuer = await startTokenIssuer(platform.url);
  return { redis, platform, distantPlatform, sns, issuer };
}

async function stopServers(servers: Servers): Promise<void> {
  await servers.issuer.stop();
  await servers.sns.stop();
  await servers.platform.stop();
  await servers.distantPlatform.stop();
  await stopRedis(servers.redis);
}

/**
 * Runs `workloads` on `redis` (see `runGroups`), each design and set-up with its own clients (made at first
 * use). A group starts from an empty Redis; its members are prepared in turn, then measured in the chunks of
 * `interleavedChunks` (one chunk for a run alone), each chunk followed by its flush.
 */
async function runOn(
  redis: RedisUnderTest,
  servers: Servers,
  workloads: readonly WorkloadName[],
  quick: boolean,
  options: SystemOptions,
): Promise<WorkloadResult[]> {
  const systems = new Map<string, System>();
  const systemFor = (design: Design, setup: SetupName) => {
    const key = `${design}/${setup}`;
    const system = systems.get(key) ?? startSystem(servers, redis, design, setup, options);
    systems.set(key, system);
    return system;
  };
  const results: WorkloadResult[] = [];
  try {
    for (const group of runGroups(workloads)) {
      console.log(`bench: ${group.map(({ workload, design }) => `${workload} / ${design}`).join(', ')} ...`);
      await Promise.all(redis.primaries.map(({ admin }) => admin.flushall()));
      const prepared: Prepared[] = [];
      for (const { workload, design } of group) {
        const spec = WORKLOADS[workload];
        const system = systemFor(design, spec.setup);
        prepared.push(await prepare(redis, system, workload, spec, quick));
      }
      const { group: groupName } = WORKLOADS[(group[0] as Run).workload];
      const rounds = groupName === undefined ? 1 : GROUP_ROUNDS[groupName][quick ? 'quick' : 'full'];
      const members = prepared.map((member) => ({ member, calls: member.size.calls }));
      for (const { member, from, count } of interleavedChunks(members, rounds)) {
        await measureChunk(redis, servers, member, from, count);
      }
      results.push(...prepared.map((member) => resultOf(redis, member)));
    }
  } finally {
    await Promise.all([...systems.values()].map((system) => system.close()));
  }
  return results;
}

/** Every application of the run, by the service its workload's set-up uses (user keys, app ids, client ids). */
function applicationsOf(
  workloads: readonly WorkloadName[],
  quick: boolean,
): Partial<Record<BenchServiceId, string[]>> {
  const applications: Partial<Record<BenchServiceId, string[]>> = {};
  for (const workload of workloads) {
    const { serviceId } = SETUPS[WORKLOADS[workload].setup];
    const into = applications[serviceId] ?? [];
    applications[serviceId] = into;
    into.push(...applicationNamesOf(workload, quick));
  }
  return applications;
}

/** The applications of one workload: every design's warm-up and measured keys. */
function applicationNamesOf(workload: WorkloadName, quick: boolean): string[] {
  const spec = WORKLOADS[workload];
  const size = quick ? spec.quick : spec.full;
  return spec.designs.flatMap((design) => [
    ...keysOf(design, workload, 'warmup', size.warmupKeys),
    ...keysOf(design, workload, 'measured', size.keys),
  ]);
}

/** The applications of the selected refused-flood workloads: on the plan that allows no call. */
function overLimitApplicationsOf(workloads: readonly WorkloadName[], quick: boolean): Set<string> {
  return new Set(
    workloads
      .filter((workload) => OVER_LIMIT_WORKLOADS.has(workload))
      .flatMap((w) => applicationNamesOf(w, quick)),
  );
}

/** Calls of the log bytes measure (issue 34), one at a time, for each logging set-up. */
const LOG_BYTES_CALLS = { full: 10_000, quick: 2_000 } as const;

/**
 * The hot key's CloudWatch Logs bytes per authorization, logged as now and as before (bench/log-bytes.ts),
 * on an authorizer of its own: the hot key's snapshot is primed first, so every measured call is a hit.
 */
async function hotLogBytes(
  servers: Servers,
  options: SystemOptions,
  quick: boolean,
): Promise<{ readonly now: LogBytes; readonly before: LogBytes }> {
  const name = 'bench-log-bytes';
  const config = accessConfig(servers, servers.redis, name, SETUPS.rest, options.reportWindowSeconds);
  // Its report messages are not the measure: the topic takes them and drops them.
  servers.sns.addTopic(`${name}-reports`, () => undefined);
  const redis = createRedisClient(config.redis as NonNullable<AccessConfig['redis']>);
  const sns = createSnsClientWithLatency(servers.sns.url, options.snsLatencyMs);
  const platform = platformClientFromConfig(config, BENCH_PROVIDER_KEY);
  const [event] = traffic([keyOf('project', 'hot', 'measured', 0)], 1, 1).events;
  const hot: HotAuthorizer = (ports) => {
    const authorize = createAuthorizerHandler({ config, redis, sns, platform, ...ports });
    return () => authorize(event as APIGatewayRequestAuthorizerEvent);
  };
  try {
    await hot({ logger: silentLogger, metrics: createMetrics(AUTHORIZER_SERVICE_NAME) })(0);
    const calls = LOG_BYTES_CALLS[quick ? 'quick' : 'full'];
    const before = await measureLogBytes(hot, LOGGING_BEFORE, calls, AUTHORIZER_SERVICE_NAME);
    const now = await measureLogBytes(hot, LOGGING_NOW, calls, AUTHORIZER_SERVICE_NAME);
    return { now, before };
  } finally {
    redis.disconnect();
    platform.close();
    sns.destroy();
  }
}

/** The application workloads' figures the targets judge, from those the run had. */
function appFigures(
  find: (workload: WorkloadName, design: Design) => WorkloadResult | undefined,
): AppFigures {
  const p50 = (design: Design) => find('app-serial', design)?.latency.p50Ms;
  const [unprotected, project, baseline] = [p50('unprotected'), p50('project'), p50('baseline')];
  const hot = find('app-hot', 'project');
  const hotBaseline = find('app-hot', 'baseline');
  const refused = find('app-refused', 'project');
  return {
    ...(unprotected !== undefined &&
      project !== undefined &&
      baseline !== undefined && { serial: { unprotected, project, baseline } }),
    ...(hot &&
      hotBaseline && {
        hot: {
          projectPerSecond: hot.authorizationsPerSecond,
          baselinePerSecond: hotBaseline.authorizationsPerSecond,
          redisCommandsPerCall: hot.redis.sentPerAuthorization,
        },
      }),
    ...(refused && { refusedRedisCommandsPerCall: refused.redis.sentPerAuthorization }),
  };
}

/**
 * The baseline is the original design on the key header: the authorizer's (rest) or the plugin's (app); it
 * has no other set-ups. An unprotected design is the application's only.
 */
function checkWorkloadTable(): void {
  for (const workload of WORKLOAD_NAMES) {
    const spec = WORKLOADS[workload];
    if (spec.designs.includes('baseline') && spec.setup !== 'rest' && spec.setup !== 'app') {
      throw new Error(`bench workload ${workload}: the baseline runs the rest and app set-ups only`);
    }
    if (spec.designs.includes('unprotected') && spec.setup !== 'app') {
      throw new Error(`bench workload ${workload}: only the app set-up runs unprotected`);
    }
  }
}

async function main(): Promise<number> {
  const argv = process.argv.slice(2);
  const options = parseBenchArgs(argv);
  checkWorkloadTable();
  const initRuns = options.quick ? 5 : 15;
  if (options.portalOnly) return portalOnly(options, initRuns);
  const startedAt = new Date().toISOString();
  const loadAverageAtStart = os.loadavg()[0] as number;
  const cpuAtStart = readCpu();
  const applications = applicationsOf(options.workloads, options.quick);
  console.log(
    `bench: report window ${options.reportWindowSeconds} s, SNS publish latency ${options.snsLatencyMs} ms, ` +
      `platform latency of the application workloads ${options.platformLatencyMs} ms, ` +
      `concurrency ${CONCURRENCY} (1 for the serial workloads)${options.quick ? ', quick run' : ''}`,
  );
  const placement = pinBench(console.log);
  console.log(`bench: ${placementText(placement)}`);
  const servers = await startServers(
    applications,
    overLimitApplicationsOf(options.workloads, options.quick),
    placement,
    options.platformLatencyMs,
  );
  try {
    const [first] = servers.redis.primaries as [Primary];
    const redisVersion = /redis_version:(\S+)/.exec(await first.admin.info('server'))?.[1] ?? 'unknown';
    const onCluster = (workload: WorkloadName) => WORKLOADS[workload].redis === 'cluster';
    const results = await runOn(
      servers.redis,
      servers,
      options.workloads.filter((workload) => !onCluster(workload)),
      options.quick,
      options,
    );
    const logBytes = options.workloads.includes('hot')
      ? await hotLogBytes(servers, options, options.quick)
      : undefined;
    const clusterWorkloads = options.workloads.filter(onCluster);
    if (clusterWorkloads.length > 0) {
      console.log(`bench: starting a local Redis cluster of ${CLUSTER_PRIMARIES} primaries ...`);
      const cluster = await startCluster(placement);
      try {
        results.push(...(await runOn(cluster, servers, clusterWorkloads, options.quick, options)));
      } finally {
        await stopRedis(cluster);
      }
    }
    const workloads = options.workloads.flatMap((workload) =>
      results.filter((result) => result.workload === workload),
    );
    if (placement !== undefined) pinProcess(process.pid, placement.allCpus);
    console.log('bench: bundling the authorizer and timing its module init ...');
    const bundles = await measureBundles(
      accessConfig(servers, servers.redis, 'bench-project', SETUPS.rest, options.reportWindowSeconds),
      initRuns,
    );
    const portal = await measurePortalLambda(servers, options, initRuns);

    const find = (workload: WorkloadName, design: Design) =>
      workloads.find((w) => w.workload === workload && w.design === design);
    const externalSdk = bundles.find((b) => b.sdk === 'external') as BundleResult;
    const spreadCluster = find('spread-cluster', 'project');
    const flood = find('flood-over-limit', 'project');
    const throttledFlood = find('flood-throttled', 'project');
    // Its rounds alternate with the other serial workloads' (a run of it alone is one round).
    const hotSerialRounds = find('hot-serial', 'project')?.roundScriptMicrosPerCall;
    const unknownKeyFlood = find('flood-unknown-keys', 'project')?.unknownKeyFlood;
    const comparisons = evaluateComparisons((workload) => {
      const result = find(workload as WorkloadName, 'project');
      return (
        result && {
          ...result.latency,
          authorizationsPerSecond: result.authorizationsPerSecond,
          cpuMicrosPerCall: result.processCpuMicrosPerCall,
          redisCpuMicrosPerCall: result.redis.serverCpuMicrosPerAuthorization,
          scriptMicrosPerCall: result.redis.scriptMicrosPerAuthorization,
          ...(result.roundThroughputs && { roundThroughputs: result.roundThroughputs }),
          ...(result.roundRedisCpuMicrosPerCall && {
            roundRedisCpuMicrosPerCall: result.roundRedisCpuMicrosPerCall,
          }),
          ...(result.roundScriptMicrosPerCall && {
            roundScriptMicrosPerCall: result.roundScriptMicrosPerCall,
          }),
        }
      );
    });
    const hot = find('hot', 'project');
    const hotBaseline = find('hot', 'baseline');
    const cpuAtEnd = readCpu();
    const otherCpu =
      cpuAtStart && cpuAtEnd ? otherCpuPerCore(cpuAtStart, cpuAtEnd, os.cpus().length) : undefined;
    const designFigures = (workload: WorkloadName, design: Design) => {
      const result = find(workload, design);
      return (
        result && {
          authorizationsPerSecond: result.authorizationsPerSecond,
          redisCpuMicrosPerCall: result.redis.serverCpuMicrosPerAuthorization,
        }
      );
    };
    // Undefined for a workload the run left out: its targets against the original design are not judged.
    const bothDesigns = (workload: WorkloadName) => {
      const project = designFigures(workload, 'project');
      const baseline = designFigures(workload, 'baseline');
      return project && baseline && { project, baseline };
    };
    const targets = evaluateTargets({
      reportWindowSeconds: options.reportWindowSeconds,
      ...(hot &&
        hotBaseline && {
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
        }),
      bundle: {
        minifiedBytes: externalSdk.minifiedBytes,
        initMedianMs: externalSdk.initMedianMs,
        eagerInitMedianMs: externalSdk.eagerInitMedianMs,
        loadPerCore: loadAverageAtStart / os.cpus().length,
      },
      ...(flood && {
        flood: {
          sentPerCall: flood.redis.sentPerAuthorization,
          executedPerCall: flood.redis.executedPerAuthorization,
        },
      }),
      ...(throttledFlood && {
        throttledFlood: {
          sentPerCall: throttledFlood.redis.sentPerAuthorization,
          executedPerCall: throttledFlood.redis.executedPerAuthorization,
        },
      }),
      ...(hotSerialRounds && { hitScriptRoundMicros: hotSerialRounds }),
      loadPerCore: {
        start: loadAverageAtStart / os.cpus().length,
        end: (os.loadavg()[0] as number) / os.cpus().length,
      },
      ...(otherCpu !== undefined && { otherCpuPerCore: otherCpu }),
      ...(logBytes && {
        logBytes: { now: logBytes.now.perAuthorization, before: logBytes.before.perAuthorization },
      }),
      ...(unknownKeyFlood && {
        unknownKeyFlood: {
          bound: FLOOD_UNSEEN_CALLS_PER_SECOND,
          platformCalls: unknownKeyFlood.platformCalls.total,
          gateSeconds: unknownKeyFlood.gateSeconds,
          calls: unknownKeyFlood.calls,
          platformBusy: unknownKeyFlood.outcomes[PLATFORM_BUSY] ?? 0,
        },
      }),
      ...(spreadCluster?.primaries && {
        authorizationsPerPrimary: spreadCluster.primaries.map((primary) => primary.authorizations),
      }),
      designs: { hot: bothDesigns('hot'), spread: bothDesigns('spread'), cold: bothDesigns('cold') },
      app: appFigures(find),
    }).concat(comparisonTargets(comparisons));
    const report: BenchReport = {
      startedAt,
      command: ['npm run bench', ...(argv.length > 0 ? ['--', ...argv] : [])].join(' '),
      machine: describeMachine(redisVersion, loadAverageAtStart, placementText(placement), otherCpu),
      settings: {
        quick: options.quick,
        snsLatencyMs: options.snsLatencyMs,
        reportWindowSeconds: options.reportWindowSeconds,
        concurrency: CONCURRENCY,
        initRuns,
      },
      workloads,
      bundles,
      portal,
      comparisons,
      targets,
      soundness: soundnessProblems(workloads, REFUSED_WORKLOADS),
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
