/**
 * The developer portal end to end on the local stack (docs/portal.md): sign-up with and without the
 * provider's approval up to the gateway's 200, one-time links, credentials shown once, rolls, CSRF,
 * limits, uniform answers, and a read-only admin token's clear error.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LogPort } from '../../core/observability/observability';
import { withAccountApproval } from '../../local/portal';
import { type LocalStack, startLocalStack } from '../../local/stack';
import { DEMO_STACK_FILE, readStackFile } from '../../local/stack-file';
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
    {
      serviceId: 'svc-portal',
      basePath: '/invite',
      mappingRules: RULES,
      routes: ROUTES,
      portal: { signups: 'invite', allowedEmailDomains: ['allowed.example'] },
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
let clockOffsetMs = 0;
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

describe('sign-up with approval', () => {
  it('keeps a pending account without an application, then approval, the webhook and a 200', async () => {
    await setApproval(true);
    const email = 'waiting@approval.example';
    const browser = await signUp(stack, portalUrl, email);
    const pending = await browser.get('/app');
    expect(pending.body).toContain('id="pending"');
    // No application exists while pending: none at the platform, and creating one is refused.
    const found = await admin('GET', 'accounts/find.xml', { email });
    const accountId = /<id>([^<]+)<\/id>/.exec(found.body)?.[1] as string;
    expect((await admin('GET', `accounts/${accountId}/applications.xml`)).body).not.toContain(
      '<application>',
    );
    expect((await browser.post('/app', {})).status).toBe(403);
    // A guessed key is refused at the gateway.
    expect((await wordCall(apiUrl, { apikey: '0123456789abcdef0123456789abcdef' })).status).toBe(401);

    expect((await admin('PUT', `accounts/${accountId}/approve.xml`)).status).toBe(200);
    // The account webhook tells the developer by e-mail.
    const told = await statusWithin(
      async () =>
        new Response(null, {
          status: mailsTo(stack, email).some((m) => m.subject === 'Your account is approved') ? 200 : 404,
        }),
      200,
      5000,
    );
    expect(told).toBe(200);
    const created = await browser.post('/app', {});
    expect(created.status).toBe(201);
    const key = shownSecret(created.body) as string;
    expect(await statusWithin(() => wordCall(apiUrl, { apikey: key }), 200, 2000)).toBe(200);
    await setApproval(false);
  });

  it('says a rejection, on the page and by e-mail', async () => {
    await setApproval(true);
    const email = 'declined@reject.example';
    const browser = await signUp(stack, portalUrl, email);
    const found = await admin('GET', 'accounts/find.xml', { email });
    const accountId = /<id>([^<]+)<\/id>/.exec(found.body)?.[1] as string;
    expect((await admin('PUT', `accounts/${accountId}/reject.xml`)).status).toBe(200);
    expect((await browser.get('/app')).body).toContain('id="rejected"');
    expect((await browser.post('/app', {})).status).toBe(403);
    const told = await statusWithin(
      async () =>
        new Response(null, {
          status: mailsTo(stack, email).some((m) => m.subject === 'Your sign-up was declined') ? 200 : 404,
        }),
      200,
      5000,
    );
    expect(told).toBe(200);
    await setApproval(false);
  });
});

describe('confirmation links', () => {
  it('are not consumed by a GET, are used once by the POST (then 410), and expire after 15 minutes', async () => {
    const email = 'links@once.example';
    const browser = new PortalBrowser(portalUrl);
    await browser.get('');
    await browser.post('/signup', { email, org: 'Links' });
    const path = pathOf(lastLink(stack, email), portalUrl);
    // A mail scanner fetching the link twice changes nothing.
    expect((await new PortalBrowser(portalUrl).get(path)).status).toBe(200);
    expect((await browser.get(path)).status).toBe(200);
    const token = new URL(`${portalUrl}${path}`).searchParams.get('token') as string;
    expect((await browser.post('/confirm', { token })).status).toBe(303);
    expect((await browser.post('/confirm', { token })).status).toBe(410);
    expect((await browser.get(path)).status).toBe(410);

    const late = new PortalBrowser(portalUrl);
    await late.get('');
    const lateEmail = 'late@once.example';
    await late.post('/signup', { email: lateEmail, org: 'Late' });
    const latePath = pathOf(lastLink(stack, lateEmail), portalUrl);
    await late.get(latePath);
    clockOffsetMs = 15 * 60 * 1000 + 1000;
    try {
      expect((await late.get(latePath)).status).toBe(410);
      const lateToken = new URL(`${portalUrl}${latePath}`).searchParams.get('token') as string;
      expect((await late.post('/confirm', { token: lateToken })).status).toBe(410);
    } finally {
      clockOffsetMs = 0;
    }
  });
});

describe('credentials', () => {
  it('are shown once, in the creating answer only, and never logged', async () => {
    const browser = await signUp(stack, portalUrl, 'once@shown.example');
    const created = await browser.post('/app', {});
    const key = shownSecret(created.body) as string;
    expect(key).toBeDefined();
    const again = await browser.get('/app');
    expect(again.headers['cache-control']).toBe('no-store');
    expect(again.body).not.toContain(key);
    expect(again.body).toContain('class="fingerprint"');
    const docs = await browser.get('/docs/credentials.json');
    expect(docs.body).not.toContain(key);
    expect((await wordCall(apiUrl, { apikey: key })).status).toBe(200);
    await stack.flush();
    expect(logLines.join('\n')).not.toContain(key);
    expect(JSON.stringify(stack.mailSink?.messages())).not.toContain(key);
  });

  it('allow one application per account', async () => {
    const browser = await signUp(stack, portalUrl, 'single@one.example');
    expect((await browser.post('/app', {})).status).toBe(201);
    const page = await browser.get('/app');
    expect(page.body).not.toContain('Create your application');
    const second = await browser.post('/app', {});
    expect(second.status).toBe(409);
    expect(second.body).toContain('one application per account');
  });
});

describe('rolling a key', () => {
  it('in user_key mode replaces it at once: the old key refused (401), the new 200 within 2 s', async () => {
    const browser = await signUp(stack, portalUrl, 'roll@user.example');
    const created = await browser.post('/app', {});
    const oldKey = shownSecret(created.body) as string;
    expect((await wordCall(apiUrl, { apikey: oldKey })).status).toBe(200);
    const application = /name="application" value="([^"]+)"/.exec(
      (await browser.get('/app')).body,
    )?.[1] as string;
    const rolled = await browser.post('/app/roll', { application });
    expect(rolled.status).toBe(200);
    expect(rolled.body).toContain('stopped working now');
    const newKey = shownSecret(rolled.body) as string;
    expect(newKey).not.toBe(oldKey);
    expect(await statusWithin(() => wordCall(apiUrl, { apikey: oldKey }), 401, 2000)).toBe(401);
    expect(await statusWithin(() => wordCall(apiUrl, { apikey: newKey }), 200, 2000)).toBe(200);
  });

  it('in app_id mode adds the new key, keeps the old through its grace, and deletes it on request', async () => {
    const browser = await signUp(stack, appPortalUrl, 'roll@appid.example');
    const created = await browser.post('/app', {});
    const appId = /<code class="id">([^<]+)<\/code>/.exec(created.body)?.[1] as string;
    const oldKey = shownSecret(created.body) as string;
    const headers = (appKey: string) => ({ app_id: appId, app_key: appKey });
    expect((await wordCall(appApiUrl, headers(oldKey))).status).toBe(200);
    const application = /name="application" value="([^"]+)"/.exec(
      (await browser.get('/app')).body,
    )?.[1] as string;
    const rolled = await browser.post('/app/roll', { application });
    expect(rolled.body).toContain('keeps working until');
    const newKey = shownSecret(rolled.body) as string;
    expect(await statusWithin(() => wordCall(appApiUrl, headers(newKey)), 200, 2000)).toBe(200);
    expect((await wordCall(appApiUrl, headers(oldKey))).status).toBe(200);
    const page = await browser.get('/app');
    expect(page.body).toContain('id="old-key"');
    expect((await browser.post('/app/old-keys', { application })).status).toBe(303);
    expect(await statusWithin(() => wordCall(appApiUrl, headers(oldKey)), 401, 2000)).toBe(401);
    expect((await wordCall(appApiUrl, headers(newKey))).status).toBe(200);
  });
});

describe('a roll’s grace', () => {
  it('ends with the old key deleted at the portal’s next request after 24 hours', async () => {
    const browser = await signUp(stack, appPortalUrl, 'grace@appid.example');
    const created = await browser.post('/app', {});
    const appId = /<code class="id">([^<]+)<\/code>/.exec(created.body)?.[1] as string;
    const oldKey = shownSecret(created.body) as string;
    const application = /name="application" value="([^"]+)"/.exec(
      (await browser.get('/app')).body,
    )?.[1] as string;
    const newKey = shownSecret((await browser.post('/app/roll', { application })).body) as string;
    const headers = (appKey: string) => ({ app_id: appId, app_key: appKey });
    expect(await statusWithin(() => wordCall(appApiUrl, headers(oldKey)), 200, 2000)).toBe(200);
    clockOffsetMs = 24 * 3600 * 1000 + 1000;
    try {
      await new PortalBrowser(appPortalUrl).get('');
      expect(await statusWithin(() => wordCall(appApiUrl, headers(oldKey)), 401, 2000)).toBe(401);
      expect(await statusWithin(() => wordCall(appApiUrl, headers(newKey)), 200, 2000)).toBe(200);
    } finally {
      clockOffsetMs = 0;
    }
  });
});

describe('npm start -- --approval', () => {
  it('turns the local platform’s account approval on, which the demo leaves off', () => {
    const demo = readStackFile(DEMO_STACK_FILE, {});
    expect(demo.platform?.admin?.settings.accountApprovalRequired).toBe(false);
    expect(withAccountApproval(demo).platform?.admin?.settings.accountApprovalRequired).toBe(true);
  });
});

describe('CSRF', () => {
  it('refuses a POST without the token, from a foreign Origin, or cross-site', async () => {
    const browser = new PortalBrowser(portalUrl);
    await browser.get('');
    const fields = { email: 'csrf@forged.example', org: 'Forged' };
    const noToken = await browser.request(`${portalUrl}/signup`, {
      method: 'POST',
      body: new URLSearchParams(fields).toString(),
      headers: { origin: browser.origin },
    });
    expect(noToken.status).toBe(403);
    expect((await browser.post('/signup', fields, { origin: 'https://evil.example' })).status).toBe(403);
    expect((await browser.post('/signup', fields, { 'sec-fetch-site': 'cross-site' })).status).toBe(403);
    expect(mailsTo(stack, 'csrf@forged.example')).toHaveLength(0);
    // And the portal answers no CORS preflight.
    const preflight = await browser.request(`${portalUrl}/signup`, {
      method: 'OPTIONS',
      headers: { origin: 'https://evil.example', 'access-control-request-method': 'POST' },
    });
    expect(preflight.headers['access-control-allow-origin']).toBeUndefined();
  });
});

describe('sign-up limits', () => {
  it('answer 429 with Retry-After past 5 sign-ups an hour from one address', async () => {
    const browser = new PortalBrowser(portalUrl);
    await browser.get('');
    const statuses: number[] = [];
    let last: Awaited<ReturnType<PortalBrowser['post']>> | undefined;
    for (let i = 0; i < 6; i++) {
      last = await browser.post('/signup', { email: `flood${i}@limit${i}.example`, org: 'Flood' });
      statuses.push(last.status);
    }
    expect(statuses).toEqual([200, 200, 200, 200, 200, 429]);
    const retryAfter = Number(last?.headers['retry-after']);
    expect(retryAfter).toBeGreaterThan(0);
    expect(retryAfter).toBeLessThanOrEqual(3600);
  });

  it('send at most one e-mail a minute to an address, answering the same', async () => {
    const browser = new PortalBrowser(portalUrl);
    await browser.get('');
    const email = 'twice@minute.example';
    const first = await browser.post('/signup', { email, org: 'Twice' });
    const second = await browser.post('/signup', { email, org: 'Twice' });
    expect(second.status).toBe(first.status);
    expect(mailsTo(stack, email)).toHaveLength(1);
  });
});

describe('no account enumeration', () => {
  it('answers sign-in the same whether the address has an account or not', async () => {
    await signUp(stack, portalUrl, 'known@enum.example');
    const browser = new PortalBrowser(portalUrl);
    await browser.get('');
    const known = await browser.post('/signin', { email: 'known@enum.example' });
    const unknown = await browser.post('/signin', { email: 'unknown@enum.example' });
    const strip = (body: string) => body.replace(/nonce-[^']+|nonce="[^"]+"|name="csrf" value="[^"]+"/g, '');
    expect(unknown.status).toBe(known.status);
    expect(strip(unknown.body)).toBe(strip(known.body));
    // Only the address with an account gets a sign-in link.
    const signInMail = mailsTo(stack, 'known@enum.example').at(-1);
    expect(signInMail?.subject).toBe('Your sign-in link');
    expect(mailsTo(stack, 'unknown@enum.example').at(-1)?.text).not.toContain('confirm?token=');
  });

  it('signs in by the e-mailed link, confirmed by a POST', async () => {
    const email = 'again@signin.example';
    await signUp(stack, portalUrl, email);
    const browser = new PortalBrowser(portalUrl);
    await browser.get('');
    expect((await browser.get('/app')).status).toBe(303);
    await browser.post('/signin', { email });
    const page = await browser.get(pathOf(lastLink(stack, email), portalUrl));
    expect(page.body).toContain('Sign in');
    const token = /name="token" value="([^"]+)"/.exec(page.body)?.[1] as string;
    expect((await browser.post('/confirm', { token })).status).toBe(303);
    expect((await browser.get('/app')).body).toContain(`Signed in as ${email}`);
  });
});

describe('a read-only admin token', () => {
  it('gives the developer and the log a clear error', async () => {
    const roPortal = stack.gateways[2]?.portalUrl as string;
    const email = 'readonly@token.example';
    const browser = new PortalBrowser(roPortal);
    await browser.get('');
    await browser.post('/signup', { email, org: 'Read only' });
    const page = await browser.get(pathOf(lastLink(stack, email), roPortal));
    const token = /name="token" value="([^"]+)"/.exec(page.body)?.[1] as string;
    const confirmed = await browser.post('/confirm', { token });
    expect(confirmed.status).toBe(503);
    expect(confirmed.body).toContain('read and write (rw)');
    expect(logLines.join('\n')).toContain('account_management scope with read and write (rw)');
  });
});

describe('the platform’s settings and bad input', () => {
  it('closes sign-up when the platform’s signups_enabled is false', async () => {
    await admin('PUT', 'settings.json', { signups_enabled: 'false' });
    try {
      const browser = new PortalBrowser(portalUrl);
      await browser.get('');
      const answer = await browser.post('/signup', { email: 'closed@signups.example', org: 'Closed' });
      expect(answer.status).toBe(403);
      expect(answer.body).toContain('Sign-up is closed');
      expect(mailsTo(stack, 'closed@signups.example')).toHaveLength(0);
    } finally {
      await admin('PUT', 'settings.json', { signups_enabled: 'true' });
    }
  });

  it('refuses a form too large to be one with 413, and a link token of any shape with 410', async () => {
    const browser = new PortalBrowser(portalUrl);
    await browser.get('');
    expect(
      (await browser.post('/signup', { email: 'big@form.example', org: 'x'.repeat(20_000) })).status,
    ).toBe(413);
    expect((await browser.get(`/confirm?token=${'%00'.repeat(50)}`)).status).toBe(410);
  });
});

describe('without the account webhook', () => {
  let quiet: LocalStack;

  beforeAll(async () => {
    quiet = await startLocalStack({ stack: STACK, webhooks: false, sweepIntervalMs: 0 });
    const token = new URLSearchParams({ access_token: PROVIDER_KEY, account_approval_required: 'true' });
    await fetch(`${quiet.platform?.url}/admin/api/settings.json`, { method: 'PUT', body: token });
  }, 60_000);

  afterAll(async () => {
    await quiet?.stop();
  });

  it('shows the approval at the next visit, and mails nothing', async () => {
    const url = quiet.gateways[0]?.portalUrl as string;
    const email = 'quiet@nohook.example';
    const browser = await signUp(quiet, url, email);
    expect((await browser.get('/app')).body).toContain('id="pending"');
    const found = await fetch(
      `${quiet.platform?.url}/admin/api/accounts/find.xml?access_token=${PROVIDER_KEY}&email=${encodeURIComponent(email)}`,
    );
    const accountId = /<id>([^<]+)<\/id>/.exec(await found.text())?.[1] as string;
    await fetch(`${quiet.platform?.url}/admin/api/accounts/${accountId}/approve.xml`, {
      method: 'PUT',
      body: new URLSearchParams({ access_token: PROVIDER_KEY }),
    });
    expect((await browser.get('/app')).body).toContain('Create your application');
    expect(mailsTo(quiet, email).map((mail) => mail.subject)).toEqual(['Confirm your sign-up']);
  });
});

describe('invite-only sign-up and the domain allow-list', () => {
  it('signs up an invited address only, once, and only from an allowed domain', async () => {
    const url = stack.gateways[3]?.portalUrl as string;
    const stranger = new PortalBrowser(url);
    expect((await stranger.get('')).body).toContain('Sign-up is by invitation');
    expect(
      (await stranger.post('/signup', { email: 'walk-in@allowed.example', org: 'Walk-in' })).status,
    ).toBe(403);

    const notProvider = await stranger.request(`${url}/invitations`, {
      method: 'POST',
      body: 'email=guest%40allowed.example',
      headers: { authorization: 'Bearer guess' },
    });
    expect(notProvider.status).toBe(401);
    const invited = await stranger.request(`${url}/invitations`, {
      method: 'POST',
      body: 'email=guest%40allowed.example',
      headers: { authorization: `Bearer ${PROVIDER_KEY}` },
    });
    expect(invited.status).toBe(202);

    const guest = new PortalBrowser(url);
    const form = await guest.get(pathOf(lastLink(stack, 'guest@allowed.example'), url));
    expect(form.body).toContain('name="invite"');
    const invite = /name="invite" value="([^"]+)"/.exec(form.body)?.[1] as string;
    // The invitation is for its address only.
    expect(
      (await guest.post('/signup', { email: 'other@allowed.example', org: 'Other', invite })).status,
    ).toBe(403);
    const inviteAgain = await stranger.request(`${url}/invitations`, {
      method: 'POST',
      body: 'email=guest2%40allowed.example',
      headers: { authorization: `Bearer ${PROVIDER_KEY}` },
    });
    expect(inviteAgain.status).toBe(202);
    const second = /invite=([^\s]+)/.exec(lastLink(stack, 'guest2@allowed.example'))?.[1] as string;
    const accepted = await guest.post('/signup', {
      email: 'guest2@allowed.example',
      org: 'Guest',
      invite: decodeURIComponent(second),
    });
    expect(accepted.status).toBe(200);
    expect(mailsTo(stack, 'guest2@allowed.example').at(-1)?.subject).toBe('Confirm your sign-up');
    // Used once.
    expect(
      (
        await guest.post('/signup', {
          email: 'guest2@allowed.example',
          org: 'Guest',
          invite: decodeURIComponent(second),
        })
      ).status,
    ).toBe(403);
  });

  it('refuses an address outside the allowed domains', async () => {
    const url = stack.gateways[3]?.portalUrl as string;
    const browser = new PortalBrowser(url);
    await browser.get('');
    const answer = await browser.post('/signup', { email: 'someone@elsewhere.example', org: 'Elsewhere' });
    expect(answer.status).toBe(403);
    expect(answer.body).toContain('some e-mail domains only');
  });
});
