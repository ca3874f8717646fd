import https from 'node:https';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPlatformClient, type PlatformClient } from '../../core/platform/client';
import type { Credential, Transaction } from '../../core/platform/types';
import { type RunningPlatform, startPlatform } from '../../local/platform';

const SERVICE_ID = '2555417735060';
const APP_SERVICE_ID = '2555417735061';
const PROVIDER_KEY = 'pk-integration';
const SERVICE_TOKEN = 'st-integration';
/** A fixed clock half-way through an hour, so period boundaries and resets are exact. */
const NOW = Date.UTC(2024, 5, 1, 12, 30, 0);
const HOUR_START = Date.UTC(2024, 5, 1, 12);
const HOUR_END = Date.UTC(2024, 5, 1, 13);

const platformConfig = {
  services: [
    {
      id: SERVICE_ID,
      providerKey: PROVIDER_KEY,
      authentication: 'user_key',
      metrics: [{ name: 'hits', children: [{ name: 'get_word' }, { name: 'post_word' }] }],
      plans: [
        {
          name: 'Basic',
          limits: [
            { metric: 'hits', period: 'hour', value: 3 },
            { metric: 'post_word', period: 'eternity', value: 0 },
          ],
        },
        { name: 'Bulk', limits: [{ metric: 'hits', period: 'day', value: 1_000_000 }] },
      ],
      applications: [
        { id: 'app-limited', userKey: 'key-limited', plan: 'Basic', state: 'active' },
        { id: 'app-reported', userKey: 'key-reported', plan: 'Basic', state: 'active' },
        { id: 'app-bulk', userKey: 'key-bulk', plan: 'Bulk', state: 'active' },
        { id: 'app-suspended', userKey: 'key-suspended', plan: 'Basic', state: 'suspended' },
      ],
    },
    {
      id: APP_SERVICE_ID,
      serviceToken: SERVICE_TOKEN,
      authentication: 'app_id',
      metrics: [{ name: 'hits', children: [] }],
      plans: [{ name: 'Basic', limits: [{ metric: 'hits', period: 'hour', value: 100 }] }],
      applications: [{ id: 'app-id-1', appKeys: ['app-key-1'], plan: 'Basic', state: 'active' }],
    },
  ],
};

const userKey = (key: string): Credential => ({ kind: 'user_key', userKey: key });

let platform: RunningPlatform;
let client: PlatformClient;

beforeAll(async () => {
  platform = await startPlatform({ config: platformConfig, now: () => NOW });
  client = createPlatformClient({
    baseUrl: platform.url,
    serviceId: SERVICE_ID,
    serviceAuth: { kind: 'provider_key', providerKey: PROVIDER_KEY },
  });
});

afterAll(async () => {
  client.close();
  await platform.stop();
});

describe('platform client against the local platform', () => {
  it('authreps an authorized call with its usage report, hierarchy and limit headers', async () => {
    const outcome = await client.authrep(userKey('key-limited'), { get_word: 1 });
    expect(outcome).toEqual({
      kind: 'authorized',
      plan: 'Basic',
      usageReports: expect.arrayContaining([
        {
          metric: 'hits',
          period: 'hour',
          periodStart: HOUR_START,
          periodEnd: HOUR_END,
          maxValue: 3,
          currentValue: 1,
          exceeded: false,
        },
      ]),
      hierarchy: expect.objectContaining({ hits: ['get_word', 'post_word'] }),
      limitHeaders: { remaining: 2, reset: (HOUR_END - NOW) / 1000, maxValue: 3 },
    });
    expect(platform.usage(SERVICE_ID, 'app-limited', 'hits', 'hour')).toBe(1);
  });

  it('denies limits_exceeded once the hourly limit is used up, and records nothing more', async () => {
    const answers = [];
    for (let call = 0; call < 4; call++)
      answers.push(await client.authrep(userKey('key-limited'), { get_word: 1 }));
    const denied = answers.find((outcome) => outcome.kind === 'denied');
    expect(denied).toMatchObject({
      kind: 'denied',
      reason: 'limits_exceeded',
      reasonText: 'usage limits are exceeded',
      limitHeaders: { remaining: 0 },
    });
    expect(platform.usage(SERVICE_ID, 'app-limited', 'hits', 'hour')).toBe(3);
  });

  it('denies a disabled method (eternity limit 0) with its eternity usage report', async () => {
    const outcome = await client.authorize(userKey('key-reported'), { post_word: 1 });
    expect(outcome.kind === 'denied' && outcome.reason).toBe('limits_exceeded');
    expect(outcome.kind === 'denied' && outcome.usageReports).toContainEqual(
      expect.objectContaining({ metric: 'post_word', period: 'eternity', periodEnd: undefined, maxValue: 0 }),
    );
  });

  it('denies a suspended application', async () => {
    expect(await client.authorize(userKey('key-suspended'))).toMatchObject({
      kind: 'denied',
      reason: 'application_not_active',
    });
  });

  it('answers invalid_credential for an unknown key, without the key in the message', async () => {
    const outcome = await client.authrep(userKey('no-such-key'), { hits: 1 });
    expect(outcome).toMatchObject({ kind: 'invalid_credential', code: 'user_key_invalid' });
    expect(JSON.stringify(outcome)).not.toContain('no-such-key');
  });

  it('answers misconfigured for an unknown metric and for a wrong provider key', async () => {
    expect(await client.authorize(userKey('key-reported'), { nope: 1 })).toMatchObject({
      kind: 'misconfigured',
      code: 'metric_invalid',
      status: 404,
    });
    const wrongKey = createPlatformClient({
      baseUrl: platform.url,
      serviceId: SERVICE_ID,
      serviceAuth: { kind: 'provider_key', providerKey: 'pk-wrong' },
    });
    const outcome = await wrongKey.authorize(userKey('key-reported'));
    wrongKey.close();
    expect(outcome).toMatchObject({ kind: 'misconfigured', code: 'provider_key_invalid', status: 403 });
    expect(JSON.stringify(outcome)).not.toContain('pk-wrong');
  });

  it('reports usage that the next authorize shows in current_value', async () => {
    const hitsOf = async () => {
      const outcome = await client.authorize(userKey('key-reported'));
      if (outcome.kind !== 'authorized') throw new Error(`expected authorized, got ${outcome.kind}`);
      return outcome.usageReports.find((report) => report.metric === 'hits')?.currentValue;
    };
    const before = await hitsOf();
    const reported = await client.report([
      { credential: userKey('key-reported'), usage: { get_word: 1 }, timestamp: NOW - 60_000 },
      { credential: userKey('key-reported'), usage: { hits: 1 } },
    ]);
    expect(reported).toEqual({ kind: 'accepted', requests: 1 });
    expect(platform.reportErrors()).toEqual([]);
    expect(before).toBe(0);
    expect(await hitsOf()).toBe(2);
  });

  it('reports 2500 transactions in 3 requests, all of them counted', async () => {
    const transactions: Transaction[] = Array.from({ length: 2500 }, () => ({
      credential: userKey('key-bulk'),
      usage: { get_word: 1 },
    }));
    expect(await client.report(transactions)).toEqual({ kind: 'accepted', requests: 3 });
    expect(platform.reportErrors()).toEqual([]);
    expect(platform.usage(SERVICE_ID, 'app-bulk', 'get_word', 'day')).toBe(2500);
    expect(platform.usage(SERVICE_ID, 'app-bulk', 'hits', 'day')).toBe(2500);
  });

  it('speaks app_id mode with a service token', async () => {
    const appClient = createPlatformClient({
      baseUrl: platform.url,
      serviceId: APP_SERVICE_ID,
      serviceAuth: { kind: 'service_token', serviceToken: SERVICE_TOKEN },
    });
    try {
      expect(
        await appClient.authrep({ kind: 'app_id', appId: 'app-id-1', appKey: 'app-key-1' }, { hits: 1 }),
      ).toMatchObject({ kind: 'authorized', plan: 'Basic' });
      const wrongKey = await appClient.authrep(
        { kind: 'app_id', appId: 'app-id-1', appKey: 'wrong-app-key' },
        {},
      );
      expect(wrongKey).toMatchObject({ kind: 'denied', reason: 'application_key_invalid' });
      expect(JSON.stringify(wrongKey)).not.toContain('wrong-app-key');
      expect(await appClient.authorize({ kind: 'app_id', appId: 'app-id-1' })).toMatchObject({
        kind: 'denied',
        reason: 'application_key_invalid',
        reasonText: 'application key is missing',
      });
      expect(await appClient.authorize({ kind: 'app_id', appId: 'no-such-app', appKey: 'k' })).toMatchObject({
        kind: 'invalid_credential',
        code: 'application_not_found',
      });
    } finally {
      appClient.close();
    }
  });
});

describe('platform client against the local platform over TLS', () => {
  it('authorizes through an agent that trusts the platform certificate', async () => {
    const tlsPlatform = await startPlatform({ config: platformConfig, now: () => NOW, tls: true });
    const agent = new https.Agent({ keepAlive: true, ca: tlsPlatform.certificate });
    const tlsClient = createPlatformClient({
      baseUrl: tlsPlatform.url,
      serviceId: SERVICE_ID,
      serviceAuth: { kind: 'provider_key', providerKey: PROVIDER_KEY },
      agent,
    });
    try {
      expect(await tlsClient.authorize(userKey('key-bulk'))).toMatchObject({
        kind: 'authorized',
        plan: 'Bulk',
      });
    } finally {
      agent.destroy();
      await tlsPlatform.stop();
    }
  });
});

describe('platform client when the platform is gone', () => {
  it('answers unavailable, refused, after the platform stopped', async () => {
    const gone = await startPlatform({ config: platformConfig, now: () => NOW });
    const goneClient = createPlatformClient({
      baseUrl: gone.url,
      serviceId: SERVICE_ID,
      serviceAuth: { kind: 'provider_key', providerKey: PROVIDER_KEY },
    });
    expect(await goneClient.authorize(userKey('key-bulk'))).toMatchObject({ kind: 'authorized' });
    goneClient.close();
    await gone.stop();
    expect(await goneClient.authorize(userKey('key-bulk'))).toMatchObject({
      kind: 'unavailable',
      cause: 'refused',
    });
  });
});
