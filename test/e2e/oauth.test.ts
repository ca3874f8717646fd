/**
 * OAuth end to end over HTTP through npm start's stack (the demo file): a token from POST /oauth/token with
 * the client credentials in the query string, calls with ?access_token= and with Bearer up to the plan's
 * limit, and the platform counting exactly the allowed calls against the application.
 */
import { readFileSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { type LocalStack, startLocalStack } from '../../local/stack';

const SERVICE = '2555417735062';
let stack: LocalStack | undefined;

afterAll(async () => {
  await stack?.stop();
});

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

describe('the demo OAuth API', () => {
  it('issues a token, lets 20 calls an hour through, and the platform counts exactly those', async () => {
    stack = await startLocalStack({
      stack: JSON.parse(readFileSync('local/demo.stack.json', 'utf8')),
      env: {},
      port: 0,
      redis: 'auto',
      sweepIntervalMs: 0,
    });
    const api = stack.gateways.find((gateway) => gateway.serviceId === SERVICE);
    if (!api) throw new Error('no OAuth API in the demo');
    expect(api.url).toMatch(/\/oauth-api$/);

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
    expect(forged.status).toBe(401);
    expect(forged.headers.get('www-authenticate')).toMatch(/^Bearer .*error="invalid_token"/);

    await stack.flush();
    expect(stack.platform?.usage(SERVICE, 'demo-oauth-app', 'hits', 'hour')).toBe(20);
  }, 60_000);
});
