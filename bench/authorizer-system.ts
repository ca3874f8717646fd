/**
 * The authorizer workloads' systems: the project's Lambdas (the REST or HTTP API authorizer, or the SOAP
 * proxy, and the reporter with its sweep) or the original design (baseline.ts), each wired to the shared
 * servers with clients of its own, as its Lambdas would have. The application's systems are app-system.ts.
 */
import type { APIGatewayRequestAuthorizerEvent } from 'aws-lambda';
import { snsAlertPublisher } from '../adapters/sns/alert-publisher';
import { createRedisClient } from '../core/budget/redis-client';
import { silentLogger, silentMetrics } from '../core/observability/observability';
import { platformClientFromConfig } from '../core/platform/client';
import { type AccessConfig, parseConfig } from '../core/settings/config';
import { parseSoapSettings } from '../core/soap/settings';
import { type AuthorizerDeps, createAuthorizerHandler } from '../lambdas/authorizer/handler';
import { createReporterHandler, createSweepHandler } from '../lambdas/reporter/handler';
import { createSoapAccessProxyHandler } from '../lambdas/soap/handler';
import { LocalQueue, type QueueConsumer } from '../local/queue';
import { topicArn } from '../local/sns-endpoint';
import { createBaselineAuthorizer, createBaselineReporter } from './baseline';
import { authorizerCaller, simpleResponseCaller, soapCaller } from './callers';
import {
  BENCH_PROVIDER_KEY,
  type Call,
  httpV2AuthorizerEvent,
  MAPPING_RULES,
  soapProxyEvent,
  type Traffic,
  UNSEEN_CALLS_OUT_OF_REACH,
} from './fixture';
import { countSentCommands } from './redis-counter';
import type { Design } from './report';
import { createSnsClientWithLatency } from './sns-client';
import type { Caller, RedisUnderTest, Servers, System, SystemOptions } from './system';
import { type RequestShape, SETUPS, type Setup, type SetupName } from './workloads';

/** Report messages wait in the queue until the flush delivers them, so the reporter's platform calls are counted apart. */
const HELD_UNTIL_FLUSH_MS = 24 * 60 * 60 * 1000;
/** Where the SOAP proxy would forward: never called, the bench's backend port answers at once. */
const UNUSED_SOAP_BACKEND = 'http://127.0.0.1:9/soap';

/** The project's configuration for `setup` on the bench's servers, its topics named after `name`. */
export function accessConfig(
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

/** The proxy's backend port: an answer at once, so the workload times the proxy alone. */
const instantBackend = async () => ({
  ok: true as const,
  status: 200,
  contentType: 'text/xml; charset=utf-8',
  body: Buffer.from(
    '<soap:Envelope xmlns:soap="http://schemas.xmlsoap.org/soap/envelope/"><soap:Body/></soap:Envelope>',
  ),
});

type CallerOf = (load: Traffic) => Promise<Caller>;

/** The Lambda that receives each set-up's calls: the REST authorizer, or the SOAP proxy on the same ports. */
const PROJECT_CALLERS: Readonly<
  Record<Exclude<RequestShape, 'app'>, (ports: AuthorizerDeps, servers: Servers) => CallerOf>
> = {
  rest: (ports) => {
    const authorize = createAuthorizerHandler(ports);
    return async (load) => authorizerCaller(authorize, load.events);
  },
  'http-v2': (ports) => {
    const authorize = createAuthorizerHandler(ports);
    return async (load) => {
      let made = 0;
      const events = eventsOf(load, (call) => httpV2AuthorizerEvent(call.key, call.endpoint, made++));
      return simpleResponseCaller(authorize, events);
    };
  },
  'app-id': (ports) => {
    const authorize = createAuthorizerHandler(ports);
    const header = ports.config.appIdHeader;
    return async (load) =>
      authorizerCaller(
        authorize,
        eventsOf(load, (call) => withCredentialHeader(call, header, call.key)),
      );
  },
  bearer: (ports, servers) => {
    const authorize = createAuthorizerHandler(ports);
    return async (load) => {
      const tokens = new Map<string, string>();
      for (const key of load.keys) tokens.set(key, await servers.issuer.token(key));
      const events = eventsOf(load, (call) =>
        withCredentialHeader(call, 'Authorization', `Bearer ${tokens.get(call.key) as string}`),
      );
      return authorizerCaller(authorize, events);
    };
  },
  soap: (ports) => {
    const proxy = createSoapAccessProxyHandler({
      ...ports,
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

/** The authorizer workloads' system of `design` in the set-up `setupName` (not the app's). */
export function startAuthorizerSystem(
  servers: Servers,
  redis: RedisUnderTest,
  design: Design,
  setupName: SetupName,
  options: SystemOptions,
): System {
  const setup = SETUPS[setupName];
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
  let caller: CallerOf;
  let queue: LocalQueue;
  let sweep: (() => Promise<unknown>) | undefined;
  if (design === 'project') {
    const deciderPorts = { ...ports, redis: authorizerRedis, sns, platform: authorizerPlatform };
    caller = PROJECT_CALLERS[setup.request as Exclude<RequestShape, 'app'>](deciderPorts, servers);
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
