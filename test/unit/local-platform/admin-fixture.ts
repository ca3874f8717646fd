/** A platform with accounts, plans, tokens and a webhook receiver, shared by the Account Management API tests. */
import { createServer, type Server } from 'node:http';
import { XMLParser } from 'fast-xml-parser';
import { afterEach } from 'vitest';
import { closeServer, listenOnLoopback, readBody } from '../../../local/http-server';
import { type RunningPlatform, startPlatform } from '../../../local/platform';

export const PK = 'pk-portal';
export const USER_KEY_SERVICE = 'svc-u';
export const APP_ID_SERVICE = 'svc-a';
export const OIDC_SERVICE = 'svc-o';
export const TOKENS = {
  adminRw: 'tok-admin-rw',
  adminRo: 'tok-admin-ro',
  member: 'tok-member',
  memberWithoutPartners: 'tok-member-bare',
  stats: 'tok-stats',
};

export function portalConfig(admin: Record<string, unknown> = {}) {
  return {
    services: [
      {
        id: USER_KEY_SERVICE,
        providerKey: PK,
        authentication: 'user_key',
        plans: [
          { name: 'Basic', default: true, limits: [{ metric: 'hits', period: 'hour', value: 100 }] },
          { name: 'Reviewed', approvalRequired: true },
          { name: 'Secret', published: false },
        ],
        applications: [{ id: 'app-config', userKey: 'config-key', plan: 'Basic' }],
      },
      {
        id: APP_ID_SERVICE,
        providerKey: PK,
        authentication: 'app_id',
        plans: [{ name: 'Pro' }],
      },
      { id: OIDC_SERVICE, providerKey: PK, authentication: 'oidc', plans: [{ name: 'Client' }] },
    ],
    admin: {
      accessTokens: [
        { value: TOKENS.adminRw, permission: 'rw', scopes: ['account_management'] },
        { value: TOKENS.adminRo, permission: 'ro', scopes: ['account_management'] },
        {
          value: TOKENS.member,
          role: 'member',
          permission: 'rw',
          scopes: ['account_management'],
          memberPermissions: ['partners'],
        },
        {
          value: TOKENS.memberWithoutPartners,
          role: 'member',
          permission: 'rw',
          scopes: ['account_management'],
          memberPermissions: ['monitoring'],
        },
        { value: TOKENS.stats, permission: 'rw', scopes: ['stats'] },
      ],
      ...admin,
    },
  };
}

const parser = new XMLParser({
  isArray: (name) => ['key', 'plan', 'application', 'account', 'user', 'error'].includes(name),
  parseTagValue: false,
  ignoreAttributes: false,
  attributeNamePrefix: '',
});

export interface ApiAnswer {
  readonly status: number;
  readonly text: string;
  readonly contentType: string | null;
  // biome-ignore lint/suspicious/noExplicitAny: parsed XML or JSON, read by each test's own expectations
  readonly body: any;
}

export interface Received {
  readonly action: string;
  readonly type: string;
  // biome-ignore lint/suspicious/noExplicitAny: the parsed <object>
  readonly object: any;
}

/** Starts a platform (and a webhook receiver) per test; stops both after it. */
export function usePortalPlatform() {
  const state = {} as { platform: RunningPlatform; receiver: Server; received: Received[] };
  afterEach(async () => {
    await state.platform?.stop();
    if (state.receiver !== undefined) await closeServer(state.receiver);
  });

  async function start(admin: Record<string, unknown> = {}, now?: () => number): Promise<RunningPlatform> {
    state.received = [];
    state.receiver = createServer(async (request, response) => {
      const xml = new URLSearchParams((await readBody(request, 1 << 20)).toString('utf8')).get('xml') ?? '';
      const event = parser.parse(xml).event;
      state.received.push({ action: event.action, type: event.type, object: event.object });
      response.end();
    });
    const port = await listenOnLoopback(state.receiver, 0);
    state.platform = await startPlatform({
      config: { ...portalConfig(admin), webhooks: [`http://127.0.0.1:${port}/hook`] },
      ...(now !== undefined && { now }),
    });
    return state.platform;
  }

  /** An Account Management API call with a token (the admin rw one unless told), form-encoded. */
  async function api(
    method: string,
    path: string,
    params: Record<string, string | string[]> = {},
    token: string = TOKENS.adminRw,
  ): Promise<ApiAnswer> {
    const form = new URLSearchParams({ access_token: token });
    for (const [name, value] of Object.entries(params)) {
      for (const one of Array.isArray(value) ? value : [value]) form.append(name, one);
    }
    const url = new URL(`/admin/api/${path}`, state.platform.url);
    const withBody = method !== 'GET';
    if (!withBody) url.search = form.toString();
    const response = await fetch(url, {
      method,
      ...(withBody && {
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: form.toString(),
      }),
      signal: AbortSignal.timeout(5000),
    });
    const text = await response.text();
    const contentType = response.headers.get('content-type');
    const body =
      text === '' ? undefined : contentType?.includes('json') ? JSON.parse(text) : parser.parse(text);
    return { status: response.status, text, contentType, body };
  }

  /** Waits (bounded) until `count` webhooks have arrived, and returns them all. */
  async function events(count: number): Promise<Received[]> {
    for (let i = 0; i < 100 && state.received.length < count; i++)
      await new Promise((r) => setTimeout(r, 20));
    return state.received;
  }

  /** Whether the platform's authrep.xml authorizes these credentials now. */
  async function authrep(query: Record<string, string>): Promise<number> {
    const url = new URL('/transactions/authrep.xml', state.platform.url);
    for (const [name, value] of Object.entries({ provider_key: PK, ...query }))
      url.searchParams.set(name, value);
    return (await fetch(url, { signal: AbortSignal.timeout(5000) })).status;
  }

  /** Signs a developer up and returns the account XML's `<account>`. */
  async function signUp(name: string, extra: Record<string, string> = {}) {
    const answer = await api('POST', 'signup.xml', {
      org_name: `${name} Inc`,
      username: name,
      email: `${name}@example.com`,
      password: 'not-kept-1',
      ...extra,
    });
    if (answer.status !== 201) throw new Error(`sign-up refused: ${answer.status} ${answer.text}`);
    return answer.body.account[0];
  }

  return { state, start, api, events, authrep, signUp };
}
