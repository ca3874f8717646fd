/**
 * OAuth end to end over HTTP through npm start's stack (the demo file, a real redis-server): a token from
 * POST /oauth/token with the client credentials in the query string, calls with ?access_token= and with
 * Bearer up to the plan's limit, and the platform counting exactly the allowed calls against the
 * application; the token endpoint's bounds on guessing and on its inputs.
 */
import { readFileSync } from 'node:fs';
import { request } from 'node:http';
import { afterAll, describe, expect, it } from 'vitest';
import { defaultOf } from '../../core/settings/settings';
import { type LocalStack, startLocalStack } from '../../local/stack';
import { API_KINDS } from './fixtures';

const SERVICE = '2555417735062';
const stacks: LocalStack[] = [];

afterAll(async () => {
  await Promise.all(stacks.map((stack) => stack.stop()));
});

/** The demo stack, its OAuth API of the given kind (default the file's: a REST API). */
async function demoApi(entry: object = {}) {
  const file = JSON.parse(readFileSync('local/demo.stack.json', 'utf8')) as {
    gateway: { serviceId: string }[];
  };
  const stack = await startLocalStack({
    stack: {
      ...file,
      gateway: file.gateway.map((gateway) =>
        gateway.serviceId === SERVICE ? { ...gateway, ...entry } : gateway,
      ),
    },
    env: {},
    port: 0,
    redis: 'auto',
    sweepIntervalMs: 0,
  });
  stacks.push(stack);
  const api = stack.gateways.find((gateway) => gateway.serviceId === SERVICE);
  if (!api) throw new Error('no OAuth API in the demo');
  return { stack, api };
}

/** POST /oauth/token with a form body, sent from `localAddress` (any 127.0.0.0/8 address is loopback). */
function tokenFrom(
  base: string,
  form: Record<string, string>,
  localAddress = '127.0.0.1',
): Promise<{ status: number; headers: Record<string, unknown>; body: string }> {
  const body = new URLSearchParams({ grant_type: 'client_credentials', ...form }).toString();
  return new Promise((resolve, reject) => {
    const sent = request(
      `${base}/oauth/token`,
      {
        method: 'POST',
        localAddress,
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        timeout: 10_000,
      },
      (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('end', () =>
          resolve({
            status: response.statusCode ?? 0,
            headers: response.headers,
            body: Buffer.concat(chunks).toString('utf8'),
          }),
        );
      },
    );
    sent.on('timeout', () => sent.destroy(new Error('token request timed out')));
    sent.on('error', reject);
    sent.end(body);
  });
}

async function token(base: string, secret = 'demo-oauth-secret') {
  const query = new URLSearchParams({
    grant_type: 'client_credentials',
    client_id: 'demo-oauth-app',
    client_secret: secret,
  });
  const response = await fetch(`${base}/oauth/token?${query}`, {
    method: 'POST',
    signal: AbortSignal.timeout(10_000),
  });
  const body = (await response.json()) as { error?: string; access_token?: string };
  return { status: response.status, body, headers: response.headers };
}

describe.each(API_KINDS)('the demo OAuth API ($apiType API)', (kind) => {
  it('issues a token, lets 20 calls an hour through, and the platform counts exactly those', async () => {
    const { stack, api } = await demoApi(kind.entry);
    expect(api.url).toMatch(kind.apiType === 'http' ? /\/oauth-api\/prod$/ : /\/oauth-api$/);

    const refused = await token(api.url, 'wrong');
    expect(refused.status).toBe(401);
    expect(refused.body.error).toBe('invalid_client');

    const issued = await token(api.url);
    expect(issued.status).toBe(200);
    expect(issued.headers.get('cache-control')).toBe('no-store');
    const accessToken = issued.body.access_token ?? '';

    const statuses: number[] = [];
    for (let i = 0; i < 12; i++) {
      const response = await fetch(`${api.url}/v1/words/hello.json?access_token=${accessToken}`);
      statuses.push(response.status);
      await response.arrayBuffer();
    }
    for (let i = 0; i < 10; i++) {
      const response = await fetch(`${api.url}/v1/words/hello.json`, {
        headers: { authorization: `Bearer ${accessToken}` },
      });
      statuses.push(response.status);
      await response.arrayBuffer();
    }
    expect(statuses.filter((s) => s === 200)).toHaveLength(20);
    expect(statuses.slice(20)).toEqual([403, 403]);

    const forged = await fetch(`${api.url}/v1/words/hello.json?access_token=${accessToken.slice(0, -4)}AAAA`);
    expect(forged.status).toBe(kind.refusedCredential);
    // A REST API's 401 gateway response carries the Bearer challenge; an HTTP API has no gateway responses.
    if (kind.apiType === 'rest') {
      expect(forged.headers.get('www-authenticate')).toMatch(/^Bearer .*error="invalid_token"/);
    } else {
      expect(await forged.json()).toEqual({ message: 'Forbidden' });
    }

    await stack.flush();
    expect(stack.platform?.usage(SERVICE, 'demo-oauth-app', 'hits', 'hour')).toBe(20);
  }, 60_000);
});

describe('the token endpoint under attack', () => {
  it('300 distinct wrong secrets from one address reach the platform 10 times; the right one from another address gets a token', async () => {
    const { stack, api } = await demoApi();
    const platform = stack.platform;
    if (!platform) throw new Error('the demo has a local platform');
    const before = platform.stats().authorize;
    const statuses = new Map<number, number>();
    let retryAfter: unknown;
    for (let i = 0; i < 300; i++) {
      const answer = await tokenFrom(api.url, { client_id: 'demo-oauth-app', client_secret: `guess-${i}` });
      statuses.set(answer.status, (statuses.get(answer.status) ?? 0) + 1);
      if (answer.status === 429) retryAfter ??= answer.headers['retry-after'];
    }
    const perAddress = defaultOf('tokenGuessesPerAddress');
    expect(platform.stats().authorize - before).toBe(perAddress);
    expect(Object.fromEntries(statuses)).toEqual({ 401: perAddress, 429: 300 - perAddress });
    expect(Number(retryAfter)).toBeGreaterThan(0);

    const genuine = { client_id: 'demo-oauth-app', client_secret: 'demo-oauth-secret' };
    const fromElsewhere = await tokenFrom(api.url, genuine, '127.0.0.2');
    expect(fromElsewhere.status).toBe(200);
    const call = await fetch(`${api.url}/v1/words/hello.json`, {
      headers: { authorization: `Bearer ${JSON.parse(fromElsewhere.body).access_token}` },
    });
    expect(call.status).toBe(200);
    expect((await tokenFrom(api.url, genuine)).status).toBe(429);
  }, 120_000);

  it('a 100 KB id or secret, or an id the authorizer would refuse, is 401 without the platform, never a 5xx', async () => {
    const { stack, api } = await demoApi();
    const platform = stack.platform;
    if (!platform) throw new Error('the demo has a local platform');
    const before = platform.stats().authorize;
    const huge = 'x'.repeat(100 * 1024);
    const flawed = [
      { client_id: huge, client_secret: 'demo-oauth-secret' },
      { client_id: 'demo-oauth-app', client_secret: huge },
      ...['\u0000', ' ', '\t', '\n'].map((flaw) => ({
        client_id: `demo-oauth-app${flaw}`,
        client_secret: 'demo-oauth-secret',
      })),
    ];
    for (const form of flawed) {
      const answer = await tokenFrom(api.url, form, '127.0.0.3');
      expect(answer.status).toBe(401);
      expect(JSON.parse(answer.body)).toMatchObject({ error: 'invalid_client' });
    }
    expect(platform.stats().authorize).toBe(before);
  }, 60_000);
});

describe('tokens issued before their secret is deleted or their application suspended', () => {
  const ISSUER_SERVICE = 'svc-tokens';
  const PROVIDER = 'pk-tokens';
  const platformSection = {
    services: [
      {
        id: ISSUER_SERVICE,
        providerKey: PROVIDER,
        authentication: 'oidc',
        metrics: [{ name: 'hits' }],
        plans: [{ name: 'Plenty', limits: [{ metric: 'hits', period: 'hour', value: 1000 }] }],
        applications: [{ id: 'app-keys', appKeys: ['key-one', 'key-two'], plan: 'Plenty' }],
      },
    ],
  };

  async function oauthApi(webhooks: boolean) {
    const stack = await startLocalStack({
      stack: {
        platform: platformSection,
        gateway: { serviceId: ISSUER_SERVICE, credentialMode: 'oauth', routes: ['GET /v1/words/{word}'] },
      },
      port: 0,
      redis: 'auto',
      sweepIntervalMs: 0,
      webhooks,
    });
    stacks.push(stack);
    const [api] = stack.gateways;
    if (!api || !stack.platform) throw new Error('the stack has no gateway or no platform');
    const platformUrl = stack.platform.url;
    return {
      api,
      async tokenOf(secret: string) {
        const answer = await tokenFrom(api.url, { client_id: 'app-keys', client_secret: secret });
        expect(answer.status).toBe(200);
        return JSON.parse(answer.body).access_token as string;
      },
      async call(accessToken: string) {
        const response = await fetch(`${api.url}/v1/words/w`, {
          headers: { authorization: `Bearer ${accessToken}` },
          signal: AbortSignal.timeout(10_000),
        });
        await response.arrayBuffer();
        return response.status;
      },
      async admin(method: string, path: string) {
        const response = await fetch(`${platformUrl}/admin/api/accounts/1/applications/app-keys/${path}`, {
          method,
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
          body: new URLSearchParams({ provider_key: PROVIDER }).toString(),
          signal: AbortSignal.timeout(5000),
        });
        expect(response.status).toBeLessThan(300);
      },
    };
  }

  /** Calls until the status is `wanted`, at most `limitMs`; the statuses seen. */
  async function until(send: () => Promise<number>, wanted: number, limitMs: number): Promise<number> {
    const startedAt = performance.now();
    let status = await send();
    while (status !== wanted && performance.now() - startedAt < limitMs) {
      await new Promise((resolve) => setTimeout(resolve, 20));
      status = await send();
    }
    return status;
  }

  /** Past the second of the webhook: a token's `iat` has whole seconds. */
  const nextSecond = () => new Promise((resolve) => setTimeout(resolve, 1000 - (Date.now() % 1000) + 10));

  it('with webhooks: a deleted key refuses the tokens issued before it, verified ones too; new tokens work', async () => {
    const { api, tokenOf, call, admin } = await oauthApi(true);
    const before = await tokenOf('key-one');
    const otherBefore = await tokenOf('key-two');
    expect([await call(before), await call(before), await call(otherBefore)]).toEqual([200, 200, 200]);
    // `iat` has whole seconds, compared as such: tokens of the event's own second are accepted.
    await nextSecond();
    await admin('DELETE', 'keys/key-one.xml');
    expect(await until(() => call(before), 401, 1000)).toBe(401);
    // The application's tokens issued before the deletion, whichever key they were had with.
    expect(await call(otherBefore)).toBe(401);
    await nextSecond();
    expect(await call(await tokenOf('key-two'))).toBe(200);
    expect((await tokenFrom(api.url, { client_id: 'app-keys', client_secret: 'key-one' })).status).toBe(401);
  }, 60_000);

  it('with webhooks: tokens from before a suspension stay refused once the application is resumed', async () => {
    const { tokenOf, call, admin } = await oauthApi(true);
    const before = await tokenOf('key-one');
    expect(await call(before)).toBe(200);
    await nextSecond();
    await admin('PUT', 'suspend.xml');
    expect(await until(() => call(before), 401, 1000)).toBe(401);
    await admin('PUT', 'resume.xml');
    // Minted at once, most often in the suspension's own second: accepted (its iat is not before it).
    const after = await tokenOf('key-one');
    expect(await until(() => call(after), 200, 3000)).toBe(200);
    expect(await call(before)).toBe(401);
  }, 60_000);

  it('without webhooks: a token outlives its deleted key until it expires (docs/oauth.md)', async () => {
    const { tokenOf, call, admin } = await oauthApi(false);
    const before = await tokenOf('key-one');
    expect(await call(before)).toBe(200);
    await admin('DELETE', 'keys/key-one.xml');
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(await call(before)).toBe(200);
  }, 60_000);
});
