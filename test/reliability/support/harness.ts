/**
 * The product wired as in AWS, every part real and on loopback, with a handle on each failure:
 *
 *   authorizer handler --(Redis line: cuttable TCP proxy)--> redis-server (can be killed, restarted)
 *        |  \--> platform client --(fault proxy: 503 / hang)--> local platform
 *        \--> SNS SDK client --> local SNS endpoint (injected failures) --(can lose messages)--> local queue
 *   local queue (delay, redelivery of batch item failures, DLQ) --> reporter handler; sweep handler
 *
 * In oauth mode the built-in token issuer runs too (its platform client on the fault proxy, its failed
 * client checks in the same Redis), and the authorizer trusts its tokens.
 *
 * The queue never delivers on its own timer (a delay of an hour): the test says when the reporter
 * runs, so no fault ever lands in the middle of a command unless the test wants it to.
 */
import { SNSClient } from '@aws-sdk/client-sns';
import type Redis from 'ioredis';
import { accessCacheOf } from '../../../core/budget/cache-of-config';
import { serviceKeys } from '../../../core/budget/keys';
import { createRedisClient } from '../../../core/budget/redis-client';
import { credentialIdOf } from '../../../core/credentials';
import { sealerOf } from '../../../core/credentials/seal';
import { redisTokensNotBefore } from '../../../core/credentials/token-not-before';
import type { LogPort, MetricsPort } from '../../../core/observability/observability';
import { createPlatformClient, type PlatformClient } from '../../../core/platform/client';
import type { PlatformPort } from '../../../core/platform/types';
import type { AccessConfig, AccessConfigInput, CredentialMode } from '../../../core/settings/config';
import type { SoapSettings } from '../../../core/soap/settings';
import { createAuthorizerHandler } from '../../../lambdas/authorizer/handler';
import {
  createReporterHandler,
  createSweepHandler,
  type ReporterHandler,
  type SweepHandler,
} from '../../../lambdas/reporter/handler';
import { createSoapAccessProxyHandler, type SoapProxyHandler } from '../../../lambdas/soap/handler';
import { redisFailedClients } from '../../../lambdas/token/endpoint';
import { guessCounterOf } from '../../../lambdas/token/guess-limit';
import { type RunningPlatform, startPlatform } from '../../../local/platform';
import { LocalQueue } from '../../../local/queue';
import { freePort } from '../../../local/redis';
import {
  LOCAL_AWS_CREDENTIALS,
  LOCAL_REGION,
  type SnsEndpoint,
  startSnsEndpoint,
} from '../../../local/sns-endpoint';
import { type Answer, type Authorizer, answerOf } from './answers';
import { countingMetrics } from './capture';
import { type FaultProxy, startFaultProxy } from './fault-proxy';
import { accessConfig, SERVICE_ID, type ServiceFixture, serviceFixture } from './fixture';
import { startTestRedis, type TestRedisServer } from './redis-server';
import { keyEvent, type PathSpelling, routeEvent } from './request-events';
import { startTcpProxy, type TcpProxy } from './tcp-proxy';
import { startTokenIssuer, type TokenIssuer } from './token-issuer';
import { startWebhookReceiver } from './webhook-receiver';

const HOUR_MS = 3_600_000;
const silent: LogPort = { debug() {}, info() {}, warn() {}, error() {} };

export interface HarnessOptions {
  readonly apps?: number;
  readonly mode?: CredentialMode;
  /** app_id mode: keys of each application (default 1). */
  readonly keysPerApp?: number;
  readonly overrides?: Partial<AccessConfigInput>;
  readonly logger?: LogPort;
  readonly metrics?: MetricsPort;
  /** Wraps the platform port of each reporter container (for instance to make one die after its POST). */
  readonly reporterPlatform?: (port: PlatformPort, container: ReporterContainer) => PlatformPort;
  /** Asked for each SNS delivery: true loses the message between SNS and the queue. */
  readonly loseMessage?: () => boolean;
  readonly maxReceiveCount?: number;
  /** The authorizer's and reporter's clock; default Date.now. */
  readonly now?: () => number;
  /** The platform sends its webhooks to the webhook function, as `npm start` wires them; default none. */
  readonly webhooks?: boolean;
}

/** One reporter Lambda container: its own Redis connection, which dies with it. */
export interface ReporterContainer {
  readonly redis: Redis;
  readonly reporter: ReporterHandler;
  /** The sweep as deployed: usage older than a few report windows (by the harness clock). */
  readonly sweep: SweepHandler;
  /** The sweep with no minimum age: every pending usage. */
  readonly sweepAll: SweepHandler;
  /** Set when the container died mid-invocation: the invocation returns nothing, the batch comes back. */
  dead: boolean;
  die(): void;
}

/** Makes a reporter container die between its accepted POST to the platform and its clean-up. */
export interface ReporterDeath {
  /** For HarnessOptions.reporterPlatform. */
  readonly reporterPlatform: (port: PlatformPort, container: ReporterContainer) => PlatformPort;
  /** The next report the platform accepts kills the container that sent it (once). */
  arm(): void;
  disarm(): void;
}

export function reporterDeath(onDeath: () => void = () => undefined): ReporterDeath {
  let armed = false;
  return {
    reporterPlatform: (port, container) => ({
      authorize: (credential, usage) => port.authorize(credential, usage),
      authrep: (credential, usage) => port.authrep(credential, usage),
      async report(transactions) {
        const outcome = await port.report(transactions);
        if (armed && outcome.kind === 'accepted') {
          armed = false;
          onDeath();
          container.die();
        }
        return outcome;
      },
    }),
    arm() {
      armed = true;
    },
    disarm() {
      armed = false;
    },
  };
}

export interface Harness {
  readonly fixture: ServiceFixture;
  readonly config: AccessConfig;
  readonly redisServer: TestRedisServer;
  /** The line between the handlers and redis-server. */
  readonly redisLine: TcpProxy;
  readonly platform: RunningPlatform;
  readonly platformLine: FaultProxy;
  readonly sns: SnsEndpoint;
  readonly queue: LocalQueue;
  /** oauth mode: the issuer of the tokens the authorizer accepts. */
  readonly issuer?: TokenIssuer;
  readonly authorizer: Authorizer;
  /** The SNS messages that reached the queue (bodies). */
  readonly delivered: readonly string[];
  reporterContainer(): ReporterContainer;
  /** A new reporter container (the previous one is gone). */
  replaceReporter(): ReporterContainer;
  /**
   * A call with the consumer's key: `apikey` in user_key mode; in app_id mode, the key of `appId`; in
   * oauth mode `userKey` is an access token, sent as `Authorization: Bearer`.
   */
  call(
    userKey: string,
    word?: string,
    collection?: 'words' | 'sentences',
    appId?: string,
    spelling?: PathSpelling,
  ): Promise<Answer>;
  /**
   * Everything pending reaches the platform: queued messages delivered (redelivered until they succeed
   * or go to the DLQ), then the sweep for what has no message. Bounded rounds; returns the credentials
   * still holding unreported usage (empty on success).
   */
  flush(): Promise<string[]>;
  /** The platform's count of `hits` of an application, all time. */
  reportedHits(appId: string): number;
  /** The SOAP access proxy on the authorizer's ports (same Redis line, platform line, SNS, logger). */
  soapProxy(settings: SoapSettings): SoapProxyHandler;
  credentialId(userKey: string): string;
  stop(): Promise<void>;
}

export async function startHarness(options: HarnessOptions = {}): Promise<Harness> {
  const fixture = serviceFixture(options.apps ?? 5, options.mode, options.keysPerApp);
  const logger = options.logger ?? silent;
  const metrics = options.metrics ?? countingMetrics();
  const now = options.now ?? Date.now;
  const redisServer = await startTestRedis();
  const redisLine = await startTcpProxy(redisServer.host, redisServer.port);
  const platform = await startPlatform({ config: fixture.platformConfig, port: 0 });
  const platformLine = await startFaultProxy(platform.url);
  const sns = await startSnsEndpoint();
  const delivered: string[] = [];
  let queue: LocalQueue | undefined;
  const topicArn = sns.addTopic('reliability-usage', (message) => {
    if (options.loseMessage?.()) return;
    delivered.push(message.message);
    queue?.send(message.message, message.messageAttributes);
  });
  // The issuer URL is in the authorizer's settings, so its port is chosen before either starts.
  const issuerPort = fixture.mode === 'oauth' ? await freePort() : undefined;
  const config = accessConfig({
    fixture,
    platformUrl: platformLine.url,
    redis: redisLine,
    topicArn,
    overrides: {
      ...(issuerPort !== undefined && { oidcIssuer: `http://127.0.0.1:${issuerPort}` }),
      ...options.overrides,
    },
  });
  const applicationOf = (key: string) =>
    [...fixture.active, ...fixture.suspended].find((candidate) => candidate.keys.includes(key));
  const redisSettings = { host: redisLine.host, port: redisLine.port, tls: false };
  const platformClient = (): PlatformClient =>
    createPlatformClient({
      serviceId: SERVICE_ID,
      serviceAuth: { kind: 'provider_key', providerKey: fixture.providerKey },
      baseUrl: platformLine.url,
      timeoutMs: config.platformTimeoutMs,
      reportTimeoutMs: config.reportTimeoutMs,
    });
  const snsClient = new SNSClient({
    endpoint: sns.url,
    region: LOCAL_REGION,
    credentials: LOCAL_AWS_CREDENTIALS,
  });
  const authorizerRedis = createRedisClient(redisSettings, { logger });
  const authorizerPlatform = platformClient();
  // The authorizer and the SOAP proxy decide on the same ports, as in the stack.
  const deciderPorts = {
    config,
    redis: authorizerRedis,
    sns: snsClient,
    platform: authorizerPlatform,
    now,
    logger,
    metrics,
  };
  const authorizer = createAuthorizerHandler(deciderPorts);
  // The webhook function is a Lambda of its own: its own Redis connection and platform client.
  const webhookRedis = createRedisClient(redisSettings, { logger });
  const webhookPlatform = platformClient();
  const webhookReceiver = options.webhooks
    ? await startWebhookReceiver(
        {
          serviceId: config.serviceId,
          credentialMode: config.credentialMode,
          cache: accessCacheOf(webhookRedis, config),
          tokensNotBefore: redisTokensNotBefore(webhookRedis, config.serviceId, logger),
          sealer: sealerOf(config),
          platform: webhookPlatform,
          now,
          logger,
          metrics,
        },
        platform,
        authorizer,
      )
    : undefined;
  const issuerRedis = issuerPort === undefined ? undefined : createRedisClient(redisSettings, { logger });
  const issuerPlatform = issuerPort === undefined ? undefined : platformClient();
  const issuer =
    issuerRedis && issuerPlatform
      ? await startTokenIssuer({
          serviceId: SERVICE_ID,
          platform: issuerPlatform,
          failedClients: redisFailedClients(issuerRedis),
          guesses: guessCounterOf(issuerRedis, logger),
          logger,
          port: issuerPort,
        })
      : undefined;

  const reporterClients: { redis: Redis; platform: PlatformClient }[] = [];
  const newContainer = (): ReporterContainer => {
    const redis = createRedisClient(redisSettings, { logger });
    const client = platformClient();
    reporterClients.push({ redis, platform: client });
    const container = {
      redis,
      dead: false,
      die() {
        container.dead = true;
        redis.disconnect();
      },
    } as ReporterContainer;
    const platformPort = options.reporterPlatform?.(client, container) ?? client;
    const deps = { config, redis, platform: platformPort, now, logger, metrics };
    return Object.assign(container, {
      reporter: createReporterHandler(deps),
      sweep: createSweepHandler(deps),
      sweepAll: createSweepHandler({ ...deps, sweepMinAgeMs: 0 }),
    });
  };
  let container = newContainer();

  queue = new LocalQueue({
    name: 'reliability-usage',
    deliveryDelayMs: HOUR_MS,
    visibilityTimeoutMs: HOUR_MS,
    maxReceiveCount: options.maxReceiveCount ?? 5,
    consumer: async (event) => {
      const current = container;
      const response = await current.reporter(event);
      if (current.dead) throw new Error('the reporter container died before answering');
      return response;
    },
  });
  const theQueue = queue;

  const pendingCredentials = async (): Promise<string[]> => {
    const found: string[] = [];
    let cursor = '0';
    let rounds = 0;
    do {
      const [next, keys] = await redisServer.inspector.scan(
        cursor,
        'MATCH',
        serviceKeys(SERVICE_ID).pattern('since'),
        'COUNT',
        1000,
      );
      cursor = next;
      found.push(...keys);
      rounds++;
    } while (cursor !== '0' && rounds < 10_000);
    return found;
  };

  return {
    fixture,
    config,
    redisServer,
    redisLine,
    platform,
    platformLine,
    sns,
    queue: theQueue,
    ...(issuer && { issuer }),
    authorizer,
    delivered,
    reporterContainer: () => container,
    replaceReporter() {
      container = newContainer();
      return container;
    },
    call(key, word, collection, appId, spelling) {
      if (fixture.mode === 'user_key') return answerOf(authorizer, keyEvent(key, word, collection, spelling));
      if (fixture.mode === 'oauth') {
        return answerOf(
          authorizer,
          routeEvent({ authorization: `Bearer ${key}` }, word, collection, spelling),
        );
      }
      const app = appId ?? applicationOf(key)?.id ?? 'unknown-app';
      return answerOf(authorizer, routeEvent({ app_id: app, app_key: key }, word, collection, spelling));
    },
    async flush() {
      for (let round = 0; round < 5; round++) {
        await theQueue.drain();
        await container.sweepAll();
        const left = await pendingCredentials();
        if (left.length === 0 && theQueue.stats().queued === 0) return [];
      }
      return pendingCredentials();
    },
    reportedHits: (appId) => platform.usage(SERVICE_ID, appId, 'hits', 'eternity'),
    soapProxy: (settings) => createSoapAccessProxyHandler({ ...deciderPorts, settings }),
    credentialId(key) {
      if (fixture.mode === 'user_key') return credentialIdOf(SERVICE_ID, { kind: 'user_key', userKey: key });
      const app = applicationOf(key);
      return credentialIdOf(SERVICE_ID, { kind: 'app_id', appId: app?.id ?? '', appKey: key });
    },
    async stop() {
      await theQueue.stop();
      await webhookReceiver?.stop();
      webhookRedis.disconnect();
      webhookPlatform.close();
      await issuer?.stop();
      issuerRedis?.disconnect();
      issuerPlatform?.close();
      authorizerRedis.disconnect();
      authorizerPlatform.close();
      for (const client of reporterClients) {
        client.redis.disconnect();
        client.platform.close();
      }
      snsClient.destroy();
      await sns.stop();
      await platformLine.stop();
      await platform.stop();
      await redisLine.stop();
      await redisServer.stop();
    },
  };
}
