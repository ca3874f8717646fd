/**
 * The whole product on one machine: the local platform (unless every gateway names a platform elsewhere),
 * Redis, the SNS endpoint with one topic and queue per gateway, the reporter and its sweep timer, and the
 * gateway serving every API of the stack file. The authorizer, reporter and echo handlers are the same
 * modules the Lambdas run.
 */
import { SNSClient } from '@aws-sdk/client-sns';
import { createAuthorizerHandler } from '../lambdas/authorizer/handler';
import type { AccessConfig } from '../lambdas/core/config';
import { identitySourceHeaders } from '../lambdas/core/credentials';
import { SNS_CLIENT_SETTINGS } from '../lambdas/core/message';
import type { LogPort, MetricsPort, MetricUnitName } from '../lambdas/core/observability';
import { type PlatformClient, platformClientFromConfig } from '../lambdas/core/platform/client';
import { createRedisClient, type RedisConnection } from '../lambdas/core/redis-client';
import type { SweepResult } from '../lambdas/core/reporting';
import { configuredSecretHeaders, echo } from '../lambdas/echo/handler';
import { createReporterHandler, createSweepHandler } from '../lambdas/reporter/handler';
import { accessGatewayResponses } from '../lib/access-gateway-responses';
import { type AccessLogEntry, type GatewayApi, type LocalGateway, startGateway } from './gateway';
import { withOverrides } from './gateway-responses';
import { type RunningPlatform, startPlatform } from './platform';
import { LocalQueue } from './queue';
import { type LocalRedis, type RedisChoice, startLocalRedis } from './redis';
import { LOCAL_AWS_CREDENTIALS, LOCAL_REGION, type SnsEndpoint, startSnsEndpoint } from './sns-endpoint';
import { type GatewayDefinition, gatewayConfig, parseStackFile, type StackDefinition } from './stack-file';

export const LOCAL_API_ID = 'local';
export const LOCAL_STAGE = 'prod';

export interface LocalStackOptions {
  /** A validated definition, or a parsed stack file (validated here). */
  readonly stack: StackDefinition | unknown;
  /** The gateway's port; default 0, a free port (`npm start` applies the file's `local.port`). */
  readonly port?: number;
  /** Default the file's `local.redis`, else 'auto'. */
  readonly redis?: RedisChoice;
  /**
   * The clock (epoch ms) of the local platform and the handlers, for period rollover and sweep ages in
   * tests. The queue's delays and the sweep interval stay in real time.
   */
  readonly now?: () => number;
  /** Where the stack and the handlers log; default silent. */
  readonly logger?: LogPort;
  /** Sweep interval; 0 disables the timer (tests call flush()). Default the file's setting. */
  readonly sweepIntervalMs?: number;
  /** Hears one entry per answered call (method, path without query, status). */
  readonly accessLog?: (entry: AccessLogEntry) => void;
  /** Environment for THREESCALE_PROVIDER_KEY when the stack is given unparsed; default process.env. */
  readonly env?: Readonly<Record<string, string | undefined>>;
}

export interface LocalStackGateway {
  readonly serviceId: string;
  /** The API's base URL: the gateway URL plus the gateway's base path. */
  readonly url: string;
  readonly basePath: string;
  /** The AccessConfig the authorizer and reporter run with (carries the platform credential: never log it). */
  readonly config: AccessConfig;
  readonly topicArn: string;
  readonly queue: LocalQueue;
  /** Runs the sweep once, as its schedule does: usage pending for a few report windows. */
  sweep(): Promise<SweepResult>;
  /** Runs the sweep over all pending usage, however recent (what flush() does after draining the queue). */
  sweepAll(): Promise<SweepResult>;
}

export interface FlushResult {
  /** Messages still queued after the flush (failed deliveries waiting for a retry). */
  readonly queued: number;
  readonly deadLetters: number;
}

export interface LocalStack {
  /** The first gateway's API URL. */
  readonly gatewayUrl: string;
  readonly gateways: readonly LocalStackGateway[];
  readonly gateway: LocalGateway;
  /** The local platform, when one was started. */
  readonly platform?: RunningPlatform;
  readonly sns: SnsEndpoint;
  readonly redis: LocalRedis;
  /** Totals of every metric the handlers emitted. */
  metrics(): Readonly<Record<string, number>>;
  /** Delivers every queued usage message now and runs the sweep, so pending usage reaches the platform. */
  flush(): Promise<FlushResult>;
  /** Stops taking calls, flushes, and stops everything it started. Idempotent. */
  stop(): Promise<FlushResult>;
}

/** Sums every metric the handlers emit, so the stack (and tests) can read them. */
class CountingMetrics implements MetricsPort {
  readonly totals: Record<string, number> = {};
  addMetric(name: string, _unit: MetricUnitName, value: number): void {
    this.totals[name] = (this.totals[name] ?? 0) + value;
  }
  publishStoredMetrics(): void {}
}

const silent: LogPort = { debug() {}, info() {}, warn() {}, error() {} };

/** Topic and queue names allow letters, digits, - and _ only. */
function resourceName(serviceId: string, taken: Set<string>): string {
  const base = `access-usage-${serviceId.replace(/[^A-Za-z0-9_-]/g, '-')}`.slice(0, 70);
  let name = base;
  for (let n = 2; taken.has(name); n++) name = `${base}-${n}`;
  taken.add(name);
  return name;
}

function isDefinition(value: unknown): value is StackDefinition {
  return typeof value === 'object' && value !== null && Array.isArray((value as StackDefinition).gateways);
}

/** Stops what was started, last first; keeps going when one part fails and rethrows the first failure. */
async function stopAll(steps: readonly (() => Promise<unknown> | unknown)[]): Promise<void> {
  let failure: unknown;
  for (const step of [...steps].reverse()) {
    try {
      await step();
    } catch (error) {
      failure ??= error;
    }
  }
  if (failure !== undefined) throw failure;
}

export async function startLocalStack(options: LocalStackOptions): Promise<LocalStack> {
  const definition = isDefinition(options.stack) ? options.stack : parseStackFile(options.stack, options.env);
  const logger = options.logger ?? silent;
  const metrics = new CountingMetrics();
  const cleanup: (() => Promise<unknown> | unknown)[] = [];
  try {
    const platform = definition.platform
      ? await startPlatform({
          config: definition.platform,
          port: 0,
          ...(options.now && { now: options.now }),
        })
      : undefined;
    if (platform) cleanup.push(() => platform.stop());

    const redis = await startLocalRedis(options.redis ?? definition.local.redis ?? 'auto', (line) =>
      logger.warn(line),
    );
    cleanup.push(() => redis.stop());
    const redisClients: RedisConnection[] = [];
    const newRedisClient = (config: AccessConfig): RedisConnection => {
      const client =
        redis.createInMemoryClient?.() ?? createRedisClient(config.redis ?? redis.settings, { logger });
      redisClients.push(client);
      return client;
    };
    cleanup.push(() =>
      Promise.all(redisClients.map((client) => client.quit().catch(() => client.disconnect()))),
    );

    const sns = await startSnsEndpoint();
    cleanup.push(() => sns.stop());
    const snsClient = new SNSClient({
      ...SNS_CLIENT_SETTINGS,
      endpoint: sns.url,
      region: LOCAL_REGION,
      credentials: LOCAL_AWS_CREDENTIALS,
    });
    cleanup.push(() => snsClient.destroy());

    const platformClients: PlatformClient[] = [];
    cleanup.push(() => {
      for (const client of platformClients) client.close();
    });
    const topicNames = new Set<string>();
    const visibilityTimeoutMs = definition.local.visibilityTimeoutSeconds * 1000;

    const wire = (gateway: GatewayDefinition) => {
      const name = resourceName(gateway.configInput.serviceId, topicNames);
      let queue: LocalQueue | undefined;
      const topicArn = sns.addTopic(name, (message) =>
        queue?.send(message.message, message.messageAttributes),
      );
      const config: AccessConfig = {
        ...gatewayConfig(gateway, platform?.url ?? ''),
        redis: redis.settings,
        topicArn,
      };
      const platformClient = platformClientFromConfig(config, config.platformCredential ?? '');
      platformClients.push(platformClient);
      const reporterDeps = {
        config,
        redis: newRedisClient(config),
        platform: platformClient,
        logger,
        metrics,
        ...(options.now && { now: options.now }),
      };
      const reporter = createReporterHandler(reporterDeps);
      const sweep = createSweepHandler(reporterDeps);
      // A flush reports all pending usage, however recent, not only what the scheduled sweep would.
      const sweepAll = createSweepHandler({ ...reporterDeps, sweepMinAgeMs: 0 });
      queue = new LocalQueue({
        name,
        consumer: reporter,
        deliveryDelayMs: config.reportWindowSeconds * 1000,
        visibilityTimeoutMs,
        maxReceiveCount: definition.local.maxReceiveCount,
        onConsumerError: (error) => logger.error('reporter failed a batch', { error: String(error) }),
      });
      const authorizer = createAuthorizerHandler({
        config,
        redis: newRedisClient(config),
        sns: snsClient,
        platform: platformClient,
        logger,
        metrics,
        ...(options.now && { now: options.now }),
      });
      const hiddenNames = configuredSecretHeaders(config);
      const api: GatewayApi = {
        basePath: gateway.basePath,
        apiId: LOCAL_API_ID,
        stage: LOCAL_STAGE,
        routes: gateway.routes,
        identitySources: identitySourceHeaders(config),
        authorizer,
        backend: (event) => echo(event, { hiddenNames }),
        responses: withOverrides(accessGatewayResponses(config)),
      };
      return { api, config, topicArn, queue, sweep, sweepAll };
    };
    const wired = definition.gateways.map(wire);
    cleanup.push(() => Promise.all(wired.map(({ queue }) => queue.stop())));

    const gateway = await startGateway({
      apis: wired.map(({ api }) => api),
      port: options.port ?? 0,
      ...(options.accessLog && { onResponse: options.accessLog }),
    });
    cleanup.push(() => gateway.stop());

    const gateways: LocalStackGateway[] = wired.map(({ api, config, topicArn, queue, sweep, sweepAll }) => ({
      serviceId: config.serviceId,
      url: `${gateway.url}${api.basePath}`,
      basePath: api.basePath,
      config,
      topicArn,
      queue,
      sweep,
      sweepAll,
    }));

    let flushing: Promise<FlushResult> | undefined;
    const flush = (): Promise<FlushResult> => {
      flushing ??= (async () => {
        for (const entry of gateways) {
          await entry.queue.drain();
          await entry.sweepAll();
        }
        const stats = gateways.map((entry) => entry.queue.stats());
        return {
          queued: stats.reduce((sum, s) => sum + s.queued, 0),
          deadLetters: stats.reduce((sum, s) => sum + s.deadLetters, 0),
        };
      })().finally(() => {
        flushing = undefined;
      });
      return flushing;
    };

    const sweepIntervalMs = options.sweepIntervalMs ?? definition.local.sweepIntervalSeconds * 1000;
    if (sweepIntervalMs > 0) {
      let sweeping: Promise<unknown> | undefined;
      const timer = setInterval(() => {
        sweeping ??= Promise.all(gateways.map((entry) => entry.sweep()))
          .catch((error) => logger.error('sweep failed', { error: String(error) }))
          .finally(() => {
            sweeping = undefined;
          });
      }, sweepIntervalMs);
      timer.unref();
      // A sweep under way finishes before the clients it uses are closed.
      cleanup.push(() => {
        clearInterval(timer);
        return sweeping;
      });
    }

    let stopping: Promise<FlushResult> | undefined;
    const stop = (): Promise<FlushResult> => {
      stopping ??= (async () => {
        // No new calls, then every pending usage to the platform, then the parts, last started first.
        await gateway.stop();
        const result = await flush();
        await stopAll(cleanup);
        return result;
      })();
      return stopping;
    };

    return {
      gatewayUrl: gateways[0]?.url ?? gateway.url,
      gateways,
      gateway,
      ...(platform && { platform }),
      sns,
      redis,
      metrics: () => ({ ...metrics.totals }),
      flush,
      stop,
    };
  } catch (error) {
    await stopAll(cleanup).catch(() => undefined);
    throw error;
  }
}
