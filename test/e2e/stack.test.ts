/**
 * The whole product over HTTP: the local gateway with the real authorizer, reporter and echo handlers,
 * a real redis-server, the SNS endpoint and queue, and the local platform.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startPlatform } from '../../local/platform';
import { type LocalStack, startLocalStack } from '../../local/stack';
import {
  call,
  clockFromStartOfHour,
  HOURLY_LIMIT,
  PLATFORM_SECTION,
  PROVIDER_KEY,
  platformCurrentValue,
  STACK_FILE,
  USER_GATEWAY,
  USER_SERVICE,
} from './fixtures';

describe('local stack end to end (real redis-server)', () => {
  let stack: LocalStack;
  let api: string;
  let appApi: string;

  beforeAll(async () => {
    stack = await startLocalStack({
      stack: STACK_FILE,
      redis: 'auto',
      sweepIntervalMs: 0,
      now: clockFromStartOfHour(),
    });
    api = stack.gateways[0]?.url ?? '';
    appApi = stack.gateways[1]?.url ?? '';
  });

  afterAll(async () => {
    await stack?.stop();
  });

  it('runs on a real redis-server and its own local platform', () => {
    expect(stack.redis.kind).toBe('redis-server');
    expect(stack.platform).toBeDefined();
    expect(stack.gateways.map((gateway) => gateway.config.platformUrl)).toEqual([
      stack.platform?.url,
      stack.platform?.url,
    ]);
  });

  it('answers a valid key with 200 and the echo body', async () => {
    const { status, body } = await call(`${api}/v1/words/hello.json?lang=en`, {
      headers: { apikey: 'key-roomy' },
    });
    expect(status).toBe(200);
    expect(body).toMatchObject({
      method: 'GET',
      path: '/v1/words/hello.json',
      resource: '/v1/words/{word}',
      pathParameters: { word: 'hello.json' },
      queryStringParameters: { lang: 'en' },
      authorizer: { plan: 'Roomy', metrics: 'get_word' },
    });
    const authorizer = body.authorizer as Record<string, string>;
    expect(authorizer.principalId).toBe(authorizer.credentialId);
    expect(JSON.stringify(body)).not.toContain('key-roomy');
  });

  it('answers a missing key and an invalid key with 401', async () => {
    const missing = await call(`${api}/v1/words/hello.json`);
    const invalid = await call(`${api}/v1/words/hello.json`, { headers: { apikey: 'no-such-key' } });
    for (const answer of [missing, invalid]) {
      expect(answer.status).toBe(401);
      expect(answer.body).toMatchObject({ reason: 'invalid_credential' });
    }
  });

  it('answers a disabled method with 403 and the reason in the body', async () => {
    const { status, body } = await call(`${api}/v1/words/hello.json`, {
      method: 'POST',
      headers: { apikey: 'key-post' },
    });
    expect(status).toBe(403);
    // The platform refused this first call itself (authrep): the body names the limit its answer
    // reported, a disabled method's 0 for eternity, which never resets (no reset, no Retry-After).
    expect(body).toEqual({
      message: 'Access denied',
      reason: 'limits_exceeded',
      metric: 'post_word',
      period: 'eternity',
      max: '0',
      reset: '',
    });
  });

  it('answers a suspended application with 403', async () => {
    const { status, body } = await call(`${api}/v1/words/hello.json`, {
      headers: { apikey: 'key-suspended' },
    });
    expect(status).toBe(403);
    expect(body).toMatchObject({ message: 'Access denied', reason: 'application_not_active', metric: '' });
  });

  it('lets exactly the hourly limit through, and the platform counts exactly those calls after the flush', async () => {
    const statuses: number[] = [];
    for (let i = 0; i < HOURLY_LIMIT + 5; i++) {
      statuses.push(
        (await call(`${api}/v1/words/w${i}.json`, { headers: { apikey: 'key-limited' } })).status,
      );
    }
    expect(statuses.filter((status) => status === 200)).toHaveLength(HOURLY_LIMIT);
    expect(statuses.filter((status) => status === 403)).toHaveLength(5);
    expect(statuses.slice(0, HOURLY_LIMIT).every((status) => status === 200)).toBe(true);

    const flushed = await stack.flush();
    expect(flushed).toEqual({ queued: 0, deadLetters: 0, unreported: 0, notAccepted: [] });
    const query = { provider_key: PROVIDER_KEY, service_id: USER_SERVICE, user_key: 'key-limited' };
    const platformUrl = stack.platform?.url ?? '';
    expect(await platformCurrentValue(platformUrl, query, 'hits', 'hour')).toBe(HOURLY_LIMIT);
  });

  it('publishes a usage alert at 80 % and at 100 % of the hourly limit, each once, naming no key', async () => {
    const before = stack.alerts().length;
    const get = () => call(`${api}/v1/words/alert.json`, { headers: { apikey: 'key-post' } });
    for (let i = 0; i < HOURLY_LIMIT - 1; i++) expect((await get()).status).toBe(200);
    await stack.flush();
    expect((await get()).status).toBe(200);
    expect((await get()).status).toBe(403);
    await stack.flush();
    await stack.flush();
    const alerts = stack.alerts().slice(before);
    expect(
      alerts.map((alert) => [alert.metric, alert.period, alert.level, alert.current, alert.max]),
    ).toEqual([
      ['hits', 'hour', 80, HOURLY_LIMIT - 1, HOURLY_LIMIT],
      ['hits', 'hour', 100, HOURLY_LIMIT, HOURLY_LIMIT],
    ]);
    // The local platform answers applications/find with the provider key, so the alert names the
    // application the key belongs to, as the platform's admin API says it.
    expect(alerts[0]).toMatchObject({
      service: USER_SERVICE,
      plan: 'Basic',
      application: 'app-disabled-post',
      applicationName: 'app-disabled-post',
    });
    expect(JSON.stringify(alerts)).not.toContain('key-post');
  });

  it('answers a route the API does not have with 404', async () => {
    const unknownPath = await call(`${api}/v2/words/hello.json`, { headers: { apikey: 'key-roomy' } });
    const unknownMethod = await call(`${api}/v1/words/hello.json`, {
      method: 'DELETE',
      headers: { apikey: 'key-roomy' },
    });
    for (const answer of [unknownPath, unknownMethod]) {
      expect(answer).toEqual({ status: 404, body: { message: 'Missing Authentication Token' } });
    }
  });

  it('serves an app_id API: the right app key gets 200, a wrong or missing one is refused', async () => {
    const good = await call(`${appApi}/v1/words/hello.json`, {
      headers: { app_id: 'app-a', app_key: 'secret-a' },
    });
    expect(good.status).toBe(200);
    expect(good.body).toMatchObject({ authorizer: { applicationId: 'app-a', plan: 'Basic' } });
    // The deployed echo's rule: the app key is hidden, the app id (no secret) is echoed.
    expect(good.body.headers).toMatchObject({ app_id: 'app-a' });
    expect(JSON.stringify(good.body)).not.toContain('secret-a');
    // The platform answers application_key_invalid: the authorizer treats it as an invalid credential.
    const wrongKey = await call(`${appApi}/v1/words/hello.json`, {
      headers: { app_id: 'app-a', app_key: 'wrong' },
    });
    expect(wrongKey).toMatchObject({ status: 401, body: { reason: 'invalid_credential' } });
    const unknownApp = await call(`${appApi}/v1/words/hello.json`, {
      headers: { app_id: 'nobody', app_key: 'x' },
    });
    expect(unknownApp.status).toBe(401);
    const missingKey = await call(`${appApi}/v1/words/hello.json`, { headers: { app_id: 'app-a' } });
    expect(missingKey.status).toBe(401);
  });

  it('reports every allowed call of a busy key through SNS, the queue and the reporter', async () => {
    const calls = 12;
    for (let i = 0; i < calls; i++) {
      expect((await call(`${api}/v1/words/busy.json`, { headers: { apikey: 'key-roomy' } })).status).toBe(
        200,
      );
    }
    const published = stack.sns.stats().published;
    expect(published).toBeGreaterThan(0);
    await stack.flush();
    const usage = stack.platform?.usage(USER_SERVICE, 'app-roomy', 'hits', 'hour');
    // Earlier tests made one allowed call with this key.
    expect(usage).toBe(calls + 1);
    expect(stack.gateways[0]?.queue.stats()).toMatchObject({ queued: 0, deadLetters: 0 });
  });
});

describe('local stack with a platform elsewhere (gateway.platformUrl)', () => {
  it('uses that platform, authenticated by the file, and starts none of its own', async () => {
    const now = clockFromStartOfHour();
    const external = await startPlatform({
      config: { services: PLATFORM_SECTION.services.slice(0, 1) },
      now,
    });
    let stack: LocalStack | undefined;
    try {
      stack = await startLocalStack({
        stack: { gateway: { ...USER_GATEWAY, platformUrl: external.url, providerKey: PROVIDER_KEY } },
        redis: 'auto',
        sweepIntervalMs: 0,
        now,
      });
      expect(stack.platform).toBeUndefined();
      expect(stack.gateways[0]?.config.platformUrl).toBe(external.url);
      const before = external.stats();
      for (let i = 0; i < 3; i++) {
        expect(
          (await call(`${stack.gatewayUrl}/v1/words/x.json`, { headers: { apikey: 'key-roomy' } })).status,
        ).toBe(200);
      }
      expect(external.stats().authrep).toBeGreaterThan(before.authrep);
      await stack.flush();
      expect(external.usage(USER_SERVICE, 'app-roomy', 'hits', 'hour')).toBe(3);
    } finally {
      await stack?.stop();
      await external.stop();
    }
  });

  it('takes the provider key from THREESCALE_PROVIDER_KEY when the file has none', async () => {
    const external = await startPlatform({ config: { services: PLATFORM_SECTION.services.slice(0, 1) } });
    let stack: LocalStack | undefined;
    try {
      stack = await startLocalStack({
        stack: { gateway: { ...USER_GATEWAY, platformUrl: external.url } },
        env: { THREESCALE_PROVIDER_KEY: PROVIDER_KEY },
        redis: 'auto',
        sweepIntervalMs: 0,
      });
      expect(
        (await call(`${stack.gatewayUrl}/v1/words/x.json`, { headers: { apikey: 'key-roomy' } })).status,
      ).toBe(200);
      expect(external.stats().authrep).toBe(1);
    } finally {
      await stack?.stop();
      await external.stop();
    }
  });
});

describe('local stack on the in-memory Redis stand-in', () => {
  it('still enforces the limit and reports the allowed calls', async () => {
    const stack = await startLocalStack({
      stack: STACK_FILE,
      redis: 'in-memory',
      sweepIntervalMs: 0,
      now: clockFromStartOfHour(),
    });
    try {
      expect(stack.redis.kind).toBe('in-memory');
      const statuses: number[] = [];
      for (let i = 0; i < HOURLY_LIMIT + 2; i++) {
        statuses.push(
          (await call(`${stack.gatewayUrl}/v1/words/m.json`, { headers: { apikey: 'key-limited' } })).status,
        );
      }
      expect(statuses.filter((status) => status === 200)).toHaveLength(HOURLY_LIMIT);
      await stack.flush();
      expect(stack.platform?.usage(USER_SERVICE, 'app-limited', 'hits', 'hour')).toBe(HOURLY_LIMIT);
    } finally {
      await stack.stop();
    }
  });
});

describe('local stack when SNS loses the usage messages', () => {
  it('flush() still reports every allowed call: its sweep finds the usage no message announced', async () => {
    const stack = await startLocalStack({
      stack: STACK_FILE,
      redis: 'auto',
      sweepIntervalMs: 0,
      now: clockFromStartOfHour(),
    });
    try {
      stack.sns.failNextPublishes(1000);
      const calls = 8;
      for (let i = 0; i < calls; i++) {
        expect(
          (await call(`${stack.gatewayUrl}/v1/words/lost.json`, { headers: { apikey: 'key-roomy' } })).status,
        ).toBe(200);
      }
      expect(stack.sns.stats().published).toBe(0);
      expect(stack.gateways[0]?.queue.stats().sent).toBe(0);
      await stack.flush();
      expect(stack.platform?.usage(USER_SERVICE, 'app-roomy', 'hits', 'hour')).toBe(calls);
    } finally {
      await stack.stop();
    }
  });

  it('the scheduled sweep reports usage pending for longer than a few windows, on its timer', async () => {
    const realTime = clockFromStartOfHour();
    let skipped = 0;
    const stack = await startLocalStack({
      stack: STACK_FILE,
      redis: 'auto',
      now: () => realTime() + skipped,
      sweepIntervalMs: 20,
    });
    try {
      stack.sns.failNextPublishes(1000);
      const calls = 4;
      for (let i = 0; i < calls; i++) {
        expect(
          (await call(`${stack.gatewayUrl}/v1/words/late.json`, { headers: { apikey: 'key-roomy' } })).status,
        ).toBe(200);
      }
      const usage = () => stack.platform?.usage(USER_SERVICE, 'app-roomy', 'hits', 'hour');
      // Only the first call, reported by its authrep: the rest is too recent for the scheduled sweep.
      expect(await stack.gateways[0]?.sweep()).toBeDefined();
      expect(usage()).toBe(1);
      skipped = 5 * 60_000;
      // The timer runs every 20 ms; wait (bounded) until it has swept, without timing anything.
      for (let attempt = 0; attempt < 500 && usage() !== calls; attempt++) {
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      expect(usage()).toBe(calls);
    } finally {
      await stack.stop();
    }
  });
});

describe('a refusal that passes later says when, through the local REST gateway', () => {
  let stack: LocalStack | undefined;

  afterAll(async () => {
    await stack?.stop();
  });

  it('platform_busy: 403 with Retry-After 1 and reset "1" in the body', async () => {
    // A clock that stays in one second: the second never-seen key meets the bound of 1 a second.
    const frozen = clockFromStartOfHour()();
    stack = await startLocalStack({
      stack: {
        platform: PLATFORM_SECTION,
        gateway: [{ ...USER_GATEWAY, unseenCredentialCallsPerSecond: 1 }],
      },
      redis: 'auto',
      sweepIntervalMs: 0,
      now: () => frozen,
    });
    const url = `${stack.gateways[0]?.url}/v1/words/hello.json`;
    const send = (key: string) =>
      fetch(url, { headers: { apikey: key }, signal: AbortSignal.timeout(10_000) });
    expect((await send('made-up-1')).status).toBe(401);
    const busy = await send('made-up-2');
    expect(busy.status).toBe(403);
    expect(busy.headers.get('retry-after')).toBe('1');
    expect(await busy.json()).toMatchObject({ reason: 'platform_busy', reset: '1' });
  });
});
