/**
 * The documentation and CORS of the local stack over HTTP: `/docs` of each API is open (no credential, no
 * authorizer, no usage), preflights are answered, and answers and refusals carry the API's CORS headers.
 */
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bannerLines } from '../../local/banner';
import { type LocalStack, startLocalStack } from '../../local/stack';
import { DEMO_STACK_FILE, parseStackFile, type StackDefinition } from '../../local/stack-file';
import { APP_GATEWAY, PLATFORM_SECTION, STACK_FILE, USER_GATEWAY } from './fixtures';

const PORTAL = 'https://portal.example.com';
const OTHER_ORIGIN = 'http://127.0.0.1:9999';

function fetchWithin(url: string, init: RequestInit = {}): Promise<Response> {
  return fetch(url, { ...init, signal: AbortSignal.timeout(10_000) });
}

describe('the demo stack: documentation and CORS', () => {
  let definition: StackDefinition;
  let stack: LocalStack;

  beforeAll(async () => {
    definition = parseStackFile(JSON.parse(readFileSync(DEMO_STACK_FILE, 'utf8')), {});
    stack = await startLocalStack({ stack: definition, redis: 'in-memory', sweepIntervalMs: 0 });
  });

  afterAll(async () => {
    await stack?.stop();
  });

  it("prints each API's documentation URL in npm start's banner", () => {
    const lines = bannerLines(definition, stack);
    expect(stack.gateways.map((gateway) => gateway.docsUrl)).toEqual([
      `${stack.gateway.url}/docs`,
      `${stack.gateway.url}/appid/docs`,
      `${stack.gateway.url}/oauth-api/docs`,
      `${stack.gateway.url}/http/prod/docs`,
    ]);
    for (const gateway of stack.gateways) {
      expect(lines).toContain(
        `  docs: ${gateway.docsUrl} (Swagger UI; the document is ${gateway.docsUrl}/swagger.json)`,
      );
    }
  });

  it('serves the page and the document of each API without a credential or the authorizer', async () => {
    const before = stack.gateway.stats().authorizerInvocations;
    for (const [gateway, basePath] of [
      [stack.gateways[0], '/'],
      [stack.gateways[1], '/appid'],
    ] as const) {
      const page = await fetchWithin(gateway?.docsUrl ?? '');
      expect(page.status).toBe(200);
      expect(page.headers.get('content-type')).toBe('text/html; charset=utf-8');
      expect(await page.text()).toContain('<div id="swagger-ui"></div>');
      const bundle = await fetchWithin(`${gateway?.docsUrl}/swagger-ui-bundle.js`);
      expect(bundle.status).toBe(200);
      expect((await bundle.text()).length).toBeGreaterThan(100_000);
      const document = (await (await fetchWithin(`${gateway?.docsUrl}/swagger.json`)).json()) as Record<
        string,
        unknown
      >;
      expect(document).toMatchObject({ swagger: '2.0', basePath, info: { version: 'v1' } });
    }
    expect(stack.gateway.stats().authorizerInvocations).toBe(before);
  });

  it("documents the OAuth API's oauth2 scheme with a token URL that issues tokens the API accepts", async () => {
    const gateway = stack.gateways[2];
    const served = (await (await fetchWithin(`${gateway?.docsUrl}/swagger.json`)).json()) as {
      securityDefinitions: Record<string, { type: string; flow: string; tokenUrl: string; scopes: object }>;
      security: unknown;
    };
    expect(served.securityDefinitions).toEqual({
      oauth2: expect.objectContaining({
        type: 'oauth2',
        flow: 'application',
        tokenUrl: `${gateway?.url}/oauth/token`,
        scopes: {},
      }),
    });
    expect(served.security).toEqual([{ oauth2: [] }]);
    // What Swagger UI does with the application flow: the client's id and secret as HTTP Basic.
    const basic = Buffer.from('demo-oauth-app:demo-oauth-secret').toString('base64');
    const issued = await fetchWithin(served.securityDefinitions.oauth2?.tokenUrl ?? '', {
      method: 'POST',
      headers: { authorization: `Basic ${basic}`, 'content-type': 'application/x-www-form-urlencoded' },
      body: 'grant_type=client_credentials',
    });
    expect(issued.status).toBe(200);
    const { access_token: token } = (await issued.json()) as { access_token: string };
    const call = await fetchWithin(`${gateway?.url}/v1/words/hello.json`, {
      headers: { authorization: `Bearer ${token}` },
    });
    expect(call.status).toBe(200);
    await call.arrayBuffer();
  });

  it('answers the preflight of a call with a credential header, on both APIs', async () => {
    for (const [url, credentialHeaders] of [
      [`${stack.gateways[0]?.url}/v1/words/hello.json`, 'apikey'],
      [`${stack.gateways[1]?.url}/v1/words/hello.json`, 'app_id,app_key'],
    ] as const) {
      const preflight = await fetchWithin(url, {
        method: 'OPTIONS',
        headers: {
          Origin: OTHER_ORIGIN,
          'Access-Control-Request-Method': 'GET',
          'Access-Control-Request-Headers': credentialHeaders,
        },
      });
      expect(preflight.status).toBe(204);
      expect(preflight.headers.get('access-control-allow-origin')).toBe('*');
      expect(preflight.headers.get('access-control-allow-headers')).toContain(credentialHeaders);
      expect(preflight.headers.get('access-control-allow-methods')).toContain('GET');
    }
  });

  it('carries the CORS header on the backend answer and on refusals', async () => {
    const url = `${stack.gatewayUrl}/v1/words/hello.json`;
    const headers = { Origin: OTHER_ORIGIN };
    const answers = [
      await fetchWithin(url, { headers: { ...headers, apikey: 'demo-key-2' } }),
      await fetchWithin(url, { headers: { ...headers, apikey: 'wrong-key' } }),
      await fetchWithin(url, { headers: { ...headers, apikey: 'demo-key-suspended' } }),
      await fetchWithin(url, { method: 'POST', headers: { ...headers, apikey: 'demo-key-1' } }),
      await fetchWithin(`${stack.gatewayUrl}/v2/anything`, { headers }),
    ];
    expect(answers.map((answer) => answer.status)).toEqual([200, 401, 403, 403, 404]);
    for (const answer of answers) expect(answer.headers.get('access-control-allow-origin')).toBe('*');
  });
});

describe('CORS settings of the stack file', () => {
  const stacks: LocalStack[] = [];
  const start = async (stackFile: unknown) => {
    const stack = await startLocalStack({ stack: stackFile, redis: 'in-memory', sweepIntervalMs: 0 });
    stacks.push(stack);
    return stack;
  };

  afterAll(async () => {
    await Promise.all(stacks.map((stack) => stack.stop()));
  });

  it('answers no cross-origin call without a cors setting, documentation included', async () => {
    const stack = await start(STACK_FILE);
    const headers = { Origin: PORTAL };
    const answers = [
      await fetchWithin(`${stack.gatewayUrl}/v1/words/hello.json`, {
        headers: { ...headers, apikey: 'key-roomy' },
      }),
      await fetchWithin(`${stack.gatewayUrl}/v1/words/hello.json`, { headers }),
      await fetchWithin(`${stack.gateways[0]?.docsUrl}/swagger.json`, { headers }),
    ];
    expect(answers.map((answer) => answer.status)).toEqual([200, 401, 200]);
    for (const answer of answers) expect(answer.headers.get('access-control-allow-origin')).toBeNull();
    const preflight = await fetchWithin(`${stack.gatewayUrl}/v1/words/hello.json`, {
      method: 'OPTIONS',
      headers,
    });
    expect(preflight.status).toBe(404);
  });

  it('names an allowed origin on answers, and the first origin on refusals (gateway responses are static)', async () => {
    const cors = { allowOrigins: [PORTAL, OTHER_ORIGIN] };
    const stack = await start({
      platform: PLATFORM_SECTION,
      gateway: [
        { ...USER_GATEWAY, cors },
        { ...APP_GATEWAY, cors },
      ],
    });
    const url = `${stack.gatewayUrl}/v1/words/hello.json`;
    const allowed = await fetchWithin(url, { headers: { Origin: OTHER_ORIGIN, apikey: 'key-roomy' } });
    expect(allowed.status).toBe(200);
    expect(allowed.headers.get('access-control-allow-origin')).toBe(OTHER_ORIGIN);
    expect(allowed.headers.get('vary')).toBe('Origin');
    const stranger = await fetchWithin(url, {
      headers: { Origin: 'https://evil.example', apikey: 'key-roomy' },
    });
    expect(stranger.headers.get('access-control-allow-origin')).toBeNull();
    const refused = await fetchWithin(url, { headers: { Origin: OTHER_ORIGIN, apikey: 'wrong' } });
    expect(refused.status).toBe(401);
    expect(refused.headers.get('access-control-allow-origin')).toBe(PORTAL);
    const preflight = await fetchWithin(`${stack.gateways[1]?.url}/v1/words/hello.json`, {
      method: 'OPTIONS',
      headers: { Origin: OTHER_ORIGIN, 'Access-Control-Request-Method': 'GET' },
    });
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get('access-control-allow-origin')).toBe(OTHER_ORIGIN);
  });
});
