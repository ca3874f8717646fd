import { afterEach, describe, expect, it } from 'vitest';
import { type BackendCall, forwardToBackend, MAX_BACKEND_ANSWER_BYTES } from '../../../../core/soap/forward';
import { freePort } from '../../../../local/redis';
import { type BackendBehaviour, startBackend, type TestBackend } from './backend-server';
import { CONTENT_TYPES, envelope } from './fixtures';

const backends: TestBackend[] = [];

afterEach(async () => {
  await Promise.all(backends.splice(0).map((backend) => backend.stop()));
});

async function serve(behaviour: BackendBehaviour): Promise<TestBackend> {
  const backend = await startBackend(behaviour);
  backends.push(backend);
  return backend;
}

function call(url: string, overrides: Partial<BackendCall> = {}): BackendCall {
  return {
    url,
    body: Buffer.from(envelope(), 'utf8'),
    contentType: CONTENT_TYPES['1.1'],
    soapAction: '"urn:example:GetQuote"',
    timeoutMs: 2000,
    ...overrides,
  };
}

const ANSWER =
  '<soap:Envelope xmlns:soap="http://schemas.xmlsoap.org/soap/envelope/"><soap:Body/></soap:Envelope>';

describe('forwarding to the SOAP backend', () => {
  it('sends the exact body, content type and SOAPAction, and returns status, content type and body', async () => {
    const server = await serve((_, response) => {
      response.writeHead(200, { 'content-type': 'text/xml; charset=utf-8', 'x-backend': 'kept out' });
      response.end(ANSWER);
    });
    const body = Buffer.from(envelope({ body: '<Op>café ✓</Op>' }), 'utf8');
    const result = await forwardToBackend(call(server.url, { body }));
    expect(result).toEqual({
      ok: true,
      status: 200,
      contentType: 'text/xml; charset=utf-8',
      body: Buffer.from(ANSWER),
    });
    const [seen] = server.received;
    expect(seen?.method).toBe('POST');
    expect(seen?.url).toBe('/soap');
    expect(seen?.body.equals(body)).toBe(true);
    expect(seen?.headers['content-type']).toBe(CONTENT_TYPES['1.1']);
    expect(seen?.headers.soapaction).toBe('"urn:example:GetQuote"');
  });

  it('sends no SOAPAction when the request had none, and keeps a SOAP 1.2 action in the content type', async () => {
    const server = await serve((_, response) => response.end());
    await forwardToBackend(call(server.url, { soapAction: undefined, contentType: CONTENT_TYPES['1.2'] }));
    expect(server.received[0]?.headers.soapaction).toBeUndefined();
    expect(server.received[0]?.headers['content-type']).toBe(CONTENT_TYPES['1.2']);
  });

  it('returns a backend fault or error status as it came, and does not follow redirects', async () => {
    const server = await serve((seen, response) => {
      if (seen.url === '/soap') {
        response.writeHead(302, { location: '/elsewhere' });
        response.end();
        return;
      }
      response.end('followed');
    });
    expect(await forwardToBackend(call(server.url))).toMatchObject({ ok: true, status: 302 });
    expect(server.received).toHaveLength(1);
    const failing = await serve((_, response) => {
      response.writeHead(500, { 'content-type': 'text/xml' });
      response.end(ANSWER);
    });
    expect(await forwardToBackend(call(failing.url))).toMatchObject({ ok: true, status: 500 });
  });

  it('gives up at the deadline when the backend does not answer', async () => {
    const server = await serve(() => {});
    expect(await forwardToBackend(call(server.url, { timeoutMs: 200 }))).toEqual({
      ok: false,
      failure: 'timeout',
      detail: 'no answer within 200 ms',
    });
  });

  it('gives up at the deadline when the backend stops in the middle of its answer', async () => {
    const server = await serve((_, response) => {
      response.writeHead(200, { 'content-type': 'text/xml' });
      response.write('<soap:Envelope');
    });
    expect(await forwardToBackend(call(server.url, { timeoutMs: 300 }))).toMatchObject({
      ok: false,
      failure: 'timeout',
    });
  });

  it('reports a backend that is down as unavailable', async () => {
    const port = await freePort();
    expect(await forwardToBackend(call(`http://127.0.0.1:${port}/soap`))).toEqual({
      ok: false,
      failure: 'unavailable',
      detail: 'connection refused',
    });
  });

  it('reports a connection cut in the middle of the answer as unavailable', async () => {
    const server = await serve((_, response) => {
      response.writeHead(200, { 'content-type': 'text/xml', 'content-length': '1000' });
      response.write('<partial');
      setTimeout(() => response.socket?.destroy(), 20);
    });
    expect(await forwardToBackend(call(server.url))).toMatchObject({ ok: false, failure: 'unavailable' });
  });

  it('refuses an answer larger than a Lambda can return', async () => {
    const server = await serve((_, response) => {
      response.writeHead(200, { 'content-type': 'text/xml' });
      response.end(Buffer.alloc(MAX_BACKEND_ANSWER_BYTES + 1, 0x61));
    });
    expect(await forwardToBackend(call(server.url, { timeoutMs: 10_000 }))).toEqual({
      ok: false,
      failure: 'unavailable',
      detail: `answer larger than ${MAX_BACKEND_ANSWER_BYTES} bytes`,
    });
  });
});
