/**
 * The local platform's Account Management API and its webhooks: each change answers in the API's XML,
 * applies at once to authorize.xml, and sends the webhook 3scale sends for it (a form field `xml` holding
 * the `<event>`), without the answer waiting for the delivery.
 */
import { createServer, type Server } from 'node:http';
import { XMLParser } from 'fast-xml-parser';
import { afterEach, describe, expect, it } from 'vitest';
import { closeServer, listenOnLoopback, readBody } from '../../../local/http-server';
import { type RunningPlatform, startPlatform } from '../../../local/platform';

const PK = 'pk-admin';
const CONFIG = {
  services: [
    {
      id: 'svc-u',
      providerKey: PK,
      authentication: 'user_key',
      plans: [
        { name: 'Small', limits: [{ metric: 'hits', period: 'hour', value: 5 }] },
        { name: 'Big', limits: [{ metric: 'hits', period: 'hour', value: 500 }] },
      ],
      applications: [{ id: 'app-u', userKey: 'uk-1', plan: 'Small' }],
    },
    {
      id: 'svc-a',
      providerKey: PK,
      authentication: 'app_id',
      plans: [{ name: 'Small', limits: [] }],
      applications: [{ id: 'app-a', appKeys: ['k-1'], plan: 'Small' }],
    },
  ],
};
const parser = new XMLParser({ isArray: (name) => name === 'key' });

let platform: RunningPlatform;
let receiver: Server;
let received: { contentType: string | undefined; xml: string }[];
let holdMs = 0;

afterEach(async () => {
  await platform?.stop();
  await closeServer(receiver);
  holdMs = 0;
});

async function start(): Promise<void> {
  received = [];
  receiver = createServer(async (request, response) => {
    const body = (await readBody(request, 1 << 20)).toString('utf8');
    received.push({
      contentType: request.headers['content-type'],
      xml: new URLSearchParams(body).get('xml') ?? '',
    });
    setTimeout(() => response.end(), holdMs);
  });
  const port = await listenOnLoopback(receiver, 0);
  platform = await startPlatform({
    config: { ...CONFIG, webhooks: [`http://127.0.0.1:${port}/hook?token=t`] },
  });
}

async function admin(method: string, path: string, params: Record<string, string> = {}) {
  const form = new URLSearchParams({ provider_key: PK, ...params }).toString();
  const get = method === 'GET';
  const response = await fetch(`${platform.url}/admin/api/${path}${get ? `?${form}` : ''}`, {
    method,
    ...(!get && { headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: form }),
    signal: AbortSignal.timeout(5000),
  });
  return { status: response.status, xml: parser.parse(await response.text()) };
}

async function authorized(query: Record<string, string>): Promise<boolean> {
  const url = new URL('/transactions/authorize.xml', platform.url);
  for (const [name, value] of Object.entries({ provider_key: PK, ...query }))
    url.searchParams.set(name, value);
  return (await fetch(url)).status === 200;
}

async function events(count: number) {
  for (let i = 0; i < 100 && received.length < count; i++) await new Promise((r) => setTimeout(r, 20));
  return received.map((event) => parser.parse(event.xml).event);
}

describe('local platform admin API', () => {
  it('suspends and resumes an application: the API answer, authorize.xml and the webhooks agree', async () => {
    await start();
    const suspended = await admin('PUT', 'accounts/1/applications/app-u/suspend.xml');
    expect(suspended.status).toBe(200);
    expect(suspended.xml.application).toMatchObject({ id: 'app-u', state: 'suspended', user_key: 'uk-1' });
    expect(await authorized({ service_id: 'svc-u', user_key: 'uk-1' })).toBe(false);
    await admin('PUT', 'accounts/1/applications/app-u/resume.xml');
    expect(await authorized({ service_id: 'svc-u', user_key: 'uk-1' })).toBe(true);
    const [first, second] = await events(2);
    expect(first).toMatchObject({ action: 'suspended', type: 'application' });
    expect(first.object.application).toMatchObject({ id: 'app-u', state: 'suspended', service_id: 'svc-u' });
    expect(second).toMatchObject({ action: 'updated', object: { application: { state: 'live' } } });
    expect(received[0]?.contentType).toBe('application/x-www-form-urlencoded');
  });

  it('changes a plan and a user key, adds and deletes an app key, each with its webhook', async () => {
    await start();
    expect(
      (await admin('PUT', 'accounts/1/applications/app-u/change_plan.xml', { plan_id: 'Big' })).xml,
    ).toMatchObject({ application: { plan: { name: 'Big' } } });
    await admin('PUT', 'accounts/1/applications/app-u.xml', { user_key: 'uk-2' });
    expect(await authorized({ service_id: 'svc-u', user_key: 'uk-1' })).toBe(false);
    expect(await authorized({ service_id: 'svc-u', user_key: 'uk-2' })).toBe(true);
    expect((await admin('POST', 'accounts/1/applications/app-a/keys.xml', { key: 'key-2' })).status).toBe(
      201,
    );
    expect(await authorized({ service_id: 'svc-a', app_id: 'app-a', app_key: 'key-2' })).toBe(true);
    // porta answers a DELETE with 200 and no body.
    expect(await admin('DELETE', 'accounts/1/applications/app-a/keys/k-1.xml')).toEqual({
      status: 200,
      xml: {},
    });
    const keys = await admin('GET', 'accounts/1/applications/app-a/keys.xml');
    expect(keys.xml.keys.key).toEqual([{ value: 'key-2' }]);
    expect(await authorized({ service_id: 'svc-a', app_id: 'app-a', app_key: 'k-1' })).toBe(false);
    expect((await events(4)).map((event) => event.action)).toEqual([
      'plan_changed',
      'user_key_updated',
      'key_created',
      'key_deleted',
    ]);
  });

  it('sets a limit (no webhook: 3scale sends none for a limit)', async () => {
    await start();
    const answer = await admin('PUT', 'application_plans/Small/metrics/hits/limits/hour.xml', { value: '0' });
    expect(answer).toMatchObject({ status: 200, xml: { limit: { period: 'hour', value: 0 } } });
    expect(await authorized({ service_id: 'svc-u', user_key: 'uk-1', 'usage[hits]': '1' })).toBe(false);
    expect(received).toEqual([]);
  });

  it('refuses a wrong provider key, an unknown application and a bad value with the API errors', async () => {
    await start();
    const denied = await fetch(
      `${platform.url}/admin/api/accounts/1/applications/app-u/suspend.xml?provider_key=nope`,
      {
        method: 'PUT',
      },
    );
    expect(denied.status).toBe(403);
    // porta's `render_error 'Access denied'` (Filters::ProviderRequired): a single <error>.
    expect(await denied.text()).toBe('<?xml version="1.0" encoding="UTF-8"?><error>Access denied</error>');
    expect((await admin('PUT', 'accounts/1/applications/none/suspend.xml')).status).toBe(404);
    expect(
      (await admin('PUT', 'application_plans/Small/metrics/hits/limits/hour.xml', { value: '-1' })).status,
    ).toBe(422);
    expect(received).toEqual([]);
  });

  it('finds an application by its user key, with an access token, as applications/find.xml does', async () => {
    await start();
    const find = async (query: Record<string, string>) => {
      const url = new URL('/admin/api/applications/find.xml', platform.url);
      for (const [name, value] of Object.entries(query)) url.searchParams.set(name, value);
      const response = await fetch(url, { signal: AbortSignal.timeout(5000) });
      return { status: response.status, xml: parser.parse(await response.text()) };
    };
    const found = await find({ access_token: PK, user_key: 'uk-1' });
    expect(found.status).toBe(200);
    expect(found.xml.application).toMatchObject({
      id: 'app-u',
      name: 'app-u',
      state: 'live',
      service_id: 'svc-u',
      user_key: 'uk-1',
      plan: { name: 'Small' },
    });
    expect((await find({ access_token: PK, user_key: 'uk-1', service_id: 'svc-u' })).status).toBe(200);
    expect((await find({ access_token: PK, user_key: 'uk-1', service_id: 'svc-a' })).status).toBe(404);
    expect((await find({ access_token: PK, user_key: 'nope' })).status).toBe(404);
    expect((await find({ access_token: 'wrong', user_key: 'uk-1' })).status).toBe(403);
    expect((await find({ access_token: PK })).status).toBe(422);
  });

  it('answers before a slow webhook receiver does', async () => {
    await start();
    holdMs = 1500;
    const started = performance.now();
    await admin('PUT', 'accounts/1/applications/app-u/suspend.xml');
    expect(performance.now() - started).toBeLessThan(1000);
    await events(1);
    expect(received).toHaveLength(1);
  });
});
