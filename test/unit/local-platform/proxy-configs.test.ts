/**
 * The local platform's proxy configuration endpoints answer as porta's
 * `Admin::Api::Services::Proxy::ConfigsController`: latest and one version per environment (`staging`
 * read as `sandbox`), 404 without one, 400 for an environment porta does not know, promote copying a
 * version (201) once, 422 after; a read-only token reads, only an `rw` one promotes.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { parseProxyConfig } from '../../../core/platform/proxy-config';
import { type RunningPlatform, startPlatform } from '../../../local/platform';

const SERVICE = '2555417735060';
const PK = 'pk-proxy';
const RW = 'tok-rw';
const RO = 'tok-ro';
const WORDS = { method: 'GET', pattern: '/v1/words/{word}.json?lang={lang}', metric: 'hits', delta: 1 };
const PREMIUM = { method: 'POST', pattern: '/v1/premium$', metric: 'hits', delta: 3, last: true };

let platform: RunningPlatform | undefined;
afterEach(async () => {
  await platform?.stop();
  platform = undefined;
});

async function start(proxyConfig?: unknown) {
  platform = await startPlatform({
    config: {
      services: [
        {
          id: SERVICE,
          providerKey: PK,
          authentication: 'user_key',
          plans: [{ name: 'Basic' }],
          ...(proxyConfig !== undefined && { proxyConfig }),
        },
      ],
      admin: {
        accessTokens: [
          { value: RW, permission: 'rw', scopes: ['account_management'] },
          { value: RO, permission: 'ro', scopes: ['account_management'] },
        ],
      },
    },
  });
  return platform;
}

async function call(path: string, token = RO, method = 'GET') {
  const response = await fetch(
    `${platform?.url}/admin/api/services/${path}${path.includes('?') ? '&' : '?'}access_token=${token}`,
    { method },
  );
  return { status: response.status, body: await response.text() };
}

describe('proxy configurations on the local platform', () => {
  it('serve the latest version of each environment with its rules as porta writes them', async () => {
    await start({ production: [WORDS], staging: [WORDS, PREMIUM] });
    const production = await call(`${SERVICE}/proxy/configs/production/latest.json`);
    expect(production.status).toBe(200);
    expect(JSON.parse(production.body).proxy_config).toMatchObject({ version: 1, environment: 'production' });
    const rule = JSON.parse(production.body).proxy_config.content.proxy.proxy_rules[0];
    expect(rule).toMatchObject({
      http_method: 'GET',
      pattern: WORDS.pattern,
      metric_system_name: 'hits',
      delta: 1,
      last: false,
      parameters: ['word'],
      querystring_parameters: { lang: '{lang}' },
    });
    expect(parseProxyConfig(production.body)).toMatchObject({ ok: true, version: 1, rules: [WORDS] });

    const staging = await call(`${SERVICE}/proxy/configs/staging/latest.json`);
    expect(JSON.parse(staging.body).proxy_config).toMatchObject({ version: 2, environment: 'sandbox' });
    expect(parseProxyConfig(staging.body)).toMatchObject({ ok: true, rules: [WORDS, PREMIUM] });
    expect((await call(`${SERVICE}/proxy/configs/sandbox/1.json`)).status).toBe(200);
    expect((await call(`${SERVICE}/proxy/configs/production/2.json`)).status).toBe(404);
  });

  it('answer 404 without a configuration or service, 400 for an environment porta does not know', async () => {
    await start();
    expect(await call(`${SERVICE}/proxy/configs/production/latest.json`)).toEqual({
      status: 404,
      body: '{"status":"Not found"}',
    });
    expect(await call(`${SERVICE}/proxy/configs/preview/latest.json`)).toEqual({
      status: 400,
      body: '{"error":"invalid environment"}',
    });
    expect((await call('999/proxy/configs/production/latest.json')).status).toBe(404);
    expect((await call(`${SERVICE}/proxy/configs/production/latest.json`, 'not-a-token')).status).toBe(403);
  });

  it('promote a version once with an rw token, keeping its number and content', async () => {
    const running = await start({ production: [WORDS], staging: [PREMIUM] });
    const promote = (token: string, to = 'production') =>
      call(`${SERVICE}/proxy/configs/staging/2/promote.json?to=${to}`, token, 'POST');
    expect((await promote(RO)).status).toBe(403);
    const promoted = await promote(RW);
    expect(promoted.status).toBe(201);
    expect(JSON.parse(promoted.body).proxy_config).toMatchObject({ version: 2, environment: 'production' });
    const latest = await call(`${SERVICE}/proxy/configs/production/latest.json`);
    expect(parseProxyConfig(latest.body)).toMatchObject({ ok: true, version: 2, rules: [PREMIUM] });
    expect(await promote(RW)).toEqual({
      status: 422,
      body: '{"errors":{"version":["has already been taken"]}}',
    });
    expect((await promote(RW, 'staging')).status).toBe(422);
    expect(
      (await call(`${SERVICE}/proxy/configs/staging/9/promote.json?to=production`, RW, 'POST')).status,
    ).toBe(404);
    expect(running.deployStaging(SERVICE, [PREMIUM])).toBe(2);
    expect(running.deployStaging(SERVICE, [WORDS])).toBe(3);
  });

  it('refuses a proxyConfig rule on a metric the service lacks, naming it', async () => {
    await expect(start({ production: [{ ...WORDS, metric: 'nope' }] })).rejects.toThrow(
      /platform.services\[0\].proxyConfig.production\[0\].metric names an unknown metric "nope"/,
    );
  });
});
