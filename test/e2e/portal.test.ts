/**
 * The developer portal end to end on the local stack (docs/portal.md): sign-up with and without the
 * provider's approval up to the gateway's 200, one-time links, credentials shown once, rolls, CSRF,
 * limits, uniform answers, and a read-only admin token's clear error.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LogPort } from '../../core/observability/observability';
import { type LocalStack, startLocalStack } from '../../local/stack';
import { lastLink, mailsTo, PortalBrowser, pathOf, shownSecret, signUp } from './portal-client';

const PROVIDER_KEY = 'pk-portal';
const RO_TOKEN = 'tok-portal-ro';
const RULES = [{ method: 'GET', pattern: '/v1/words/{word}.json', metric: 'get_word', delta: 1 }];
const ROUTES = ['GET /v1/words/{word}'];
const METRICS = [{ name: 'hits', children: [{ name: 'get_word' }] }];
const PLANS = [
  { name: 'Basic', default: true, limits: [{ metric: 'hits', period: 'hour', value: 100 }] },
  { name: 'Internal', published: false, limits: [] },
];

const STACK = {
  platform: {
    services: [
      {
        id: 'svc-portal',
        providerKey: PROVIDER_KEY,
        authentication: 'user_key',
        metrics: METRICS,
        plans: PLANS,
      },
      {
        id: 'svc-portal-app',
        providerKey: PROVIDER_KEY,
        authentication: 'app_id',
        metrics: METRICS,
        plans: PLANS,
      },
    ],
    admin: {
      accessTokens: [{ value: RO_TOKEN, permission: 'ro', scopes: ['account_management'] }],
    },
  },
  gateway: [
    { serviceId: 'svc-portal', mappingRules: RULES, routes: ROUTES, portal: {} },
    { serviceId: 'svc-portal-app', basePath: '/appid', mappingRules: RULES, routes: ROUTES, portal: {} },
    {
      serviceId: 'svc-portal',
      basePath: '/ro',
      mappingRules: RULES,
      routes: ROUTES,
      adminAccessToken: RO_TOKEN,
      portal: {},
    },
  ],
};

const logLines: string[] = [];
const capture: LogPort = {
  debug: (message, attributes) => logLines.push(`${message} ${JSON.stringify(attributes ?? {})}`),
  info: (message, attributes) => logLines.push(`${message} ${JSON.stringify(attributes ?? {})}`),
  warn: (message, attributes) => logLines.push(`${message} ${JSON.stringify(attributes ?? {})}`),
  error: (message, attributes) => logLines.push(`${message} ${JSON.stringify(attributes ?? {})}`),
};

let stack: LocalStack;
const clockOffsetMs = 0;
let portalUrl: string;
let appPortalUrl: string;
let apiUrl: string;
let appApiUrl: string;

beforeAll(async () => {
  stack = await startLocalStack({
    stack: STACK,
    logger: capture,
    accessLog: (entry) => logLines.push(JSON.stringify(entry)),
    sweepIntervalMs: 0,
    now: () => Date.now() + clockOffsetMs,
  });
  const [user, app] = stack.gateways;
  apiUrl = user?.url ?? '';
  appApiUrl = app?.url ?? '';
  portalUrl = user?.portalUrl ?? '';
  appPortalUrl = app?.portalUrl ?? '';
}, 60_000);

afterAll(async () => {
  await stack?.stop();
});

async function admin(method: string, path: string, fields: Record<string, string> = {}) {
  const body = new URLSearchParams({ access_token: PROVIDER_KEY, ...fields });
  const url = `${stack.platform?.url}/admin/api/${path}`;
  const response = await fetch(method === 'GET' ? `${url}?${body}` : url, {
    method,
    ...(method !== 'GET' && { body }),
    signal: AbortSignal.timeout(5000),
  });
  return { status: response.status, body: await response.text() };
}

async function setApproval(required: boolean) {
  const answer = await admin('PUT', 'settings.json', { account_approval_required: String(required) });
  expect(answer.status).toBe(200);
}

function wordCall(url: string, headers: Record<string, string>) {
  return fetch(`${url}/v1/words/hello.json`, { headers, signal: AbortSignal.timeout(5000) });
}

/** Polls until the call answers `status`, for up to `withinMs`; returns the last status. */
async function statusWithin(
  callIt: () => Promise<Response>,
  status: number,
  withinMs: number,
): Promise<number> {
  const deadline = Date.now() + withinMs;
  let last = 0;
  do {
    last = (await callIt()).status;
    if (last === status) return last;
    await new Promise((resolve) => setTimeout(resolve, 100));
  } while (Date.now() < deadline);
  return last;
}

describe('sign-up without approval', () => {
  it('goes from sign-up to a 200 at the gateway with the new key', async () => {
    await setApproval(false);
    const browser = await signUp(stack, portalUrl, 'first@open.example');
    const page = await browser.get('/app');
    expect(page.status).toBe(200);
    expect(page.body).toContain('Create your application');
    const created = await browser.post('/app', {});
    expect(created.status, created.body).toBe(201);
    expect(created.headers['cache-control']).toBe('no-store');
    const key = shownSecret(created.body);
    expect(key).toMatch(/^[0-9a-f]{32}$/);
    expect((await wordCall(apiUrl, { apikey: key as string })).status).toBe(200);
  });
});
