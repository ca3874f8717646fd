/**
 * The webhook receiver's core and handler with fakes: the event XML 3scale sends (in a form field, or as
 * the body), the refresh of the application's budget, and the handler's answers (token, bad XML,
 * unknown application, platform without an answer).
 */
import type { APIGatewayProxyEvent } from 'aws-lambda';
import type Redis from 'ioredis';
import RedisMock from 'ioredis-mock';
import { beforeEach, describe, expect, it } from 'vitest';
import { AccessCache } from '../../../../core/budget/cache';
import { credentialKeys } from '../../../../core/budget/keys';
import { credentialIdOf, keyIdOf } from '../../../../core/credentials';
import { createCredentialSealer } from '../../../../core/credentials/seal';
import { redisTokensNotBefore } from '../../../../core/credentials/token-not-before';
import { METRIC } from '../../../../core/observability/metric-names';
import type { Credential } from '../../../../core/platform/types';
import {
  applyPlatformEvent,
  eventXmlOf,
  parseEventXml,
  tokenMatches,
  WebhookBodyError,
  type WebhookPorts,
} from '../../../../core/platform/webhooks';
import { createWebhookHandler } from '../../../../lambdas/webhooks/handler';
import { applicationEventXml } from '../../../../local/platform/admin-xml';
import { Application, Service } from '../../../../local/platform/model';
import { authorized, CapturingLogger, CapturingMetrics, denied, FakePlatform, UNAVAILABLE } from '../fakes';

const SERVICE = 'svc-hooks';
const NOW = Date.UTC(2030, 0, 1, 10, 0, 0);
const TOKEN = 'hook-token-secret';
const sealer = createCredentialSealer('pk-test', SERVICE);

let redis: Redis;
let platform: FakePlatform;
let logger: CapturingLogger;
let cache: AccessCache;

beforeEach(async () => {
  redis = new RedisMock() as unknown as Redis;
  await redis.flushall();
  platform = new FakePlatform();
  logger = new CapturingLogger();
  cache = new AccessCache(redis, { serviceId: SERVICE, negativeTtlMs: 60_000, leaseMs: 60_000 });
});

function ports(mode: 'user_key' | 'app_id' | 'oauth' = 'user_key'): WebhookPorts {
  return {
    serviceId: SERVICE,
    credentialMode: mode,
    cache,
    tokensNotBefore: redisTokensNotBefore(redis, SERVICE, logger),
    sealer,
    platform,
    now: () => NOW,
    logger,
    metrics: new CapturingMetrics(),
  };
}

function eventXml(
  action: string,
  app: { id: string; userKey?: string; appKeys?: string[]; state?: 'active' | 'suspended' },
) {
  const service = new Service({
    id: SERVICE,
    providerKey: 'pk-hooks',
    authentication: app.userKey === undefined ? 'app_id' : 'user_key',
    state: 'active',
    metrics: [{ name: 'hits', children: [] }],
    plans: [{ name: 'Basic', limits: [] }],
    applications: [],
  });
  const application = new Application(
    app.id,
    app.userKey,
    new Set(app.appKeys ?? []),
    'Basic',
    app.state ?? 'active',
    [],
  );
  return applicationEventXml(action, service, application);
}

async function cached(credential: Credential): Promise<string> {
  const credentialId = credentialIdOf(SERVICE, credential);
  await cache.storeAnswer({
    credentialId,
    keyId: keyIdOf(SERVICE, credential),
    sealedCredential: sealer.seal(credentialId, credential),
    answer: authorized() as never,
    now: NOW,
  });
  return credentialId;
}

describe('parseEventXml', () => {
  it('reads an application event of each mode', () => {
    expect(parseEventXml(eventXml('suspended', { id: 'a1', userKey: 'uk' }))).toEqual({
      type: 'application',
      action: 'suspended',
      serviceId: SERVICE,
      userKey: 'uk',
      keys: [],
    });
    expect(parseEventXml(eventXml('key_deleted', { id: 'a2', appKeys: ['k1'] }))).toMatchObject({
      appId: 'a2',
      keys: ['k1'],
    });
  });

  it('takes the form field xml (3scale by default) or the XML body', () => {
    const xml = eventXml('updated', { id: 'a1', userKey: 'uk' });
    const form = new URLSearchParams({ xml }).toString();
    expect(eventXmlOf(form, 'application/x-www-form-urlencoded; charset=utf-8')).toBe(xml);
    expect(eventXmlOf(xml, 'application/xml')).toBe(xml);
    expect(() => eventXmlOf('other=1', 'application/x-www-form-urlencoded')).toThrow(/no xml field/);
  });

  it('says what is wrong with a body that is no event', () => {
    expect(() => parseEventXml('<event><action>')).toThrow(WebhookBodyError);
    expect(() => parseEventXml('<status/>')).toThrow(/not an <event>/);
    expect(() => parseEventXml('<event><action>x</action><type>application</type></event>')).toThrow(
      /no <object><application>/,
    );
    expect(parseEventXml('<event><action>created</action><type>account</type><object/></event>')).toEqual({
      type: 'other',
      objectType: 'account',
      action: 'created',
    });
  });
});

describe('applyPlatformEvent', () => {
  it('stores the fresh answer of a suspended application: the budget is denied at once', async () => {
    const id = await cached({ kind: 'user_key', userKey: 'uk' });
    platform.authorizeAnswer = () => denied('application_not_active');
    const outcome = await applyPlatformEvent(
      ports(),
      parseEventXml(eventXml('suspended', { id: 'a', userKey: 'uk' })),
    );
    expect(outcome).toEqual({ kind: 'refreshed', credentialId: id, state: 'denied' });
    expect(await redis.hget(credentialKeys(SERVICE, id).app, 'state')).toBe('denied:application_not_active');
  });

  it('leaves alone an application the cache does not hold, another service and other objects', async () => {
    expect(
      await applyPlatformEvent(ports(), parseEventXml(eventXml('updated', { id: 'a', userKey: 'new' }))),
    ).toEqual({
      kind: 'unknown',
    });
    const other = eventXml('updated', { id: 'a', userKey: 'uk' }).replaceAll(SERVICE, 'svc-other');
    expect(await applyPlatformEvent(ports(), parseEventXml(other))).toMatchObject({ kind: 'ignored' });
    expect(platform.calls).toEqual([]);
  });

  it('refuses a deleted application without asking the platform', async () => {
    const id = await cached({ kind: 'user_key', userKey: 'uk' });
    await applyPlatformEvent(ports(), parseEventXml(eventXml('deleted', { id: 'a', userKey: 'uk' })));
    expect(await redis.hget(credentialKeys(SERVICE, id).app, 'state')).toBe('invalid:user_key_invalid');
    expect(platform.calls).toEqual([]);
  });

  it('forgets a deleted app key, keeps the others', async () => {
    const id = await cached({ kind: 'app_id', appId: 'a', appKey: 'k1' });
    await cached({ kind: 'app_id', appId: 'a', appKey: 'k2' });
    platform.authorizeAnswer = () => authorized();
    await applyPlatformEvent(
      ports('app_id'),
      parseEventXml(eventXml('key_deleted', { id: 'a', appKeys: ['k2'] })),
    );
    expect(await redis.hkeys(credentialKeys(SERVICE, id).keys)).toEqual([
      keyIdOf(SERVICE, { kind: 'app_id', appId: 'a', appKey: 'k2' }),
    ]);
  });

  it('oauth: a deleted key, a suspension or a deletion refuses the tokens issued before now, budget cached or not', async () => {
    const notBefore = credentialKeys(
      SERVICE,
      credentialIdOf(SERVICE, { kind: 'app_id', appId: 'a' }),
    ).tokensNotBefore;
    platform.authorizeAnswer = () => authorized();
    for (const action of ['key_deleted', 'suspended', 'deleted']) {
      await redis.del(notBefore);
      await applyPlatformEvent(ports('oauth'), parseEventXml(eventXml(action, { id: 'a', appKeys: ['k2'] })));
      expect(await redis.get(notBefore), action).toBe(String(NOW));
      expect(await redis.ttl(notBefore)).toBeGreaterThan(86_400);
    }
    await redis.del(notBefore);
    for (const [mode, action] of [
      ['oauth', 'updated'],
      ['oauth', 'key_created'],
      ['app_id', 'key_deleted'],
    ] as const) {
      await applyPlatformEvent(ports(mode), parseEventXml(eventXml(action, { id: 'a', appKeys: ['k2'] })));
      expect(await redis.get(notBefore), `${mode} ${action}`).toBeNull();
    }
  });

  it('forgets the refusals of credentials an event says exist: a key tried before it was created', async () => {
    const budget = await cached({ kind: 'app_id', appId: 'a', appKey: 'k1' });
    const tried = { kind: 'app_id', appId: 'a', appKey: 'k-new' } as const;
    await cache.storeAnswer({
      credentialId: budget,
      keyId: keyIdOf(SERVICE, tried),
      sealedCredential: sealer.seal(budget, tried),
      answer: denied('application_key_invalid') as never,
      now: NOW,
    });
    const unknownUserKey = credentialIdOf(SERVICE, { kind: 'user_key', userKey: 'uk-new' });
    await redis.set(
      credentialKeys(SERVICE, unknownUserKey).negative,
      'invalid:user_key_invalid',
      'PX',
      60_000,
    );
    expect(await redis.hget(credentialKeys(SERVICE, budget).keys, keyIdOf(SERVICE, tried))).toMatch(/^bad /);

    await applyPlatformEvent(
      ports('app_id'),
      parseEventXml(eventXml('key_created', { id: 'a', appKeys: ['k1', 'k-new'] })),
    );
    expect(await redis.hget(credentialKeys(SERVICE, budget).keys, keyIdOf(SERVICE, tried))).toBeNull();
    expect(
      await redis.hget(
        credentialKeys(SERVICE, budget).keys,
        keyIdOf(SERVICE, { kind: 'app_id', appId: 'a', appKey: 'k1' }),
      ),
    ).toMatch(/^ok /);

    await applyPlatformEvent(
      ports(),
      parseEventXml(eventXml('user_key_updated', { id: 'u', userKey: 'uk-new' })),
    );
    expect(await redis.exists(credentialKeys(SERVICE, unknownUserKey).negative)).toBe(0);
  });

  it('says when the platform did not answer the refresh', async () => {
    await cached({ kind: 'user_key', userKey: 'uk' });
    platform.authorizeAnswer = () => UNAVAILABLE;
    const outcome = await applyPlatformEvent(
      ports(),
      parseEventXml(eventXml('updated', { id: 'a', userKey: 'uk' })),
    );
    expect(outcome.kind).toBe('unanswered');
  });
});

describe('tokenMatches', () => {
  it('matches only the same token, of any length', () => {
    expect(tokenMatches(TOKEN, TOKEN)).toBe(true);
    expect(tokenMatches('short', TOKEN)).toBe(false);
    expect(tokenMatches(undefined, TOKEN)).toBe(false);
    expect(tokenMatches('', '')).toBe(false);
  });
});

describe('webhook handler', () => {
  function request(
    token: string | undefined,
    body: string,
    contentType = 'application/x-www-form-urlencoded',
  ) {
    return {
      body,
      headers: { 'Content-Type': contentType },
      queryStringParameters: token === undefined ? null : { token },
      isBase64Encoded: false,
    } as unknown as APIGatewayProxyEvent;
  }
  const handler = () => createWebhookHandler({ ...ports(), token: TOKEN });
  const form = (xml: string) => new URLSearchParams({ xml }).toString();

  it('refuses a wrong or missing token with 401 and never logs it', async () => {
    expect((await handler()(request('nope', form('<x/>')))).statusCode).toBe(401);
    expect((await handler()(request(undefined, form('<x/>')))).statusCode).toBe(401);
    expect(JSON.stringify(logger.lines)).not.toContain(TOKEN);
  });

  it('answers 400 with the reason for bad XML, 200 for an unknown application, 503 without the platform', async () => {
    const bad = await handler()(request(TOKEN, form('<event>')));
    expect(bad.statusCode).toBe(400);
    expect(JSON.parse(bad.body).message).toMatch(/not well-formed XML/);
    const unknown = await handler()(request(TOKEN, form(eventXml('suspended', { id: 'a', userKey: 'uk' }))));
    expect(unknown).toMatchObject({ statusCode: 200, body: JSON.stringify({ message: 'unknown' }) });
    await cached({ kind: 'user_key', userKey: 'uk' });
    platform.authorizeAnswer = () => UNAVAILABLE;
    expect(
      (await handler()(request(TOKEN, eventXml('updated', { id: 'a', userKey: 'uk' }), 'application/xml')))
        .statusCode,
    ).toBe(503);
  });

  it("refuses unreadable XML as the sender's fault: external entities, DTDs, 30,000 levels: 400, logged, not counted", async () => {
    const metrics = new CapturingMetrics();
    const receive = createWebhookHandler({ ...ports(), metrics, token: TOKEN });
    const application = eventXml('suspended', { id: 'a', userKey: 'uk' });
    const unreadable = [
      `<?xml version="1.0"?><!DOCTYPE event [<!ENTITY x SYSTEM "file:///etc/passwd">]>${application.replace(/^<\?xml[^>]*\?>/, '').replace('<action>', '<action>&x;')}`,
      `<!DOCTYPE event>${application.replace(/^<\?xml[^>]*\?>/, '')}`,
      `<event>${'<n>'.repeat(30_000)}${'</n>'.repeat(30_000)}</event>`,
    ];
    // As the body, and as the form field 3scale sends (the deep one is over the body cap once form-encoded).
    const requests = [
      ...unreadable.map((xml) => request(TOKEN, xml, 'application/xml')),
      ...unreadable.slice(0, 2).map((xml) => request(TOKEN, form(xml))),
    ];
    for (const sent of requests) {
      const answer = await receive(sent);
      expect(answer.statusCode).toBe(400);
      expect(JSON.parse(answer.body).message).toMatch(
        /^not a webhook event: the body is not well-formed XML/,
      );
    }
    expect(metrics.counts[METRIC.webhookFailed]).toBeUndefined();
    expect(logger.lines.filter((line) => line.level === 'error')).toEqual([]);
    expect(
      logger.lines.filter((line) => line.message === 'webhook refused: not a webhook event'),
    ).toHaveLength(requests.length);
  });

  it('counts each 503 as WebhookFailed, the metric its alarm watches, and nothing else', async () => {
    const metrics = new CapturingMetrics();
    const receive = (deps: Partial<WebhookPorts>) =>
      createWebhookHandler({ ...ports(), metrics, token: TOKEN, ...deps });
    const suspended = form(eventXml('suspended', { id: 'a', userKey: 'uk' }));
    expect((await receive({})(request(TOKEN, suspended))).statusCode).toBe(200);
    expect((await receive({})(request('nope', suspended))).statusCode).toBe(401);
    expect(metrics.counts[METRIC.webhookFailed]).toBeUndefined();

    await cached({ kind: 'user_key', userKey: 'uk' });
    platform.authorizeAnswer = () => UNAVAILABLE;
    expect((await receive({})(request(TOKEN, suspended))).statusCode).toBe(503);
    const redisDown = Object.assign(Object.create(cache) as AccessCache, {
      hasBudget: () => Promise.reject(new Error('connection lost')),
    });
    expect((await receive({ cache: redisDown })(request(TOKEN, suspended))).statusCode).toBe(503);
    expect(metrics.counts[METRIC.webhookFailed]).toBe(2);
  });
});
