/**
 * The application workloads' systems: one small Express app, the same in every design, called over HTTP
 * on a keep-alive connection per caller. `unprotected` runs it bare; `project` behind the plugin
 * (access.express(), in-process reporting); `baseline` behind the original plugin design (one authrep per
 * request, original-plugin.ts). Both protected designs call the distant platform, which answers after the
 * run's platform latency.
 */
import { type Agent, createServer, Agent as HttpAgent, request as httpRequest } from 'node:http';
import express, { type RequestHandler } from 'express';
import { createRedisClient, type RedisConnection } from '../core/budget/redis-client';
import { silentLogger, silentMetrics } from '../core/observability/observability';
import { platformClientFromConfig } from '../core/platform/client';
import { type AccessConfig, parseConfig } from '../core/settings/config';
import { createSweepHandler } from '../lambdas/reporter/handler';
import { closeServer, listenOnLoopback } from '../local/http-server';
import { createAccessControl } from '../plugin';
import {
  BENCH_PROVIDER_KEY,
  type Call,
  MAPPING_RULES,
  type Traffic,
  UNSEEN_CALLS_OUT_OF_REACH,
} from './fixture';
import { originalPluginMiddleware } from './original-plugin';
import { type CommandCounter, countSentCommands } from './redis-counter';
import type { Design } from './report';
import type { Caller, RedisUnderTest, Servers, System, SystemOptions } from './system';
import type { Setup } from './workloads';

/** Each call is bounded: a hung app fails its call, not the run. */
const CALL_TIMEOUT_MS = 30_000;

/** How the bench reads the app's answers, in the authorizer workloads' words. */
export function outcomeOfStatus(status: number): string {
  if (status === 200) return 'allow';
  if (status === 401) return 'unauthorized';
  // The plugin refuses a limit with 429, the original design with 403: both an explicit refusal.
  if (status === 403 || status === 429) return 'explicit_deny';
  return `status ${status}`;
}

/** One HTTP call on the agent's keep-alive connections; resolves to the status once the body is read. */
function send(agent: Agent, url: string, call: Call): Promise<number> {
  return new Promise((resolve, reject) => {
    const outgoing = httpRequest(
      `${url}${call.endpoint.path}`,
      { method: call.endpoint.method, agent, headers: { apikey: call.key }, timeout: CALL_TIMEOUT_MS },
      (incoming) => {
        incoming.resume();
        incoming.once('end', () => resolve(incoming.statusCode ?? 0));
        incoming.once('error', reject);
      },
    );
    outgoing.once('timeout', () => outgoing.destroy(new Error(`no answer within ${CALL_TIMEOUT_MS} ms`)));
    outgoing.once('error', reject);
    outgoing.end();
  });
}

/** The app: whatever the access check lets through gets a small JSON answer. */
async function startApp(access: RequestHandler | undefined): Promise<{ url: string; stop(): Promise<void> }> {
  const app = express();
  if (access) app.use(access);
  app.use((_request, response) => {
    response.json({ ok: true });
  });
  const server = createServer(app);
  const port = await listenOnLoopback(server, 0);
  return { url: `http://127.0.0.1:${port}`, stop: () => closeServer(server) };
}

/** What sits in front of the app in each design, with what it opened and what it counts. */
interface Guard {
  readonly middleware?: RequestHandler;
  readonly metered: boolean;
  readonly redisCommandsSent: () => number;
  flush(): Promise<void>;
  close(): Promise<void>;
}

function configOf(
  servers: Servers,
  redis: RedisUnderTest,
  setup: Setup,
  options: SystemOptions,
): AccessConfig {
  return parseConfig({
    serviceId: setup.serviceId,
    platformUrl: servers.distantPlatform.url,
    platformCredential: BENCH_PROVIDER_KEY,
    mappingRules: MAPPING_RULES,
    reportWindowSeconds: options.reportWindowSeconds,
    unseenCredentialCallsPerSecond: UNSEEN_CALLS_OUT_OF_REACH,
    redis: redis.settings,
  });
}

/**
 * The plugin gets an ioredis client and talks through its own duplicate of it (plugin/redis.ts): the
 * duplicate is the connection whose commands are counted. Pending usage left after a chunk is reported
 * by the core's sweep, as the authorizer's flush does; the plugin's own flusher runs each report window.
 */
function pluginGuard(config: AccessConfig, setup: Setup): Guard {
  const given = createRedisClient(config.redis as NonNullable<AccessConfig['redis']>);
  let counter: CommandCounter | undefined;
  const duplicate = given.duplicate.bind(given) as (...args: unknown[]) => RedisConnection;
  (given as { duplicate: (...args: unknown[]) => RedisConnection }).duplicate = (...args) => {
    const connection = duplicate(...args);
    counter = countSentCommands(connection);
    return connection;
  };
  const access = createAccessControl({
    serviceId: setup.serviceId,
    platformUrl: config.platformUrl,
    platformCredential: BENCH_PROVIDER_KEY,
    mappingRules: config.mappingRules,
    reportWindowSeconds: config.reportWindowSeconds,
    unseenCredentialCallsPerSecond: config.unseenCredentialCallsPerSecond,
    redis: given,
    reporting: 'in-process',
    sweepIntervalMs: 0,
  });
  const reporterRedis = createRedisClient(config.redis as NonNullable<AccessConfig['redis']>);
  const reporterPlatform = platformClientFromConfig(config, BENCH_PROVIDER_KEY, { caller: 'reporter' });
  const sweepAll = createSweepHandler({
    config,
    redis: reporterRedis,
    platform: reporterPlatform,
    logger: silentLogger,
    metrics: silentMetrics,
    sweepMinAgeMs: 0,
  });
  return {
    middleware: access.express(),
    metered: true,
    redisCommandsSent: () => {
      if (counter === undefined)
        throw new Error('bench: the plugin opened no connection from the client given');
      return counter.sent();
    },
    flush: async () => {
      await sweepAll();
    },
    async close() {
      await access.close();
      reporterPlatform.close();
      reporterRedis.disconnect();
      given.disconnect();
    },
  };
}

const GUARDS: Readonly<Record<Design, (config: AccessConfig, setup: Setup) => Guard>> = {
  unprotected: () => ({
    metered: false,
    redisCommandsSent: () => 0,
    flush: async () => undefined,
    close: async () => undefined,
  }),
  project: pluginGuard,
  // No cache, so no Redis; every call is reported by its own authrep, so nothing is left to flush.
  baseline: (config) => {
    const platform = platformClientFromConfig(config, BENCH_PROVIDER_KEY);
    return {
      middleware: originalPluginMiddleware({ config, platform }),
      metered: true,
      redisCommandsSent: () => 0,
      flush: async () => undefined,
      close: async () => platform.close(),
    };
  },
};

/** The app of `design`, started on first use; its callers share one keep-alive agent. */
export function startAppSystem(
  servers: Servers,
  redis: RedisUnderTest,
  design: Design,
  setup: Setup,
  options: SystemOptions,
): System {
  const guard = GUARDS[design](configOf(servers, redis, setup, options), setup);
  const agent = new HttpAgent({ keepAlive: true });
  let app: ReturnType<typeof startApp> | undefined;
  return {
    design,
    setup,
    platform: servers.distantPlatform,
    metered: guard.metered,
    async caller(load: Traffic): Promise<Caller> {
      app ??= startApp(guard.middleware);
      const { url } = await app;
      return {
        send: (i) => send(agent, url, load.calls[i] as Call),
        outcome: (settled) =>
          settled.status === 'fulfilled' ? outcomeOfStatus(settled.value as number) : 'error',
      };
    },
    redisCommandsSent: guard.redisCommandsSent,
    flush: () => guard.flush(),
    async close() {
      agent.destroy();
      await (await app)?.stop();
      await guard.close();
    },
  };
}
