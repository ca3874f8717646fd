/** The portal's admin client against a small HTTP server: what it sends, and each kind of refusal. */
import { createServer, type IncomingMessage, type Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AdminClient } from '../../../../core/portal/admin-client';
import { closeServer, listenOnLoopback } from '../../../../local/http-server';

interface Seen {
  method: string;
  url: string;
  body: string;
}

let server: Server;
let url = '';
const seen: Seen[] = [];
let answer: (request: IncomingMessage) => { status: number; body: string } | 'hang' = () => ({
  status: 200,
  body: '',
});

beforeAll(async () => {
  server = createServer((request, response) => {
    let body = '';
    request.on('data', (chunk: Buffer) => {
      body += chunk.toString();
    });
    request.on('end', () => {
      seen.push({ method: request.method ?? '', url: request.url ?? '', body });
      const reply = answer(request);
      if (reply === 'hang') return;
      response.writeHead(reply.status, { 'content-type': 'application/xml' }).end(reply.body);
    });
  });
  url = `http://127.0.0.1:${await listenOnLoopback(server, 0)}`;
});

afterAll(async () => {
  server.closeAllConnections();
  await closeServer(server);
});

describe('AdminClient', () => {
  it('sends the token in the form of a write and in the query of a read', async () => {
    answer = () => ({
      status: 201,
      body: '<account><id>3</id><state>approved</state><org_name>O</org_name></account>',
    });
    const client = new AdminClient({ url, accessToken: 'tok' });
    const signup = await client.signup({
      orgName: 'O',
      username: 'dev-1',
      email: 'a@example.com',
      password: 'p',
    });
    expect(signup).toMatchObject({
      ok: true,
      value: { account: { id: '3', state: 'approved' }, applications: [] },
    });
    const post = seen.at(-1) as Seen;
    expect(post.method).toBe('POST');
    expect(post.url).toBe('/admin/api/signup.xml');
    expect(new URLSearchParams(post.body).get('access_token')).toBe('tok');
    expect(new URLSearchParams(post.body).get('org_name')).toBe('O');

    await client.findAccount('a@example.com');
    const get = seen.at(-1) as Seen;
    expect(get.url).toMatch(/^\/admin\/api\/accounts\/find\.xml\?email=a%40example\.com&access_token=tok$/);
  });

  it('reads the settings, flat or under settings', async () => {
    const client = new AdminClient({ url, accessToken: 'tok' });
    answer = () => ({
      status: 200,
      body: '{"settings":{"account_approval_required":true,"signups_enabled":false}}',
    });
    expect(await client.settings()).toEqual({
      ok: true,
      value: { accountApprovalRequired: true, signupsEnabled: false },
    });
  });

  it.each([
    [403, '<error>Your access token does not have the correct permissions</error>', 'forbidden'],
    [404, '', 'not_found'],
    [422, '<errors><error>is already bought</error></errors>', 'invalid'],
    [500, 'oops', 'unavailable'],
  ])('maps %i to %s with the platform’s message', async (status, body, kind) => {
    answer = () => ({ status, body });
    const result = await new AdminClient({ url, accessToken: 'tok' }).deleteApplication('3', '7');
    expect(result).toMatchObject({ ok: false, kind });
    if (!result.ok && body.includes('<error')) expect(result.message).toContain(body.replace(/<[^>]+>/g, ''));
  });

  it('gives up after its timeout, saying so', async () => {
    answer = () => 'hang';
    const result = await new AdminClient({ url, accessToken: 'tok', timeoutMs: 100 }).account('3');
    expect(result).toEqual({
      ok: false,
      kind: 'unavailable',
      message: 'the platform did not answer within 100 ms',
    });
  });

  it('says an unreadable answer is one, without throwing', async () => {
    answer = () => ({ status: 200, body: '<nope' });
    const result = await new AdminClient({ url, accessToken: 'tok' }).account('3');
    expect(result).toMatchObject({ ok: false, kind: 'unavailable' });
  });
});
