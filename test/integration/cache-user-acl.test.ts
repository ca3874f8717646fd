/**
 * The product on Amazon MemoryDB's rules, against a local Redis Cluster run the way MemoryDB runs one:
 * cluster mode, TLS on every link (clients, cluster bus, replication), and an ACL user that
 * authenticates with a name and a password and may run only core/budget/cache-user.ts's rules. An
 * authorization, its report and the sweep run through the real handlers as that user.
 */
import { SNSClient } from '@aws-sdk/client-sns';
import { Cluster } from 'ioredis';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { CACHE_USER_RULES } from '../../core/budget/cache-user';
import { clusterOptions, ensureConnected, guardedCluster } from '../../core/budget/redis-client';
import { silentMetrics } from '../../core/observability/observability';
import { type PlatformClient, platformClientFromConfig } from '../../core/platform/client';
import { type AccessConfig, parseConfig, type RedisSettings } from '../../core/settings/config';
import { createAuthorizerHandler } from '../../lambdas/authorizer/handler';
import { createReporterHandler, createSweepHandler } from '../../lambdas/reporter/handler';
import { type RunningPlatform, startPlatform } from '../../local/platform';
import { findOnPath, type LocalRedisCluster, startRedisCluster } from '../../local/redis';
import {
  LOCAL_AWS_CREDENTIALS,
  LOCAL_REGION,
  type SnsEndpoint,
  startSnsEndpoint,
} from '../../local/sns-endpoint';
import { certificateFor } from '../support/certificate';
import { CapturingLogger } from '../unit/core/fakes';
import { authorizerEvent, sqsEvent } from '../unit/handlers/fixtures';

const SERVICE = '2555417735060';
const PROVIDER_KEY = 'pk-memorydb-rules';
const KEY = 'memorydb-rules-key';
const USER = { name: 'access-management', password: 'local-user-password-0123456789' };
const ADMIN_PASSWORD = 'local-admin-password-0123456789';
/** The certificate names this host only, as MemoryDB's names its endpoint; the nodes announce addresses. */
const ENDPOINT = 'localhost';

let certificate: string;
let cluster: LocalRedisCluster;
let platform: RunningPlatform;
let sns: SnsEndpoint;
let snsClient: SNSClient;
const messages: string[] = [];
let clock = Date.UTC(2030, 0, 1, 10, 30);
const clients: Cluster[] = [];
const platformClients: PlatformClient[] = [];

beforeAll(async () => {
  const pems = await certificateFor(ENDPOINT);
  certificate = pems.certificate;
  cluster = await startRedisCluster(findOnPath('redis-server') ?? '/usr/bin/redis-server', {
    primaries: 3,
    replicasPerPrimary: 1,
    security: {
      ...pems,
      serverName: ENDPOINT,
      adminPassword: ADMIN_PASSWORD,
      users: [{ ...USER, rules: CACHE_USER_RULES }],
    },
  });
  platform = await startPlatform({
    config: {
      services: [
        {
          id: SERVICE,
          providerKey: PROVIDER_KEY,
          authentication: 'user_key',
          state: 'active',
          metrics: [{ name: 'hits', children: [] }],
          plans: [{ name: 'Basic', limits: [{ metric: 'hits', period: 'hour', value: 1000 }] }],
          applications: [
            { id: 'app-1', userKey: KEY, appKeys: [], plan: 'Basic', state: 'active', referrerFilters: [] },
          ],
        },
      ],
    },
    port: 0,
    now: () => clock,
  });
  sns = await startSnsEndpoint();
  snsClient = new SNSClient({ endpoint: sns.url, region: LOCAL_REGION, credentials: LOCAL_AWS_CREDENTIALS });
}, 60_000);

afterEach(() => {
  for (const client of clients.splice(0)) client.disconnect();
  for (const client of platformClients.splice(0)) client.close();
});

afterAll(async () => {
  snsClient?.destroy();
  await sns?.stop();
  await platform?.stop();
  await cluster?.stop();
});

/** The product's cluster client for `settings`, trusting the local certificate (MemoryDB's is public). */
async function productClient(settings: RedisSettings): Promise<Cluster> {
  const options = clusterOptions(settings);
  const client = guardedCluster(
    new Cluster([{ host: settings.host, port: settings.port }, ...(settings.seeds ?? [])], {
      ...options,
      redisOptions: { ...options.redisOptions, tls: { ...options.redisOptions?.tls, ca: certificate } },
    }),
  );
  client.on('error', () => undefined);
  client.on('node error', () => undefined);
  clients.push(client);
  return client;
}

function accessConfig(topicArn: string): AccessConfig {
  return parseConfig({
    serviceId: SERVICE,
    platformUrl: platform.url,
    platformCredential: PROVIDER_KEY,
    reportWindowSeconds: 10,
    redis: { ...cluster.settings, username: USER.name, password: USER.password },
    topicArn,
  });
}

function platformClient(config: AccessConfig): PlatformClient {
  const client = platformClientFromConfig(config, PROVIDER_KEY);
  platformClients.push(client);
  return client;
}

const call = () => authorizerEvent({ httpMethod: 'GET', headers: { apikey: KEY }, multiValueHeaders: null });

describe('on a TLS Redis Cluster with ACL users, as MemoryDB runs one', () => {
  it('is a cluster that speaks TLS only, on the certificate of the endpoint name', () => {
    expect(cluster.settings).toMatchObject({ mode: 'cluster', host: ENDPOINT, tls: true });
    expect(cluster.nodes).toHaveLength(6);
  });

  it('authorizes, reports and sweeps as the access user, with only its rules', async () => {
    const topicArn = sns.addTopic('usage', (message) => messages.push(message.message));
    const config = accessConfig(topicArn);
    const logger = new CapturingLogger();
    const deps = () => ({ config, platform: platformClient(config), now: () => clock, logger });
    const handle = createAuthorizerHandler({
      ...deps(),
      redis: await productClient(config.redis as RedisSettings),
      sns: snsClient,
      metrics: silentMetrics,
    });
    const calls = 5;
    for (let i = 0; i < calls; i++) {
      clock += 1000;
      const answer = await handle(call());
      expect(answer.policyDocument.Statement[0]).toMatchObject({ Effect: 'Allow' });
    }
    expect(platform.stats()).toMatchObject({ authrep: 1 });
    expect(messages).toHaveLength(1);
    const reporter = createReporterHandler({
      ...deps(),
      redis: await productClient(config.redis as RedisSettings),
      metrics: silentMetrics,
    });
    expect((await reporter(sqsEvent(messages.splice(0)))).batchItemFailures).toEqual([]);
    expect(platform.usage(SERVICE, 'app-1', 'hits', 'hour')).toBe(calls);

    // A call whose message is lost: the sweep finds it by SCAN, as the same user.
    clock += 1000;
    await handle(call());
    messages.splice(0);
    clock += 60_000;
    const sweep = createSweepHandler({
      ...deps(),
      redis: await productClient(config.redis as RedisSettings),
      metrics: silentMetrics,
    });
    expect(await sweep()).toMatchObject({ found: 1, flushed: 1 });
    expect(platform.usage(SERVICE, 'app-1', 'hits', 'hour')).toBe(calls + 1);
    expect(JSON.stringify(logger.lines)).not.toMatch(/NOPERM|WRONGPASS|NOAUTH/);
  });

  it('gives the access user no command outside its rules, and no key outside the product', async () => {
    const client = await productClient({ ...cluster.settings, username: USER.name, password: USER.password });
    await ensureConnected(client);
    await expect(client.set('am:{acl}:since', '1')).resolves.toBe('OK');
    await expect(client.set('other:{acl}', '1')).rejects.toThrow(/NOPERM/);
    const [primary] = client.nodes('master');
    await expect(primary?.flushall()).rejects.toThrow(/NOPERM/);
    await expect(primary?.keys('am:*')).rejects.toThrow(/NOPERM/);
    await expect(primary?.config('GET', 'maxmemory')).rejects.toThrow(/NOPERM/);
  });

  it('refuses the user with a wrong password, and a client that gives no user name', async () => {
    const firstWrite = async (settings: RedisSettings) => {
      const client = await productClient(settings);
      return ensureConnected(client)
        .then(() => client.set('am:{auth}:since', '1'))
        .then(
          () => 'answered',
          (error: Error) => error.message,
        );
    };
    expect(
      await firstWrite({ ...cluster.settings, username: USER.name, password: 'not-the-password' }),
    ).not.toBe('answered');
    expect(await firstWrite({ ...cluster.settings, password: USER.password })).not.toBe('answered');
  });
});
