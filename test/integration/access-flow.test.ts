/**
 * The authorizer and the reporter end to end on real components: Redis on free loopback ports (one
 * redis-server, then a cluster of three primaries), the local platform served over HTTP and called by
 * the real platform client, and the local SNS endpoint called by the real SDK client. One clock is
 * shared by the platform and the handlers.
 */
import { SNSClient } from '@aws-sdk/client-sns';
import type { APIGatewayAuthorizerResult } from 'aws-lambda';
import { afterAll, afterEach, beforeAll, beforeEach, expect, it } from 'vitest';
import { credentialIdOf } from '../../core/credentials';
import { silentMetrics } from '../../core/observability/observability';
import { type PlatformClient, platformClientFromConfig } from '../../core/platform/client';
import { type AccessConfig, type AccessConfigInput, parseConfig } from '../../core/settings/config';
import { type AuthorizerHandler, createAuthorizerHandler } from '../../lambdas/authorizer/handler';
import { createReporterHandler, createSweepHandler } from '../../lambdas/reporter/handler';
import { type PlatformConfig, type RunningPlatform, startPlatform } from '../../local/platform';
import {
  LOCAL_AWS_CREDENTIALS,
  LOCAL_REGION,
  type SnsEndpoint,
  startSnsEndpoint,
} from '../../local/sns-endpoint';
import { describeOnTopologies, REAL_REDIS_TOPOLOGIES, type TestRedis } from '../support/redis-topology';
import { CapturingLogger, countingRedis, dumpRedis } from '../unit/core/fakes';
import { authorizerEvent, sqsEvent } from '../unit/handlers/fixtures';

const SERVICE = '2555417735060';
const PROVIDER_KEY = 'pk-integration';
const KEY = 'integration-key-1';
const HOUR = 3_600_000;
const LIMIT = 25;

function platformConfig(hourlyLimit: number): PlatformConfig {
  return {
    services: [
      {
        id: SERVICE,
        providerKey: PROVIDER_KEY,
        authentication: 'user_key',
        state: 'active',
        metrics: [
          {
            name: 'hits',
            children: [
              { name: 'get_word', children: [] },
              { name: 'post_word', children: [] },
            ],
          },
        ],
        plans: [
          {
            name: 'Basic',
            limits: [
              { metric: 'hits', period: 'hour', value: hourlyLimit },
              { metric: 'post_word', period: 'eternity', value: 0 },
            ],
          },
        ],
        applications: [
          { id: 'app-1', userKey: KEY, appKeys: [], plan: 'Basic', state: 'active', referrerFilters: [] },
          {
            id: 'app-2',
            userKey: 'integration-key-2',
            appKeys: [],
            plan: 'Basic',
            state: 'active',
            referrerFilters: [],
          },
        ],
      },
    ],
  };
}

let redis: TestRedis;
let sns: SnsEndpoint;
let snsClient: SNSClient;
let topicArn: string;
let messages: string[];

let clock: number;
let platform: RunningPlatform;
let config: AccessConfig;
let logger: CapturingLogger;
const platformClients: PlatformClient[] = [];

beforeAll(async () => {
  sns = await startSnsEndpoint();
  topicArn = sns.addTopic('usage', (message) => messages.push(message.message));
  snsClient = new SNSClient({ endpoint: sns.url, region: LOCAL_REGION, credentials: LOCAL_AWS_CREDENTIALS });
});

afterAll(async () => {
  snsClient?.destroy();
  await sns?.stop();
});

async function start(hourlyLimit = LIMIT, overrides: Partial<AccessConfigInput> = {}) {
  platform = await startPlatform({ config: platformConfig(hourlyLimit), port: 0, now: () => clock });
  config = parseConfig({
    serviceId: SERVICE,
    platformUrl: platform.url,
    platformCredential: PROVIDER_KEY,
    mappingRules: [
      { method: 'GET', pattern: '/v1/words/{word}.json', metric: 'get_word', delta: 1 },
      { method: 'POST', pattern: '/v1/words/{word}.json', metric: 'post_word', delta: 1 },
    ],
    reportWindowSeconds: 10,
    redis: redis.settings,
    topicArn,
    ...overrides,
  });
}

/** A new connection, as a new Lambda container opens. */
function redisConnection() {
  return redis.client();
}

function platformClient(): PlatformClient {
  const client = platformClientFromConfig(config, PROVIDER_KEY);
  platformClients.push(client);
  return client;
}

/** One authorizer instance (a Lambda container): its own Redis connection and platform client. */
async function authorizer(sns = snsClient): Promise<AuthorizerHandler> {
  return createAuthorizerHandler({
    config,
    redis: await redisConnection(),
    sns,
    platform: platformClient(),
    now: () => clock,
    logger,
    metrics: silentMetrics,
  });
}

async function reporterDeps() {
  return {
    config,
    redis: await redisConnection(),
    platform: platformClient(),
    now: () => clock,
    logger,
    metrics: silentMetrics,
  };
}

/** Delivers the messages published so far to the reporter, as SQS would after the window. */
async function deliver(): Promise<void> {
  const reporter = createReporterHandler(await reporterDeps());
  const result = await reporter(sqsEvent(messages.splice(0)));
  expect(result.batchItemFailures).toEqual([]);
}

function call(handle: AuthorizerHandler, method = 'GET', key = KEY) {
  return handle(authorizerEvent({ httpMethod: method, headers: { apikey: key }, multiValueHeaders: null }));
}

function effect(result: APIGatewayAuthorizerResult): string {
  const reason = result.context?.reason;
  return `${result.policyDocument.Statement[0] && (result.policyDocument.Statement[0] as { Effect: string }).Effect}${reason ? `:${reason}` : ''}`;
}

function hits(appId = 'app-1'): number {
  return platform.usage(SERVICE, appId, 'hits', 'hour');
}

describeOnTopologies(REAL_REDIS_TOPOLOGIES, (target) => {
  beforeEach(async () => {
    redis = target();
    clock = Date.UTC(2030, 0, 1, 10, 30);
    messages = [];
    logger = new CapturingLogger();
    await redis.flushAll();
  });

  afterEach(async () => {
    expect(JSON.stringify([logger.lines, messages])).not.toContain(KEY);
    const dump = await dumpRedis(await redisConnection());
    expect(dump).not.toContain(KEY);
    expect(dump).not.toContain(PROVIDER_KEY);
    await redis.closeClients();
    for (const client of platformClients.splice(0)) client.close();
    await platform.stop();
  });

  it('the first call reports 1 hit; N cached calls are N reported hits once the reporter has run', async () => {
    await start();
    const handle = await authorizer();
    expect(effect(await call(handle))).toBe('Allow');
    expect(hits()).toBe(1);
    expect(platform.stats()).toMatchObject({ authrep: 1, report: 0 });
    const n = 7;
    for (let i = 0; i < n; i++) {
      clock += 1000;
      expect(effect(await call(handle))).toBe('Allow');
    }
    expect(hits()).toBe(1);
    expect(platform.stats().authrep).toBe(1);
    expect(messages).toHaveLength(1);
    await deliver();
    expect(hits()).toBe(1 + n);
    expect(platform.usage(SERVICE, 'app-1', 'get_word', 'hour')).toBe(1 + n);
    expect(platform.stats()).toMatchObject({ authrep: 1, report: 1, authorize: 1 });
  });

  it('a limit of L per hour holds across 4 authorizers on separate Redis connections called concurrently', async () => {
    await start();
    const instances = await Promise.all([authorizer(), authorizer(), authorizer(), authorizer()]);
    expect(effect(await call(instances[0]))).toBe('Allow');
    const burst = await Promise.all(
      Array.from({ length: 4 * LIMIT }, (_, i) => call(instances[i % instances.length]).then(effect)),
    );
    const allowed = 1 + burst.filter((answer) => answer === 'Allow').length;
    expect(allowed).toBe(LIMIT);
    expect(burst.filter((answer) => answer === 'Deny:limits_exceeded')).toHaveLength(4 * LIMIT - (LIMIT - 1));
    await deliver();
    expect(hits()).toBe(LIMIT);
    expect(effect(await call(instances[2]))).toBe('Deny:limits_exceeded');
  });

  it('first calls racing on 4 cold authorizers still allow exactly L', async () => {
    await start();
    const instances = await Promise.all([authorizer(), authorizer(), authorizer(), authorizer()]);
    const burst = await Promise.all(
      Array.from({ length: 3 * LIMIT }, (_, i) => call(instances[i % instances.length]).then(effect)),
    );
    expect(burst.filter((answer) => answer === 'Allow')).toHaveLength(LIMIT);
    await deliver();
    expect(hits()).toBe(LIMIT);
  });

  it('a first call on a new endpoint is denied when cached calls already took the limit', async () => {
    await start(3, {
      mappingRules: [
        { method: 'GET', pattern: '/v1/words/{word}.json', metric: 'get_word', delta: 1 },
        { method: 'GET', pattern: '/v1/definitions/{word}.json', metric: 'get_word', delta: 1 },
      ],
    });
    const handle = await authorizer();
    const answers = [];
    for (let i = 0; i < 3; i++) answers.push(effect(await call(handle)));
    const definition = authorizerEvent({
      resource: '/v1/definitions/{word}.json',
      path: '/v1/definitions/hello.json',
      headers: { apikey: KEY },
      multiValueHeaders: null,
    });
    answers.push(effect(await handle(definition)));
    expect(answers).toEqual(['Allow', 'Allow', 'Allow', 'Deny:limits_exceeded']);
    await deliver();
    expect(hits()).toBe(3);
  });

  it('an instance refuses a credential over its limit again without Redis until refusalMemoryMs', async () => {
    await start(2, { refusalMemoryMs: 1000 });
    const counted = countingRedis(await redisConnection());
    const handle = createAuthorizerHandler({
      config,
      redis: counted.redis,
      sns: snsClient,
      platform: platformClient(),
      now: () => clock,
      logger,
      metrics: silentMetrics,
    });
    expect([await call(handle), await call(handle), await call(handle)].map(effect)).toEqual([
      'Allow',
      'Allow',
      'Deny:limits_exceeded',
    ]);
    const sent = counted.calls.length;
    for (let i = 0; i < 20; i++) expect(effect(await call(handle))).toBe('Deny:limits_exceeded');
    expect(counted.calls.length).toBe(sent);
    clock += 1000;
    expect(effect(await call(handle))).toBe('Deny:limits_exceeded');
    expect(counted.calls.length).toBeGreaterThan(sent);
  });

  it('platform calls for credentials never seen are bounded per second across instances; known keys pass', async () => {
    await start(LIMIT, { unseenCredentialCallsPerSecond: 3 });
    const instances = [await authorizer(), await authorizer()];
    expect(effect(await call(instances[0] as AuthorizerHandler))).toBe('Allow');
    const madeUp = await Promise.all(
      Array.from({ length: 8 }, (_, i) =>
        call(instances[i % 2] as AuthorizerHandler, 'GET', `made-up-${i}`).then(
          effect,
          (error: Error) => error.message,
        ),
      ),
    );
    expect(madeUp.filter((answer) => answer === 'Unauthorized')).toHaveLength(2);
    expect(madeUp.filter((answer) => answer === 'Deny:platform_busy')).toHaveLength(6);
    expect(platform.stats().authrep).toBe(3);
    expect(effect(await call(instances[1] as AuthorizerHandler))).toBe('Allow');
    clock += 1000;
    expect(
      await call(instances[0] as AuthorizerHandler, 'GET', 'made-up-7').catch((e: Error) => e.message),
    ).toBe('Unauthorized');
  });

  it('a disabled method is denied, and then from the cache without asking the platform', async () => {
    await start();
    const handle = await authorizer();
    expect(effect(await call(handle, 'POST'))).toBe('Deny:limits_exceeded');
    expect(effect(await call(handle, 'POST'))).toBe('Deny:limits_exceeded');
    expect(platform.stats().authrep).toBe(1);
    expect(effect(await call(handle, 'GET'))).toBe('Allow');
  });

  it('a suspended application is denied after the resync', async () => {
    await start();
    const handle = await authorizer();
    await call(handle);
    await call(handle);
    platform.setApplicationState(SERVICE, 'app-1', 'suspended');
    expect(effect(await call(handle))).toBe('Allow');
    await deliver();
    const platformCalls = platform.stats();
    expect(effect(await call(handle))).toBe('Deny:application_not_active');
    expect(effect(await call(handle, 'POST'))).toBe('Deny:application_not_active');
    expect(platform.stats()).toEqual(platformCalls);
    expect(hits()).toBe(3);
  });

  it('a new hour lets calls through again (clock shared by platform and authorizer)', async () => {
    await start(3);
    const handle = await authorizer();
    const first = [];
    for (let i = 0; i < 4; i++) first.push(effect(await call(handle)));
    expect(first).toEqual(['Allow', 'Allow', 'Allow', 'Deny:limits_exceeded']);
    await deliver();
    expect(hits()).toBe(3);
    clock += HOUR;
    const second = [];
    for (let i = 0; i < 4; i++) second.push(effect(await call(handle)));
    expect(second).toEqual(['Allow', 'Allow', 'Allow', 'Deny:limits_exceeded']);
    expect(platform.stats().authrep).toBe(1);
    await deliver();
    expect(hits()).toBe(3);
    clock -= HOUR;
    expect(hits()).toBe(3);
  });

  it('an invalid key gets 401, and a second attempt makes no platform call', async () => {
    await start();
    const handle = await authorizer();
    await expect(call(handle, 'GET', 'no-such-key')).rejects.toThrow('Unauthorized');
    expect(platform.stats().authrep).toBe(1);
    await expect(call(handle, 'GET', 'no-such-key')).rejects.toThrow('Unauthorized');
    expect(platform.stats().authrep).toBe(1);
  });

  it('usage whose message was lost is reported by the sweep', async () => {
    await start();
    const singleAttempt = new SNSClient({
      endpoint: sns.url,
      region: LOCAL_REGION,
      credentials: LOCAL_AWS_CREDENTIALS,
      maxAttempts: 1,
    });
    const handle = await authorizer(singleAttempt);
    await call(handle);
    sns.failNextPublishes(1);
    await call(handle);
    singleAttempt.destroy();
    await call(handle);
    expect(messages).toEqual([]);
    const sweep = createSweepHandler(await reporterDeps());
    expect(await sweep()).toMatchObject({ found: 0 });
    clock += 60_000;
    expect(await sweep()).toMatchObject({ found: 1, flushed: 1 });
    expect(hits()).toBe(3);
  });

  it('app credentials of another application are counted apart', async () => {
    await start();
    const handle = await authorizer();
    await call(handle);
    await call(handle, 'GET', 'integration-key-2');
    await call(handle, 'GET', 'integration-key-2');
    await deliver();
    expect(hits('app-1')).toBe(1);
    expect(hits('app-2')).toBe(2);
    expect(credentialIdOf(SERVICE, { kind: 'user_key', userKey: KEY })).not.toBe(
      credentialIdOf(SERVICE, { kind: 'user_key', userKey: 'integration-key-2' }),
    );
  });
});
