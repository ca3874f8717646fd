import http from 'node:http';
import https from 'node:https';
import { generate } from 'selfsigned';
import { afterEach, describe, expect, it } from 'vitest';
import {
  createPlatformClient,
  PLATFORM_OPTIONS,
  type PlatformClient,
  type PlatformClientOptions,
  platformClientFromConfig,
} from '../../../../core/platform/client';
import type { Transaction } from '../../../../core/platform/types';
import { ConfigError, parseConfig } from '../../../../core/settings/config';
import { freePort as closedPort } from '../../../../local/redis';
import {
  AUTHORIZED_BODY,
  answerWith,
  type CannedServer,
  listenOnFreePort,
  type Responder,
  startCannedServer,
} from './canned-server';

const SERVICE_ID = 'svc-1';
const PROVIDER_KEY = 'provider-secret-1';
const USER_KEY = 'consumer-secret-1';

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function serve(respond: Responder): Promise<CannedServer> {
  const server = await startCannedServer(respond);
  cleanups.push(() => server.close());
  return server;
}

function clientFor(baseUrl: string, options: Partial<PlatformClientOptions> = {}): PlatformClient {
  const client = createPlatformClient({
    serviceId: SERVICE_ID,
    serviceAuth: { kind: 'provider_key', providerKey: PROVIDER_KEY },
    baseUrl,
    ...options,
  });
  cleanups.push(() => client.close());
  return client;
}

const userKey = (key: string) => ({ kind: 'user_key', userKey: key }) as const;

describe('authorize and authrep requests', () => {
  it('sends authrep as a GET with the service auth, credential, usage and 3scale-options', async () => {
    const server = await serve(answerWith(200, AUTHORIZED_BODY));
    const outcome = await clientFor(server.url).authrep(userKey(USER_KEY), { get_word: 1 });
    expect(outcome).toEqual({ kind: 'authorized', plan: 'Basic', usageReports: [], hierarchy: {} });
    const [request] = server.requests;
    expect(request.method).toBe('GET');
    expect(request.path).toBe('/transactions/authrep.xml');
    expect(request.headers['3scale-options']).toBe('rejection_reason_header=1&limit_headers=1&hierarchy=1');
    expect(PLATFORM_OPTIONS).toBe(request.headers['3scale-options']);
    expect(Object.fromEntries(request.query)).toEqual({
      provider_key: PROVIDER_KEY,
      service_id: SERVICE_ID,
      user_key: USER_KEY,
      'usage[get_word]': '1',
    });
  });

  it('sends authorize to authorize.xml, with no usage when none is given', async () => {
    const server = await serve(answerWith(200, AUTHORIZED_BODY));
    await clientFor(server.url).authorize({ kind: 'app_id', appId: 'app-1', appKey: 'app-secret' });
    const [request] = server.requests;
    expect(request.path).toBe('/transactions/authorize.xml');
    expect([...request.query.keys()]).toEqual(['provider_key', 'service_id', 'app_id', 'app_key']);
  });

  it('keeps a key containing &usage[x]= inside user_key', async () => {
    const server = await serve(answerWith(200, AUTHORIZED_BODY));
    const injecting = `${USER_KEY}&usage[x]=5&provider_key=other`;
    await clientFor(server.url).authrep(userKey(injecting), { hits: 1 });
    const [request] = server.requests;
    expect(request.query.get('user_key')).toBe(injecting);
    expect(request.query.getAll('provider_key')).toEqual([PROVIDER_KEY]);
    expect([...request.query.keys()].filter((name) => name.startsWith('usage'))).toEqual(['usage[hits]']);
  });

  it('appends the endpoint to a base URL with a path prefix', async () => {
    const server = await serve(answerWith(200, AUTHORIZED_BODY));
    await clientFor(`${server.url}/platform/`).authorize(userKey(USER_KEY));
    expect(server.requests[0].path).toBe('/platform/transactions/authorize.xml');
  });

  it('refuses invalid usage before sending anything', async () => {
    const server = await serve(answerWith(200, AUTHORIZED_BODY));
    const outcome = await clientFor(server.url).authrep(userKey(USER_KEY), { hits: -1 });
    expect(outcome).toMatchObject({ kind: 'misconfigured', code: 'usage_value_invalid', status: 0 });
    expect(server.requests).toHaveLength(0);
  });

  it('sends the service token of a configuration', async () => {
    const server = await serve(answerWith(200, AUTHORIZED_BODY));
    const config = parseConfig({
      serviceId: 'svc-9',
      platformUrl: server.url,
      platformAuthKind: 'service_token',
    });
    const client = platformClientFromConfig(config, 'token-secret');
    cleanups.push(() => client.close());
    await client.authorize(userKey(USER_KEY));
    expect(server.requests[0].query.get('service_token')).toBe('token-secret');
    expect(server.requests[0].query.get('service_id')).toBe('svc-9');
    expect(server.requests[0].query.has('provider_key')).toBe(false);
  });
});

describe('reports', () => {
  const transactions = (count: number): Transaction[] =>
    Array.from({ length: count }, (_, i) => ({ credential: userKey(`key-${i}`), usage: { hits: i + 1 } }));

  it('posts a form body and counts 202 as accepted', async () => {
    const server = await serve(answerWith(202));
    const outcome = await clientFor(server.url).report([
      { credential: userKey('key-a'), usage: { hits: 2 }, timestamp: Date.UTC(2024, 5, 1, 12) },
      { credential: { kind: 'app_id', appId: 'app-b', appKey: 'app-secret' }, usage: { get_word: 1 } },
    ]);
    expect(outcome).toEqual({ kind: 'accepted', requests: 1 });
    const [request] = server.requests;
    expect(request.method).toBe('POST');
    expect(request.path).toBe('/transactions.xml');
    expect(request.headers['content-type']).toBe('application/x-www-form-urlencoded');
    expect(request.headers['3scale-options']).toBe(PLATFORM_OPTIONS);
    expect(Object.fromEntries(new URLSearchParams(request.body))).toEqual({
      provider_key: PROVIDER_KEY,
      service_id: SERVICE_ID,
      'transactions[0][user_key]': 'key-a',
      'transactions[0][usage][hits]': '2',
      'transactions[0][timestamp]': '2024-06-01 12:00:00 +0000',
      'transactions[1][app_id]': 'app-b',
      'transactions[1][usage][get_word]': '1',
    });
  });

  it('splits 2500 transactions into requests of 1000, 1000 and 500, each numbered from 0', async () => {
    const server = await serve(answerWith(202));
    const outcome = await clientFor(server.url).report(transactions(2500));
    expect(outcome).toEqual({ kind: 'accepted', requests: 3 });
    const sent = server.requests.map((request) => {
      const userKeys = [...new URLSearchParams(request.body)].filter(([name]) => name.endsWith('[user_key]'));
      return { count: userKeys.length, first: userKeys[0], last: userKeys.at(-1) };
    });
    expect(sent).toEqual([
      {
        count: 1000,
        first: ['transactions[0][user_key]', 'key-0'],
        last: ['transactions[999][user_key]', 'key-999'],
      },
      {
        count: 1000,
        first: ['transactions[0][user_key]', 'key-1000'],
        last: ['transactions[999][user_key]', 'key-1999'],
      },
      {
        count: 500,
        first: ['transactions[0][user_key]', 'key-2000'],
        last: ['transactions[499][user_key]', 'key-2499'],
      },
    ]);
  });

  it('returns the first failure, sends nothing after it and counts what was accepted', async () => {
    const server = await serve((request, response) => {
      const failing = server.requests.indexOf(request) === 1;
      answerWith(failing ? 503 : 202)(request, response);
    });
    const outcome = await clientFor(server.url).report(transactions(2500));
    expect(outcome).toMatchObject({
      kind: 'unavailable',
      cause: 'status',
      status: 503,
      acceptedTransactions: 1000,
    });
    expect(server.requests).toHaveLength(2);
  });

  it('reports a platform error with its code', async () => {
    const server = await serve(
      answerWith(403, `<error code="provider_key_invalid">provider key "${PROVIDER_KEY}" is invalid</error>`),
    );
    const outcome = await clientFor(server.url).report(transactions(1));
    expect(outcome).toEqual({
      kind: 'misconfigured',
      code: 'provider_key_invalid',
      status: 403,
      message: 'provider key "[redacted]" is invalid',
      acceptedTransactions: 0,
    });
  });

  it('accepts an empty report without a request', async () => {
    const server = await serve(answerWith(202));
    expect(await clientFor(server.url).report([])).toEqual({ kind: 'accepted', requests: 0 });
    expect(server.requests).toHaveLength(0);
  });

  it('refuses a report with invalid usage before sending anything', async () => {
    const server = await serve(answerWith(202));
    const outcome = await clientFor(server.url).report([
      ...transactions(1500),
      { credential: userKey('k'), usage: { hits: 0.5 } },
    ]);
    expect(outcome).toMatchObject({ kind: 'misconfigured', code: 'usage_value_invalid', status: 0 });
    expect(server.requests).toHaveLength(0);
  });
});

describe('platform failures never throw', () => {
  it('times out a platform that never answers', async () => {
    const server = await serve(() => {});
    const outcome = await clientFor(server.url, { timeoutMs: 100 }).authrep(userKey(USER_KEY), { hits: 1 });
    expect(outcome).toEqual({
      kind: 'unavailable',
      cause: 'timeout',
      message: 'platform did not answer within 100 ms',
    });
  });

  it('gives reports their own timeout', async () => {
    const server = await serve(() => {});
    const client = clientFor(server.url, { timeoutMs: 60_000, reportTimeoutMs: 100 });
    const outcome = await client.report([{ credential: userKey(USER_KEY), usage: { hits: 1 } }]);
    expect(outcome).toMatchObject({ kind: 'unavailable', cause: 'timeout', acceptedTransactions: 0 });
    expect(outcome).toMatchObject({ message: 'platform did not answer within 100 ms' });
  });

  it('answers refused for a closed port', async () => {
    const port = await closedPort();
    const outcome = await clientFor(`http://127.0.0.1:${port}`).authorize(userKey(USER_KEY));
    expect(outcome).toEqual({
      kind: 'unavailable',
      cause: 'refused',
      message: 'platform refused the connection',
    });
  });

  it.each([500, 502, 503])('answers unavailable for HTTP %i', async (status) => {
    const server = await serve(answerWith(status, 'Internal <b>error'));
    const outcome = await clientFor(server.url).authorize(userKey(USER_KEY));
    expect(outcome).toMatchObject({ kind: 'unavailable', cause: 'status', status });
  });

  it.each([
    ['an empty body', ''],
    ['a garbage body', '\u0000\u0001 not xml'],
  ])('answers unexpected_answer for a 200 with %s', async (_, body) => {
    const server = await serve(answerWith(200, body));
    const outcome = await clientFor(server.url).authorize(userKey(USER_KEY));
    expect(outcome).toMatchObject({ kind: 'misconfigured', code: 'unexpected_answer', status: 200 });
  });

  it('answers network when the connection drops in the middle of the answer', async () => {
    const server = await serve((_request, response) => {
      response.writeHead(200, { 'content-length': '1000' });
      response.write('<?xml version="1.0"?><status>', () => response.destroy());
    });
    const outcome = await clientFor(server.url).authorize(userKey(USER_KEY));
    expect(outcome).toMatchObject({ kind: 'unavailable', cause: 'network' });
  });

  it('answers network when the server closes a fresh connection without answering, and does not retry', async () => {
    const server = await serve((_request, response) => response.socket?.destroy());
    const outcome = await clientFor(server.url).authrep(userKey(USER_KEY), { hits: 1 });
    expect(outcome).toEqual({
      kind: 'unavailable',
      cause: 'network',
      message: 'platform connection failed (ECONNRESET)',
    });
    expect(server.requests).toHaveLength(1);
  });

  it('refuses an answer too large to be the platform', async () => {
    const server = await serve(answerWith(200, `<status>${'x'.repeat(2 * 1024 * 1024)}</status>`));
    const outcome = await clientFor(server.url).authorize(userKey(USER_KEY));
    expect(outcome).toEqual({
      kind: 'unavailable',
      cause: 'network',
      message: 'platform answer is too large',
    });
  });
});

describe('keep-alive', () => {
  it('sends two calls over the same connection', async () => {
    const server = await serve(answerWith(200, AUTHORIZED_BODY));
    const client = clientFor(server.url);
    await client.authorize(userKey(USER_KEY));
    await client.authrep(userKey(USER_KEY), { hits: 1 });
    expect(server.requests).toHaveLength(2);
    expect(server.requests[1].clientPort).toBe(server.requests[0].clientPort);
    expect(server.connections()).toBe(1);
  });

  it('sends once more on a new connection when a reused one was closed by the server', async () => {
    const requestsPerConnection = new Map<number, number>();
    const server = await serve((request, response) => {
      const count = (requestsPerConnection.get(request.clientPort) ?? 0) + 1;
      requestsPerConnection.set(request.clientPort, count);
      if (count > 1) response.socket?.destroy();
      else answerWith(200, AUTHORIZED_BODY)(request, response);
    });
    const client = clientFor(server.url);
    await client.authorize(userKey(USER_KEY));
    const outcome = await client.authorize(userKey(USER_KEY));
    expect(outcome).toMatchObject({ kind: 'authorized' });
    expect(server.connections()).toBe(2);
    expect(server.requests).toHaveLength(3);
  });

  it('uses an injected agent, and leaves it open on close', async () => {
    const server = await serve(answerWith(200, AUTHORIZED_BODY));
    const agent = new http.Agent({ keepAlive: true });
    cleanups.push(() => agent.destroy());
    const client = clientFor(server.url, { agent });
    await client.authorize(userKey(USER_KEY));
    client.close();
    expect(Object.keys(agent.freeSockets)).toHaveLength(1);
  });
});

describe('credentials stay out of messages', () => {
  it.each([
    [403, `<error code="user_key_invalid">user key "${USER_KEY}" is invalid</error>`],
    [403, `<error code="provider_key_invalid">provider key "${PROVIDER_KEY}" is invalid</error>`],
    [404, `<error code="application_not_found">application with id="${USER_KEY}" was not found</error>`],
    [403, `<error code="a_new_code">rejected ${USER_KEY} for ${PROVIDER_KEY}</error>`],
    [
      409,
      `<status><authorized>false</authorized><reason>application key "${USER_KEY}" is invalid</reason></status>`,
    ],
    [409, `<status><authorized>false</authorized><reason>unheard of ${USER_KEY}</reason></status>`],
  ])('HTTP %i %s', async (status, body) => {
    const server = await serve(answerWith(status, body));
    const outcome = await clientFor(server.url).authrep(userKey(USER_KEY), { hits: 1 });
    const returned = JSON.stringify(outcome);
    expect(returned).toContain('[redacted]');
    expect(returned).not.toContain(USER_KEY);
    expect(returned).not.toContain(PROVIDER_KEY);
  });
});

describe('TLS', () => {
  it('verifies the certificate with the default agent, and trusts one given through an injected agent', async () => {
    const pems = await generate([{ name: 'commonName', value: '127.0.0.1' }], {
      keySize: 2048,
      algorithm: 'sha256',
      extensions: [{ name: 'subjectAltName', altNames: [{ type: 7, ip: '127.0.0.1' }] }],
    });
    const server = https.createServer({ key: pems.private, cert: pems.cert }, (_request, response) => {
      response.writeHead(200);
      response.end(AUTHORIZED_BODY);
    });
    const port = await listenOnFreePort(server);
    cleanups.push(
      () =>
        new Promise<void>((resolve) => {
          server.close(() => resolve());
          server.closeAllConnections();
        }),
    );
    const baseUrl = `https://127.0.0.1:${port}`;

    const untrusting = await clientFor(baseUrl).authorize(userKey(USER_KEY));
    expect(untrusting).toMatchObject({ kind: 'unavailable', cause: 'network' });

    const agent = new https.Agent({ keepAlive: true, ca: pems.cert });
    cleanups.push(() => agent.destroy());
    const trusting = await clientFor(baseUrl, { agent }).authorize(userKey(USER_KEY));
    expect(trusting).toMatchObject({ kind: 'authorized', plan: 'Basic' });
  });
});

describe('options', () => {
  it.each([
    [{ baseUrl: 'not a url' }, 'baseUrl'],
    [{ baseUrl: 'ftp://example.com' }, 'baseUrl'],
    [{ timeoutMs: 0 }, 'timeoutMs'],
    [{ reportTimeoutMs: 1.5 }, 'reportTimeoutMs'],
    [{ serviceId: ' ' }, 'serviceId'],
    [{ serviceAuth: { kind: 'service_token', serviceToken: '' } }, 'serviceAuth'],
  ] as const)('refuses %j naming %s', (options, setting) => {
    const create = () =>
      createPlatformClient({
        serviceId: SERVICE_ID,
        serviceAuth: { kind: 'provider_key', providerKey: PROVIDER_KEY },
        ...options,
      });
    expect(create).toThrow(ConfigError);
    expect(create).toThrow(setting);
  });
});
