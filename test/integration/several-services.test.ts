/**
 * Two services sharing one Redis, as two construct instances sharing a cache do: each authorizer counts
 * its own service's calls, and each sweep finds, reports and clears its own service's usage only, with
 * its own provider key. The local platform, served over HTTP, keeps the two services' counters apart.
 */
import { SNSClient } from '@aws-sdk/client-sns';
import { afterAll, afterEach, beforeAll, beforeEach, expect, it } from 'vitest';
import { credentialKeys, LEGACY_KEYS } from '../../core/budget/keys';
import { credentialIdOf } from '../../core/credentials';
import { silentMetrics } from '../../core/observability/observability';
import { type PlatformClient, platformClientFromConfig } from '../../core/platform/client';
import { type AccessConfig, parseConfig } from '../../core/settings/config';
import { type AuthorizerHandler, createAuthorizerHandler } from '../../lambdas/authorizer/handler';
import { createSweepHandler } from '../../lambdas/reporter/handler';
import { type PlatformConfig, type RunningPlatform, startPlatform } from '../../local/platform';
import {
  LOCAL_AWS_CREDENTIALS,
  LOCAL_REGION,
  type SnsEndpoint,
  startSnsEndpoint,
} from '../../local/sns-endpoint';
import { describeOnTopologies, REAL_REDIS_TOPOLOGIES, type TestRedis } from '../support/redis-topology';
import { CapturingLogger, dumpRedis } from '../unit/core/fakes';
import { authorizerEvent } from '../unit/handlers/fixtures';

/** Two services of two providers; each has an application with the same user key. */
const SERVICES = [
  { id: '2555417735060', providerKey: 'pk-words' },
  { id: '2555417735061', providerKey: 'pk-quotes' },
] as const;
const KEY = 'shared-user-key';
const APP = 'app-1';

const platformConfig: PlatformConfig = {
  services: SERVICES.map(({ id, providerKey }) => ({
    id,
    providerKey,
    authentication: 'user_key' as const,
    state: 'active' as const,
    metrics: [{ name: 'hits', children: [] }],
    plans: [{ name: 'Basic', limits: [{ metric: 'hits', period: 'hour' as const, value: 1000 }] }],
    applications: [
      { id: APP, userKey: KEY, appKeys: [], plan: 'Basic', state: 'active' as const, referrerFilters: [] },
    ],
  })),
};

let redis: TestRedis;
let sns: SnsEndpoint;
let snsClient: SNSClient;
let topicArn: string;
let platform: RunningPlatform;
let clock: number;
let logger: CapturingLogger;
const platformClients: PlatformClient[] = [];

beforeAll(async () => {
  sns = await startSnsEndpoint();
  // The messages are left undelivered, as if lost: the sweeps report the usage.
  topicArn = sns.addTopic('usage', () => undefined);
  snsClient = new SNSClient({ endpoint: sns.url, region: LOCAL_REGION, credentials: LOCAL_AWS_CREDENTIALS });
});

afterAll(async () => {
  snsClient?.destroy();
  await sns?.stop();
});

function configOf(service: (typeof SERVICES)[number]): AccessConfig {
  return parseConfig({
    serviceId: service.id,
    platformUrl: platform.url,
    platformCredential: service.providerKey,
    reportWindowSeconds: 10,
    redis: redis.settings,
    topicArn,
  });
}

function depsOf(config: AccessConfig) {
  const client = platformClientFromConfig(config, config.platformCredential ?? '');
  platformClients.push(client);
  return { config, platform: client, now: () => clock, logger, metrics: silentMetrics };
}

async function authorizer(config: AccessConfig): Promise<AuthorizerHandler> {
  return createAuthorizerHandler({ ...depsOf(config), redis: await redis.client(), sns: snsClient });
}

async function sweeper(config: AccessConfig) {
  return createSweepHandler({ ...depsOf(config), redis: await redis.client() });
}

async function allow(handle: AuthorizerHandler, calls: number): Promise<void> {
  for (let i = 0; i < calls; i++) {
    clock += 100;
    const result = await handle(authorizerEvent({ headers: { apikey: KEY }, multiValueHeaders: null }));
    expect(result.policyDocument.Statement[0]).toMatchObject({ Effect: 'Allow' });
  }
}

const hits = (service: (typeof SERVICES)[number]) => platform.usage(service.id, APP, 'hits', 'hour');

describeOnTopologies(REAL_REDIS_TOPOLOGIES, (target) => {
  beforeEach(async () => {
    redis = target();
    clock = Date.UTC(2030, 0, 1, 10, 30);
    logger = new CapturingLogger();
    await redis.flushAll();
    platform = await startPlatform({ config: platformConfig, port: 0, now: () => clock });
  });

  afterEach(async () => {
    await redis.closeClients();
    for (const client of platformClients.splice(0)) client.close();
    await platform.stop();
  });

  it("each service's sweep reports only its own usage, to its own service, with its own provider key", async () => {
    const [words, quotes] = SERVICES;
    const wordsConfig = configOf(words);
    const quotesConfig = configOf(quotes);
    // The first call of each is reported by its authrep; the rest wait in the one Redis.
    await allow(await authorizer(wordsConfig), 3);
    await allow(await authorizer(quotesConfig), 5);
    expect([hits(words), hits(quotes)]).toEqual([1, 1]);
    clock += 60_000;

    expect(await (await sweeper(wordsConfig))()).toMatchObject({ found: 1, flushed: 1, failed: 0 });
    expect([hits(words), hits(quotes)]).toEqual([3, 1]);
    expect(await (await sweeper(wordsConfig))()).toMatchObject({ found: 0 });

    expect(await (await sweeper(quotesConfig))()).toMatchObject({ found: 1, flushed: 1, failed: 0 });
    expect([hits(words), hits(quotes)]).toEqual([3, 5]);
    expect(platform.stats()).toMatchObject({ report: 2 });
  });

  it("adopts each service's budgets an earlier version left under names without the service, and reports them", async () => {
    const [words, quotes] = SERVICES;
    const wordsConfig = configOf(words);
    const quotesConfig = configOf(quotes);
    await allow(await authorizer(wordsConfig), 3);
    await allow(await authorizer(quotesConfig), 5);
    // As the earlier version left them: every key of both budgets under the names without the service.
    const client = await redis.client();
    for (const service of SERVICES) {
      const id = credentialIdOf(service.id, { kind: 'user_key', userKey: KEY });
      const earlier = LEGACY_KEYS.budget(id);
      for (const [kind, name] of Object.entries(credentialKeys(service.id, id))) {
        if (await client.exists(name)) await client.rename(name, earlier[kind as keyof typeof earlier]);
      }
    }
    // The new version counts on meanwhile: a first call (its authrep) and one waiting, under the new names.
    await allow(await authorizer(wordsConfig), 2);
    expect([hits(words), hits(quotes)]).toEqual([2, 1]);
    clock += 60_000;

    expect(await (await sweeper(wordsConfig))()).toMatchObject({ found: 1, flushed: 1, failed: 0 });
    expect([hits(words), hits(quotes)]).toEqual([5, 1]);
    expect(await (await sweeper(quotesConfig))()).toMatchObject({ found: 1, flushed: 1, failed: 0 });
    expect([hits(words), hits(quotes)]).toEqual([5, 5]);
    const keys = (await dumpRedis(client)).split('\n');
    const left = keys.filter((key) => LEGACY_KEYS.credentialIdOfKey(key) !== undefined);
    expect(left).toEqual([]);
  });
});
