/**
 * The whole product on one machine: the local platform (unless every gateway names a platform elsewhere),
 * Redis, the SNS endpoint with one topic and queue per gateway, the reporter and its sweep timer, and the
 * gateway serving every API of the stack file. The authorizer, reporter and echo handlers are the same
 * modules the Lambdas run.
 */
import { randomBytes } from 'node:crypto';
import { dirname } from 'node:path';
import { SNSClient } from '@aws-sdk/client-sns';
import { snsAlertPublisher } from '../adapters/sns/alert-publisher';
import { SNS_CLIENT_SETTINGS } from '../adapters/sns/client';
import { DOCS_PATH, DOCS_ROUTES } from '../contract/docs';
import { accessGatewayResponses } from '../contract/gateway-responses';
import { accessCacheOf } from '../core/budget/cache-of-config';
import type { RejectedUsage } from '../core/budget/cache-types';
import { createRedisClient, type RedisConnection } from '../core/budget/redis-client';
import {
  credentialHeaderNames,
  credentialPromptOf,
  type IdentitySource,
  identitySourcesOf,
} from '../core/credentials';
import { sealerOf } from '../core/credentials/seal';
import { redisTokensNotBefore } from '../core/credentials/token-not-before';
import type { LogPort, MetricsPort, MetricUnitName } from '../core/observability/observability';
import { type PlatformClient, platformClientFromConfig } from '../core/platform/client';
import type { UsageAlert } from '../core/reporting/alerts';
import type { SweepResult } from '../core/reporting/sweep';
import { type AccessConfig, externalIssuer } from '../core/settings/config';
import { corsPreflightOptions, gatewayResponseCorsHeaders } from '../core/settings/cors';
import {
  type AuthorizerDeps,
  type AuthorizerHandler,
  createAuthorizerHandler,
} from '../lambdas/authorizer/handler';
import { createDocsHandler } from '../lambdas/docs/handler';
import { swaggerDocument } from '../lambdas/docs/swagger';
import { configuredSecretHeaders, echo } from '../lambdas/echo/handler';
import { createReporterHandler, createSweepHandler } from '../lambdas/reporter/handler';
import { createSoapAccessProxyHandler } from '../lambdas/soap/handler';
import {
  DISCOVERY_PATH,
  JWKS_PATH,
  redisFailedClients,
  TOKEN_PATH,
  TokenEndpoint,
} from '../lambdas/token/endpoint';
import { guessCounterOf } from '../lambdas/token/guess-limit';
import { createTokenHandler } from '../lambdas/token/handler';
import { localTokenSigner } from '../lambdas/token/signer';
import { createWebhookHandler, WEBHOOK_PATH, WEBHOOK_ROUTE } from '../lambdas/webhooks/handler';
import { corsPreflightMethods } from './cors-preflight';
import {
  type AccessLogEntry,
  type ApiMethod,
  type BackendFunction,
  type GatewayApi,
  type LocalGateway,
  openMethods,
  protectedMethods,
  startGateway,
} from './gateway';
import { withHeaders, withOverrides } from './gateway-responses';
import { type MailSink, startMailSink } from './mail-sink';
import { type RunningPlatform, startPlatform } from './platform';
import { type PluginApp, startPluginApp } from './plugin-app';
import { localPortal } from './portal';
import { LocalQueue } from './queue';
import { freePort, type LocalRedis, type RedisChoice, startLocalRedis } from './redis';
import {
  LOCAL_AWS_CREDENTIALS,
  LOCAL_REGION,
  messageFor,
  type PublishedMessage,
  type SnsEndpoint,
  startSnsEndpoint,
} from './sns-endpoint';
import { type SoapEchoServer, startSoapEcho } from './soap-echo';
import {
  type ApiType,
  type GatewayDefinition,
  gatewayConfig,
  parseStackFile,
  type SoapRouteDefinition,
  type StackDefinition,
  stagePathOf,
} from './stack-file';

export const LOCAL_API_ID = 'local';
export const LOCAL_STAGE = 'prod';
/** swagger-ui-dist's files, served from the package as installed. */
const SWAGGER_UI_DIR = dirname(require.resolve('swagger-ui-dist/package.json'));

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
  /**
   * Command timeout of the functions' Redis clients; default the Lambda bound (300 ms). Every function
   * here shares one event loop, so a test that drives hundreds of concurrent calls through the stack on
   * a busy machine can give a longer one, lest a starved event loop pass for a slow Redis.
   */
  readonly redisCommandTimeoutMs?: number;
  /** Hears each usage alert the reporter publishes (npm start prints it). */
  readonly onAlert?: (alert: UsageAlert) => void;
  /**
   * Whether the local platform sends its webhooks to each gateway's receiver (`POST /webhooks/platform`);
   * default true. The receiver is served either way.
   */
  readonly webhooks?: boolean;
  /** Environment for THREESCALE_PROVIDER_KEY when the stack is given unparsed; default process.env. */
  readonly env?: Readonly<Record<string, string | undefined>>;
  /**
   * Also runs the demo's Express app behind the plugin (plugin-app.ts) with the first gateway's settings,
   * on this port (0: a free one); default none.
   */
  readonly pluginApp?: { readonly port: number };
}

export interface LocalStackGateway {
  readonly serviceId: string;
  readonly apiType: ApiType;
  /** The API's base URL: the gateway URL plus the gateway's base path and stage. */
  readonly url: string;
  readonly basePath: string;
  /** The API's interactive documentation (Swagger UI); its document is at `${docsUrl}/swagger.json`. */
  readonly docsUrl: string;
  /** The AccessConfig the authorizer and reporter run with (carries the platform credential: never log it). */
  readonly config: AccessConfig;
  readonly topicArn: string;
  /** The usage alerts topic (the reporter publishes to it). */
  readonly alertsTopicArn: string;
  readonly queue: LocalQueue;
  /** Runs the sweep once, as its schedule does: usage pending for a few report windows. */
  sweep(): Promise<SweepResult>;
  /** Runs the sweep over all pending usage, however recent (what flush() does after draining the queue). */
  sweepAll(): Promise<SweepResult>;
  /** Usage the platform would not take (a metric it does not have), kept in Redis per application. */
  rejectedUsage(): Promise<RejectedUsage[]>;
  /** The SOAP route's URL, when the gateway has one (docs/soap.md). */
  readonly soapUrl?: string;
  /** The webhook receiver's URL, its token in the query (a secret: never log it). */
  readonly webhookUrl: string;
  /** The developer portal's URL, when the gateway serves one (docs/portal.md). */
  readonly portalUrl?: string;
}

/** Usage of one metric the platform would not take (it does not have the metric): kept, never reported. */
export interface NotAccepted {
  readonly metric: string;
  readonly usage: number;
  /** How many applications' usage it is. */
  readonly applications: number;
}

export interface FlushResult {
  /** Messages still queued after the flush (failed deliveries waiting for a retry). */
  readonly queued: number;
  readonly deadLetters: number;
  /** Applications whose usage is still pending after the flush (the platform failed, or refused the report). */
  readonly unreported: number;
  readonly notAccepted: readonly NotAccepted[];
}

function notAcceptedOf(rejected: readonly RejectedUsage[]): NotAccepted[] {
  const byMetric = new Map<string, { usage: number; applications: Set<string> }>();
  for (const { credentialId, usage } of rejected) {
    for (const [metric, value] of Object.entries(usage)) {
      const entry = byMetric.get(metric) ?? { usage: 0, applications: new Set<string>() };
      entry.usage += value;
      entry.applications.add(credentialId);
      byMetric.set(metric, entry);
    }
  }
  return [...byMetric.entries()].map(([metric, { usage, applications }]) => ({
    metric,
    usage,
    applications: applications.size,
  }));
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
  /** The demo SOAP backend, when a gateway's SOAP route names no soapBackendUrl. */
  readonly soapEcho?: SoapEchoServer;
  /** The portal's e-mails (local only), when a gateway serves a portal. */
  readonly mailSink?: MailSink;
  /** The Express app behind the plugin, when asked for: one budget with the first gateway. */
  readonly pluginApp?: PluginApp;
  /** Totals of every metric the handlers emitted. */
  metrics(): Readonly<Record<string, number>>;
  /** Every usage alert published so far, oldest first. */
  alerts(): readonly UsageAlert[];
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
  /** Summed with the rest: locally a name's total is what the tests read. */
  addCountPerMetric(name: string, _platformMetric: string, value: number): void {
    this.addMetric(name, 'Count', value);
  }
  publishStoredMetrics(): void {}
}

const silent: LogPort = { debug() {}, info() {}, warn() {}, error() {} };

/** Topic and queue names allow letters, digits, - and _ only. */
function resourceName(serviceId: string, taken: Set<string>, kind = 'usage'): string {
  const base = `access-${kind}-${serviceId.replace(/[^A-Za-z0-9_-]/g, '-')}`.slice(0, 70);
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

/**
 * The SOAP route: open (the proxy reads the credential from the envelope and decides itself), with the
 * proxy on the authorizer's ports; allowed calls go to the file's soapBackendUrl, else the demo echo.
 */
function soapMethod(
  soap: SoapRouteDefinition,
  echo: SoapEchoServer | undefined,
  ports: AuthorizerDeps,
): ApiMethod {
  const soapBackendUrl = soap.soapBackendUrl ?? echo?.url;
  if (soapBackendUrl === undefined)
    throw new Error('the SOAP route has no backend: the echo was not started');
  return {
    route: soap.route,
    authorization: 'NONE',
    integration: createSoapAccessProxyHandler({ ...ports, settings: { ...soap.settings, soapBackendUrl } }),
  };
}

/**
 * The API of a gateway entry, of its kind: a REST API answers refusals with the access gateway responses
 * (CORS headers included); an HTTP API with its own answers, no identity source (as protect() attaches its
 * authorizer, so every refusal comes from the authorizer) and its CORS headers on every answer.
 */
function gatewayApi(
  gateway: GatewayDefinition,
  parts: {
    readonly methods: readonly ApiMethod[];
    readonly identitySources: readonly IdentitySource[];
    readonly authorizer: AuthorizerHandler;
    readonly config: AccessConfig;
  },
): GatewayApi {
  const { cors } = gateway;
  const mounted = {
    basePath: gateway.basePath,
    stagePath: stagePathOf(gateway),
    apiId: LOCAL_API_ID,
    methods: parts.methods,
  };
  if (gateway.apiType === 'http') {
    return {
      ...mounted,
      apiType: 'http',
      stage: gateway.stage ?? '$default',
      identitySources: [],
      authorizer: parts.authorizer,
      answerHeaders: gatewayResponseCorsHeaders(cors),
    };
  }
  return {
    ...mounted,
    stage: gateway.stage ?? LOCAL_STAGE,
    identitySources: parts.identitySources,
    authorizer: parts.authorizer,
    responses: withHeaders(
      withOverrides(accessGatewayResponses(credentialPromptOf(parts.config))),
      gatewayResponseCorsHeaders(cors),
    ),
  };
}

/** The token endpoint's routes, open like the docs: a client has no token yet. */
const TOKEN_ROUTES = [`POST ${TOKEN_PATH}`, `GET ${JWKS_PATH}`, `GET ${DISCOVERY_PATH}`];

/** An oauth API whose tokens this stack issues (no external issuer's keys URL given). */
function builtInIssuer(config: AccessConfig): boolean {
  return config.credentialMode === 'oauth' && !externalIssuer(config);
}

/** What every gateway entry is wired to: the stack's shared parts. */
interface StackParts {
  readonly options: LocalStackOptions;
  readonly definition: StackDefinition;
  readonly logger: LogPort;
  readonly metrics: CountingMetrics;
  readonly platform: RunningPlatform | undefined;
  readonly redis: LocalRedis;
  readonly newRedisClient: (config: AccessConfig) => RedisConnection;
  readonly sns: SnsEndpoint;
  readonly snsClient: SNSClient;
  readonly soapEcho: SoapEchoServer | undefined;
  readonly platformClients: PlatformClient[];
  readonly topicNames: Set<string>;
  readonly alertSubscriber: (published: PublishedMessage) => void;
  readonly webhookToken: string;
  readonly gatewayUrl: string;
  readonly tokenFunction: (config: AccessConfig) => BackendFunction;
  readonly mailSink: MailSink | undefined;
}

/**
 * One gateway entry wired: its topics and queue, reporter and sweeps, authorizer, SOAP proxy, token
 * endpoint, webhook receiver, documentation, and its API of its kind.
 */
function wireGateway(gateway: GatewayDefinition, parts: StackParts) {
  const { options, definition, logger, metrics, platform, redis, newRedisClient, sns, snsClient } = parts;
  const { soapEcho, platformClients, topicNames, alertSubscriber, webhookToken, gatewayUrl } = parts;
  const visibilityTimeoutMs = definition.local.visibilityTimeoutSeconds * 1000;
  const name = resourceName(gateway.configInput.serviceId, topicNames);
  let queue: LocalQueue | undefined;
  const topicArn = sns.addTopic(name, (message) => queue?.send(message.message, message.messageAttributes));
  const alertsTopicArn = sns.addTopic(
    resourceName(gateway.configInput.serviceId, topicNames, 'alerts'),
    alertSubscriber,
  );
  const config: AccessConfig = {
    ...gatewayConfig(gateway, platform?.url ?? '', `${gatewayUrl}${gateway.basePath}${stagePathOf(gateway)}`),
    redis: redis.settings,
    topicArn,
    alertsTopicArn,
  };
  const platformClient = platformClientFromConfig(config, config.platformCredential ?? '');
  const reporterPlatformClient = platformClientFromConfig(config, config.platformCredential ?? '', {
    caller: 'reporter',
  });
  platformClients.push(platformClient, reporterPlatformClient);
  const reporterDeps = {
    config,
    redis: newRedisClient(config),
    platform: reporterPlatformClient,
    logger,
    metrics,
    alertPublisher: snsAlertPublisher(snsClient, alertsTopicArn),
    ...(options.now && { now: options.now }),
  };
  const reporter = createReporterHandler(reporterDeps);
  const sweep = createSweepHandler(reporterDeps);
  // A flush reports all pending usage, however recent, not only what the scheduled sweep would.
  const sweepAll = createSweepHandler({ ...reporterDeps, sweepMinAgeMs: 0 });
  const rejectedUsage = () => accessCacheOf(reporterDeps.redis, config).rejectedUsage();
  queue = new LocalQueue({
    name,
    consumer: reporter,
    deliveryDelayMs: config.reportWindowSeconds * 1000,
    visibilityTimeoutMs,
    maxReceiveCount: definition.local.maxReceiveCount,
    onConsumerError: (error) => logger.error('reporter failed a batch', { error: String(error) }),
  });
  // The functions that decide calls (the authorizer, the SOAP proxy) each have their own Redis client.
  const deciderPorts = {
    config,
    sns: snsClient,
    platform: platformClient,
    logger,
    metrics,
    ...(options.now && { now: options.now }),
  };
  const authorizer = createAuthorizerHandler({ ...deciderPorts, redis: newRedisClient(config) });
  const soapMethods = gateway.soap
    ? [soapMethod(gateway.soap, soapEcho, { ...deciderPorts, redis: newRedisClient(config) })]
    : [];
  const webhooks = createWebhookHandler({
    serviceId: config.serviceId,
    credentialMode: config.credentialMode,
    cache: accessCacheOf(reporterDeps.redis, config),
    tokensNotBefore: redisTokensNotBefore(reporterDeps.redis, config.serviceId, logger),
    sealer: sealerOf(config),
    platform: reporterPlatformClient,
    now: options.now ?? Date.now,
    logger,
    metrics,
    token: webhookToken,
  });
  const hiddenNames = configuredSecretHeaders(config);
  const { cors } = gateway;
  const identitySources = identitySourcesOf(config);
  const docs = createDocsHandler({
    document: swaggerDocument({
      basePath: `${gateway.basePath}${stagePathOf(gateway)}`,
      routes: gateway.routes,
      config,
      settings: gateway.docs,
    }),
    assetsDir: SWAGGER_UI_DIR,
    ...(cors && { cors }),
  });
  const portal =
    gateway.portal && parts.mailSink
      ? localPortal({
          config,
          settings: gateway.portal,
          builtInIssuer: builtInIssuer(config),
          redis: newRedisClient(config),
          platform: reporterPlatformClient,
          mail: parts.mailSink,
          docs,
          logger,
          now: options.now ?? Date.now,
          mount: `${gateway.basePath}${stagePathOf(gateway)}`,
        })
      : undefined;
  const methods = [
    ...protectedMethods(gateway.routes, (event) => echo(event, { hiddenNames, ...(cors && { cors }) })),
    ...openMethods(DOCS_ROUTES, docs),
    ...(portal?.methods ?? []),
    ...soapMethods,
    ...(builtInIssuer(config) ? openMethods(TOKEN_ROUTES, parts.tokenFunction(config)) : []),
    ...openMethods([WEBHOOK_ROUTE], webhooks),
  ];
  const api = gatewayApi(gateway, {
    methods: cors
      ? [
          ...methods,
          ...corsPreflightMethods(methods, corsPreflightOptions(cors, credentialHeaderNames(config))),
        ]
      : methods,
    identitySources,
    authorizer,
    config,
  });
  const soapPath = gateway.soap?.route.resource;
  return {
    api,
    config,
    topicArn,
    alertsTopicArn,
    queue,
    sweep,
    sweepAll,
    rejectedUsage,
    soapPath,
    portalWebhookPath: portal?.webhookPath,
  };
}

type WiredGateway = ReturnType<typeof wireGateway>;

/** A wired gateway as the stack hands it out, at its URL on the running gateway. */
function stackGateway(wired: WiredGateway, gatewayUrl: string, webhookToken: string): LocalStackGateway {
  // The queue, topics, sweeps and rejected usage are handed out as they are.
  const { api, config, soapPath, portalWebhookPath, ...handles } = wired;
  const apiUrl = `${gatewayUrl}${api.basePath}${api.stagePath ?? ''}`;
  return {
    serviceId: config.serviceId,
    apiType: api.apiType ?? 'rest',
    url: apiUrl,
    basePath: api.basePath,
    docsUrl: `${apiUrl}${DOCS_PATH}`,
    config,
    ...handles,
    ...(soapPath !== undefined && { soapUrl: `${apiUrl}${soapPath}` }),
    webhookUrl: `${apiUrl}${WEBHOOK_PATH}?token=${webhookToken}`,
    ...(portalWebhookPath !== undefined && { portalUrl: `${apiUrl}/portal` }),
  };
}

/** Every gateway's queue delivered and its pending usage swept to the platform. */
async function flushAll(gateways: readonly LocalStackGateway[]): Promise<FlushResult> {
  let unreported = 0;
  const rejected: RejectedUsage[] = [];
  for (const entry of gateways) {
    await entry.queue.drain();
    const swept = await entry.sweepAll();
    unreported += swept.failed + swept.busy + swept.unreadable;
    rejected.push(...(await entry.rejectedUsage()));
  }
  const stats = gateways.map((entry) => entry.queue.stats());
  return {
    queued: stats.reduce((sum, s) => sum + s.queued, 0),
    deadLetters: stats.reduce((sum, s) => sum + s.deadLetters, 0),
    unreported,
    notAccepted: notAcceptedOf(rejected),
  };
}

/** The sweeps' schedule; returns its stop, which lets a sweep under way finish. */
function startSweepTimer(
  gateways: readonly LocalStackGateway[],
  intervalMs: number,
  logger: LogPort,
): () => Promise<unknown> {
  let sweeping: Promise<unknown> | undefined;
  const timer = setInterval(() => {
    sweeping ??= Promise.all(gateways.map((entry) => entry.sweep()))
      .catch((error) => logger.error('sweep failed', { error: String(error) }))
      .finally(() => {
        sweeping = undefined;
      });
  }, intervalMs);
  timer.unref();
  return async () => {
    clearInterval(timer);
    await sweeping;
  };
}

/** The functions' Redis clients: each its own, as each Lambda has; all closed at stop. */
function redisClientsOf(redis: LocalRedis, logger: LogPort, commandTimeoutMs: number | undefined) {
  const clients: RedisConnection[] = [];
  return {
    open(config: AccessConfig): RedisConnection {
      const client =
        redis.createInMemoryClient?.() ??
        createRedisClient(config.redis ?? redis.settings, {
          logger,
          ...(commandTimeoutMs !== undefined && { commandTimeoutMs }),
        });
      clients.push(client);
      return client;
    },
    closeAll: () => Promise.all(clients.map((client) => client.quit().catch(() => client.disconnect()))),
  };
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
          warn: (message, attributes) => logger.warn(message, attributes),
        })
      : undefined;
    if (platform) cleanup.push(() => platform.stop());

    const redis = await startLocalRedis(options.redis ?? definition.local.redis ?? 'auto', (line) =>
      logger.warn(line),
    );
    cleanup.push(() => redis.stop());
    const redisClients = redisClientsOf(redis, logger, options.redisCommandTimeoutMs);
    cleanup.push(() => redisClients.closeAll());
    const newRedisClient = redisClients.open;

    const sns = await startSnsEndpoint();
    cleanup.push(() => sns.stop());
    const snsClient = new SNSClient({
      ...SNS_CLIENT_SETTINGS,
      endpoint: sns.url,
      region: LOCAL_REGION,
      credentials: LOCAL_AWS_CREDENTIALS,
    });
    cleanup.push(() => snsClient.destroy());

    const soapEcho = definition.gateways.some((gateway) => gateway.soap && !gateway.soap.soapBackendUrl)
      ? await startSoapEcho()
      : undefined;
    if (soapEcho) cleanup.push(() => soapEcho.stop());

    const mailSink = definition.gateways.some((gateway) => gateway.portal)
      ? await startMailSink(definition.gateways.find((gateway) => gateway.portal)?.portal?.mailFrom ?? '')
      : undefined;
    if (mailSink) cleanup.push(() => mailSink.stop());

    const platformClients: PlatformClient[] = [];
    cleanup.push(() => {
      for (const client of platformClients) client.close();
    });
    const topicNames = new Set<string>();
    const alerts: UsageAlert[] = [];
    // The alerts topic's subscriber: a console, as an e-mail or web-console subscription would be.
    const alertSubscriber = (published: PublishedMessage) => {
      const alert = JSON.parse(messageFor(published, 'default')) as UsageAlert;
      alerts.push(alert);
      options.onAlert?.(alert);
    };
    /** The shared secret of the webhook receivers, new at each start. */
    const webhookToken = randomBytes(24).toString('base64url');

    // The issuer URL of an oauth API is its own URL, so the port is chosen before the APIs are wired.
    const port = options.port || (await freePort());
    const gatewayUrl = `http://127.0.0.1:${port}`;
    const signer = await localTokenSigner();
    const tokenFunction = (config: AccessConfig) => {
      const failedClientsRedis = newRedisClient(config);
      const endpoint = new TokenEndpoint({
        config: { ...config, oidcIssuer: config.oidcIssuer ?? gatewayUrl },
        platform: platformClientFromConfig(config, config.platformCredential ?? ''),
        signer,
        failedClients: redisFailedClients(failedClientsRedis),
        guesses: guessCounterOf(failedClientsRedis, logger, options.now),
        logger,
        now: options.now ?? Date.now,
      });
      return createTokenHandler(async () => endpoint, logger);
    };

    const parts: StackParts = {
      options,
      definition,
      logger,
      metrics,
      platform,
      redis,
      newRedisClient,
      sns,
      snsClient,
      soapEcho,
      platformClients,
      topicNames,
      alertSubscriber,
      webhookToken,
      gatewayUrl,
      tokenFunction,
      mailSink,
    };
    const wired = definition.gateways.map((entry) => wireGateway(entry, parts));
    cleanup.push(() => Promise.all(wired.map(({ queue }) => queue.stop())));

    const gateway = await startGateway({
      apis: wired.map(({ api }) => api),
      port,
      ...(options.accessLog && { onResponse: options.accessLog }),
    });
    cleanup.push(() => gateway.stop());

    const gateways = wired.map((entry) => stackGateway(entry, gateway.url, webhookToken));
    // The plugin talks through its own duplicate of a client, which the in-memory stand-in cannot make.
    const pluginAppWanted = options.pluginApp !== undefined && redis.createInMemoryClient === undefined;
    if (options.pluginApp && !pluginAppWanted) {
      logger.warn('no Express app behind the plugin: it needs a real Redis (install redis-server)');
    }
    const pluginApp =
      options.pluginApp && pluginAppWanted && gateways[0]
        ? await startPluginApp({
            config: gateways[0].config,
            redis: newRedisClient(gateways[0].config),
            port: options.pluginApp.port,
            logger,
          })
        : undefined;
    // Stopped with the gateway, before the flush (so its pending calls are reported); here if the start fails.
    if (pluginApp) cleanup.push(() => pluginApp.stop());
    if (platform && options.webhooks !== false) {
      for (const entry of gateways) platform.addWebhookUrl(entry.webhookUrl);
      for (const [i, entry] of wired.entries()) {
        const url = gateways[i]?.url;
        if (entry.portalWebhookPath !== undefined && url !== undefined)
          platform.addWebhookUrl(`${url}${entry.portalWebhookPath}`);
      }
    }

    let flushing: Promise<FlushResult> | undefined;
    const flush = (): Promise<FlushResult> => {
      flushing ??= flushAll(gateways).finally(() => {
        flushing = undefined;
      });
      return flushing;
    };

    const sweepIntervalMs = options.sweepIntervalMs ?? definition.local.sweepIntervalSeconds * 1000;
    // A sweep under way finishes before the clients it uses are closed.
    if (sweepIntervalMs > 0) cleanup.push(startSweepTimer(gateways, sweepIntervalMs, logger));

    let stopping: Promise<FlushResult> | undefined;
    const stop = (): Promise<FlushResult> => {
      stopping ??= (async () => {
        // No new calls, then every pending usage to the platform, then the parts, last started first.
        await gateway.stop();
        await pluginApp?.stop();
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
      ...(soapEcho && { soapEcho }),
      ...(mailSink && { mailSink }),
      ...(pluginApp && { pluginApp }),
      metrics: () => ({ ...metrics.totals }),
      alerts: () => [...alerts],
      flush,
      stop,
    };
  } catch (error) {
    await stopAll(cleanup).catch(() => undefined);
    throw error;
  }
}
