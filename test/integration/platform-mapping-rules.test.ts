/**
 * Mapping rules read from the local platform's proxy configuration over HTTP, kept in a real
 * redis-server: no rules ever read refuses calls (platform_misconfigured, loudly); a failed refresh keeps
 * the last good rules and says so without the token; instances sharing Redis read the platform once per
 * bound; and a promotion on the platform changes the authorizer's decision within the bound, without a
 * restart. The clock the rules age by is injected (a short bound, no waiting on it); only a failed read's
 * lease runs on Redis's own clock, and the test waits for it by polling, never by timing.
 */
import { createRequire } from 'node:module';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type Redis from 'ioredis';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createRedisClient, ensureConnected } from '../../core/budget/redis-client';
import { createAccessAuthorizer } from '../../core/decision/access';
import type { AccessDecision } from '../../core/decision/decision';
import { PlatformMappingRules } from '../../core/decision/platform-mapping-rules';
import { platformClientFromConfig } from '../../core/platform/client';
import { type ProxyConfigRead, ProxyConfigReader } from '../../core/platform/proxy-config';
import { type MappingRule, parseConfig } from '../../core/settings/config';
import { type PlatformConfig, type RunningPlatform, startPlatform } from '../../local/platform';
import { type LocalRedis, startRedisServer } from '../../local/redis';
import { CapturingLogger, CapturingMetrics } from '../unit/core/fakes';

const SERVICE = '2555417735060';
const PROVIDER_KEY = 'pk-rules';
const ADMIN_TOKEN = 'admin-token-rules';
const USER_KEY = 'rules-key-1';
const REFRESH_MS = 1_000;
const READ_TIMEOUT_MS = 300;

const WORDS: MappingRule = { method: 'GET', pattern: '/v1/words/{word}.json', metric: 'get_word', delta: 1 };
const PREMIUM: MappingRule = { method: 'GET', pattern: '/v1/premium', metric: 'premium', delta: 2 };

function platformConfig(proxyConfig?: PlatformConfig['services'][number]['proxyConfig']): PlatformConfig {
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
              { name: 'premium', children: [] },
            ],
          },
        ],
        plans: [{ name: 'Basic', limits: [{ metric: 'hits', period: 'hour', value: 1000 }] }],
        applications: [
          {
            id: 'app-1',
            userKey: USER_KEY,
            appKeys: [],
            plan: 'Basic',
            state: 'active',
            referrerFilters: [],
          },
        ],
        ...(proxyConfig !== undefined && { proxyConfig }),
      },
    ],
    admin: {
      settings: { accountApprovalRequired: false, signupsEnabled: true },
      webhookProviderActions: false,
      accessTokens: [
        {
          value: ADMIN_TOKEN,
          providerKey: PROVIDER_KEY,
          role: 'admin',
          permission: 'rw',
          scopes: ['account_management'],
          memberPermissions: [],
        },
      ],
    },
  };
}

let server: LocalRedis;
let redis: Redis;
let platform: RunningPlatform | undefined;
let clock: number;
let logger: CapturingLogger;
let reads: ProxyConfigRead[];

beforeAll(async () => {
  server = await startRedisServer('/usr/bin/redis-server');
  redis = createRedisClient({ host: server.host, port: server.port, tls: false });
  await ensureConnected(redis);
});

afterAll(async () => {
  await redis?.quit();
  await server?.stop();
});

beforeEach(async () => {
  await redis.flushall();
  clock = Date.UTC(2030, 0, 1, 10, 0, 0);
  logger = new CapturingLogger();
  reads = [];
});

afterEach(async () => {
  await platform?.stop();
  platform = undefined;
});

/** One instance's rules, reading the platform through a real reader; every read is recorded. */
function instanceRules(url: string): PlatformMappingRules {
  const reader = new ProxyConfigReader({
    adminApiUrl: url,
    accessToken: ADMIN_TOKEN,
    serviceId: SERVICE,
    environment: 'production',
    timeoutMs: READ_TIMEOUT_MS,
  });
  return new PlatformMappingRules({
    serviceId: SERVICE,
    reader: {
      read: async () => {
        const read = await reader.read();
        reads.push(read);
        return read;
      },
    },
    refreshMs: REFRESH_MS,
    redis,
    logger,
    readTimeoutMs: READ_TIMEOUT_MS,
  });
}

/** An authorizer without a budget cache (every call asks the platform) whose rules come from the platform. */
function authorizerOn(running: RunningPlatform, metrics = new CapturingMetrics()) {
  const config = parseConfig({
    serviceId: SERVICE,
    platformUrl: running.url,
    platformCredential: PROVIDER_KEY,
    mappingRulesSource: 'platform',
    mappingRulesRefreshSeconds: 1,
    adminApiUrl: running.url,
    adminAccessToken: ADMIN_TOKEN,
  });
  return createAccessAuthorizer({
    config,
    platform: platformClientFromConfig(config, PROVIDER_KEY, { caller: 'authorizer' }),
    now: () => clock,
    logger,
    metrics,
    mappingRules: instanceRules(running.url),
  });
}

const call = (path: string) => ({
  credential: { kind: 'user_key', userKey: USER_KEY } as const,
  method: 'GET',
  path,
  query: {},
});

function reasonOf(decision: AccessDecision): string | undefined {
  return decision.effect === 'unauthorized' ? 'unauthorized' : decision.reason;
}

async function promote(running: RunningPlatform, version: number): Promise<number> {
  const url = `${running.url}/admin/api/services/${SERVICE}/proxy/configs/staging/${version}/promote.json?to=production&access_token=${ADMIN_TOKEN}`;
  return (await fetch(url, { method: 'POST' })).status;
}

describe('mapping rules from the platform', () => {
  it('are read by the module loaded on the first call, in the source and in the Lambda bundle', async () => {
    platform = await startPlatform({ config: platformConfig({ production: [WORDS] }) });
    const config = parseConfig({
      serviceId: SERVICE,
      platformUrl: platform.url,
      platformCredential: PROVIDER_KEY,
      mappingRulesSource: 'platform',
      adminApiUrl: platform.url,
      adminAccessToken: ADMIN_TOKEN,
    });
    const authorizer = createAccessAuthorizer({
      config,
      platform: platformClientFromConfig(config, PROVIDER_KEY, { caller: 'authorizer' }),
      now: () => clock,
      logger,
      metrics: new CapturingMetrics(),
    });
    expect(await authorizer.decideCall(call('/v1/words/ok.json'))).toMatchObject({
      effect: 'allow',
      metrics: 'get_word',
    });
    // The bundle keeps the module in a file of its own beside index.js (scripts/bundle-lambdas.ts).
    const bundled = createRequire(__filename)(
      path.resolve('dist/bundles/authorizer/lazy/core+decision+platform-mapping-rules.js'),
    ) as typeof import('../../core/decision/platform-mapping-rules');
    await redis.flushall();
    const mapper = await bundled.platformMappingRulesOf(config, { redis, logger }).mapperAt(Date.now());
    expect(mapper?.usageOf({ method: 'GET', path: '/v1/words/ok.json', query: {} })).toEqual({ get_word: 1 });
    expect(mapper?.usageOf({ method: 'GET', path: '/v1/premium', query: {} })).toBeUndefined();
  });

  it('take effect on a promotion within the bound, without a restart', async () => {
    platform = await startPlatform({ config: platformConfig({ production: [WORDS] }) });
    const authorizer = authorizerOn(platform);
    expect(await authorizer.decideCall(call('/v1/words/ok.json'))).toMatchObject({
      effect: 'allow',
      metrics: 'get_word',
    });
    expect(reasonOf(await authorizer.decideCall(call('/v1/premium')))).toBe('no_mapping_rule');

    const staged = platform.deployStaging(SERVICE, [WORDS, PREMIUM]);
    expect(reasonOf(await authorizer.decideCall(call('/v1/premium')))).toBe('no_mapping_rule');
    expect(await promote(platform, staged)).toBe(201);
    // Within the bound the rules read stand; past it the next call reads the promotion.
    expect(reasonOf(await authorizer.decideCall(call('/v1/premium')))).toBe('no_mapping_rule');
    clock += REFRESH_MS;
    expect(await authorizer.decideCall(call('/v1/premium'))).toMatchObject({
      effect: 'allow',
      metrics: 'premium',
    });
    expect(platform.usage(SERVICE, 'app-1', 'premium', 'hour')).toBe(2);
    expect(reads.map((read) => read.ok && read.version)).toEqual([1, 2]);
    expect(logger.lines).toContainEqual(
      expect.objectContaining({
        message: 'mapping rules changed on the platform',
        attributes: expect.objectContaining({ from: 1, to: 2 }),
      }),
    );
  });

  it('refuse every call platform_misconfigured while no rules were ever read, loudly, until a read succeeds', async () => {
    platform = await startPlatform({ config: platformConfig() });
    const metrics = new CapturingMetrics();
    const authorizer = authorizerOn(platform, metrics);
    expect(reasonOf(await authorizer.decideCall(call('/v1/words/ok.json')))).toBe('platform_misconfigured');
    expect(metrics.counts.PlatformMisconfigured).toBe(1);
    expect(reads).toEqual([expect.objectContaining({ ok: false, kind: 'missing', status: 404 })]);
    expect(logger.lines).toContainEqual(
      expect.objectContaining({
        level: 'error',
        message: expect.stringMatching(/could not be read from the platform/),
      }),
    );

    platform.deployStaging(SERVICE, [WORDS]);
    expect(await promote(platform, 1)).toBe(201);
    // The failed read's lease spaces the retries: calls stay refused until it expires, then a read succeeds.
    let decision = await authorizer.decideCall(call('/v1/words/ok.json'));
    while (decision.effect !== 'allow') {
      expect(reasonOf(decision)).toBe('platform_misconfigured');
      await sleep(100);
      clock += 200;
      decision = await authorizer.decideCall(call('/v1/words/ok.json'));
    }
    expect(decision).toMatchObject({ metrics: 'get_word' });
    expect(reads.filter((read) => !read.ok)).toHaveLength(1);
  });

  it('keep the last good rules when a refresh fails, and say so without the token', async () => {
    platform = await startPlatform({ config: platformConfig({ production: [WORDS] }) });
    const authorizer = authorizerOn(platform);
    expect(await authorizer.decideCall(call('/v1/words/ok.json'))).toMatchObject({ effect: 'allow' });
    const rules = instanceRules(platform.url);
    await platform.stop();
    platform = undefined;

    clock += REFRESH_MS;
    const mapper = await rules.mapperAt(clock);
    expect(mapper?.usageOf(call('/v1/words/ok.json'))).toEqual({ get_word: 1 });
    expect(reads.at(-1)).toMatchObject({ ok: false, kind: 'unavailable' });
    expect(logger.lines).toContainEqual(
      expect.objectContaining({
        level: 'warn',
        message: 'mapping rules not refreshed from the platform: the last good ones stay',
      }),
    );
    expect(JSON.stringify(logger.lines)).not.toContain(ADMIN_TOKEN);
  });

  it('read the platform once per bound across instances sharing Redis, and a new instance starts from Redis', async () => {
    platform = await startPlatform({ config: platformConfig({ production: [WORDS] }) });
    const instances = [instanceRules(platform.url), instanceRules(platform.url), instanceRules(platform.url)];
    await Promise.all(instances.map((rules) => rules.mapperAt(clock)));
    expect(reads).toHaveLength(1);

    const staged = platform.deployStaging(SERVICE, [PREMIUM]);
    expect(await promote(platform, staged)).toBe(201);
    clock += REFRESH_MS;
    const mappers = await Promise.all(instances.map((rules) => rules.mapperAt(clock)));
    expect(reads).toHaveLength(2);
    // The lease holder has the promotion at once; the others keep their rules until their next look.
    expect(mappers.filter((mapper) => mapper?.usageOf(call('/v1/premium')) !== undefined)).toHaveLength(1);
    clock += REFRESH_MS / 4;
    for (const rules of instances) {
      expect((await rules.mapperAt(clock))?.usageOf(call('/v1/premium'))).toEqual({ premium: 2 });
    }
    expect(reads).toHaveLength(2);

    await platform.stop();
    platform = undefined;
    const coldStart = instanceRules('http://127.0.0.1:9');
    expect((await coldStart.mapperAt(clock))?.usageOf(call('/v1/premium'))).toEqual({ premium: 2 });
    expect(reads).toHaveLength(2);
  });
});
