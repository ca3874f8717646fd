/**
 * Usage alerts name a user_key application through the local platform's admin API
 * (`applications/find.xml`) on a real redis-server: the name is cached in the budget's slot, an unknown
 * key, a wrong token or an admin API that never answers falls back to the key hint, and the alert is
 * published all the same. The raw key is in no alert, log line or cached value.
 */
import type Redis from 'ioredis';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { serviceKeys } from '../../core/budget/keys';
import { createRedisClient, ensureConnected } from '../../core/budget/redis-client';
import { type AdminApiSettings, ApplicationDirectory } from '../../core/platform/application-directory';
import { type AlertPublisher, type UsageAlert, UsageAlerts } from '../../core/reporting/alerts';
import type { ResyncedUsage } from '../../core/reporting/flush-types';
import { type RunningPlatform, startPlatform } from '../../local/platform';
import { type LocalRedis, startRedisServer } from '../../local/redis';
import { CapturingLogger, CapturingMetrics, hourly } from '../unit/core/fakes';
import { startCannedServer } from '../unit/core/platform/canned-server';

const SERVICE = '2555417735060';
const PROVIDER_KEY = 'pk-directory';
const USER_KEY = 'f3c8d1e9b27a4c6e8d0f1a2b3c4d9e7f';
const ID = 'c'.repeat(64);
const HOUR = Date.UTC(2030, 0, 1, 10, 0, 0);
const END = HOUR + 3_600_000;

let server: LocalRedis;
let redis: Redis;
let platform: RunningPlatform;
let sent: UsageAlert[];
let logger: CapturingLogger;

beforeAll(async () => {
  server = await startRedisServer('/usr/bin/redis-server');
  redis = createRedisClient({ host: server.host, port: server.port, tls: false });
  await ensureConnected(redis);
  platform = await startPlatform({
    config: {
      services: [
        {
          id: SERVICE,
          providerKey: PROVIDER_KEY,
          authentication: 'user_key',
          plans: [{ name: 'Basic', limits: [{ metric: 'hits', period: 'hour', value: 100 }] }],
          applications: [{ id: 'acme-mobile', userKey: USER_KEY, plan: 'Basic' }],
        },
      ],
    },
  });
});

afterAll(async () => {
  await platform?.stop();
  await redis?.quit();
  await server?.stop();
});

beforeEach(async () => {
  await redis.flushall();
  sent = [];
  logger = new CapturingLogger();
});

const publisher: AlertPublisher = {
  publish: async (alert) => {
    sent.push(alert);
  },
};

function alertsWith(admin: AdminApiSettings, timeoutMs = 1_000): UsageAlerts {
  return new UsageAlerts({
    serviceId: SERVICE,
    levels: [80, 100],
    redis,
    publisher,
    logger,
    metrics: new CapturingMetrics(),
    directory: new ApplicationDirectory({ serviceId: SERVICE, admin, redis, logger, timeoutMs }),
  });
}

function usage(current: number, userKey = USER_KEY): ResyncedUsage {
  return {
    credentialId: ID,
    userKey,
    state: { kind: 'active' },
    status: { plan: 'Basic', usageReports: [hourly('hits', 100, current, END)], hierarchy: {} },
    inFlight: {},
    inFlightBuckets: [],
    refusals: [],
    now: HOUR + 60_000,
  };
}

function expectNoRawKey(key = USER_KEY) {
  expect(JSON.stringify(sent)).not.toContain(key);
  expect(JSON.stringify(logger.lines)).not.toContain(key);
}

describe('alerts naming a user_key application', () => {
  it('name it as the admin API does, and ask once: the cached name serves the next alert', async () => {
    const alerts = alertsWith({ url: platform.url, accessToken: PROVIDER_KEY });
    await alerts.observe(usage(85));
    expect(sent[0]).toMatchObject({
      application: 'acme-mobile',
      applicationName: 'acme-mobile',
      plan: 'Basic',
    });

    const cached = serviceKeys(SERVICE).applicationName(ID);
    expect(cached).toContain(`{${ID}}`);
    expect(await redis.ttl(cached)).toBeGreaterThan(0);
    expect(await redis.get(cached)).not.toContain(USER_KEY);

    // The platform gone, the next level is named from the cache.
    const away = alertsWith({ url: 'http://127.0.0.1:9', accessToken: PROVIDER_KEY });
    await away.observe(usage(100));
    expect(sent.map((alert) => [alert.level, alert.applicationName])).toEqual([
      [80, 'acme-mobile'],
      [100, 'acme-mobile'],
    ]);
    expectNoRawKey();
  });

  it('give a key the platform does not know, or a wrong token, the key hint', async () => {
    const unknownKey = '0000111122223333444455556666zzzz';
    await alertsWith({ url: platform.url, accessToken: PROVIDER_KEY }).observe(usage(85, unknownKey));
    expect(sent[0]).toMatchObject({ application: ID, keyHint: '…zzzz' });
    expect(sent[0]?.applicationName).toBeUndefined();
    expectNoRawKey(unknownKey);

    await redis.flushall();
    await alertsWith({ url: platform.url, accessToken: 'wrong' }).observe(usage(85));
    expect(sent[1]).toMatchObject({ application: ID, keyHint: '…9e7f' });
    expect(logger.lines.some((line) => line.attributes.status === 403)).toBe(true);
    expectNoRawKey();
  });

  it('publish the alert with the key hint when the admin API never answers', async () => {
    const silent = await startCannedServer(() => {});
    try {
      const started = performance.now();
      await alertsWith({ url: silent.url, accessToken: PROVIDER_KEY }, 300).observe(usage(85));
      expect(performance.now() - started).toBeLessThan(2_000);
      expect(sent).toHaveLength(1);
      expect(sent[0]).toMatchObject({ keyHint: '…9e7f', level: 80 });
      expect(silent.requests[0]?.query.get('service_id')).toBe(SERVICE);
      expectNoRawKey();
    } finally {
      await silent.close();
    }
  });
});
