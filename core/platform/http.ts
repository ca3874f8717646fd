/**
 * One HTTP exchange with the platform over a keep-alive agent, bounded by a deadline. Resolves with
 * the answer or an `unavailable` failure; never rejects.
 */
import http from 'node:http';
import https from 'node:https';
import type { PlatformAnswer, Unavailable } from './answers';

export interface PlatformRequest {
  readonly method: 'GET' | 'POST';
  readonly url: URL;
  readonly headers: Readonly<Record<string, string>>;
  readonly body?: string;
}

export type ExchangeResult =
  | { readonly ok: true; readonly answer: PlatformAnswer }
  | { readonly ok: false; readonly failure: Unavailable };

/** Answers of the Service Management API are a few kilobytes; anything this large is not one. */
export const MAX_ANSWER_BYTES = 1024 * 1024;

/**
 * Idle keep-alive sockets are closed after this long, before the load balancers in front of a
 * platform (commonly 60 s) silently drop them and the next call would hang on a dead socket.
 */
const IDLE_SOCKET_TIMEOUT_MS = 30_000;

export function keepAliveAgent(protocol: string): http.Agent {
  const options = { keepAlive: true, timeout: IDLE_SOCKET_TIMEOUT_MS };
  return protocol === 'https:' ? new https.Agent(options) : new http.Agent(options);
}

interface Attempt {
  readonly result: ExchangeResult;
  /** The request failed on a reused keep-alive socket that the server had closed, before any answer. */
  readonly staleSocket: boolean;
}

const STALE_SOCKET_CODES = new Set(['ECONNRESET', 'EPIPE']);

function networkFailure(error: unknown): Unavailable {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  if (code === 'ECONNREFUSED') {
    return { kind: 'unavailable', cause: 'refused', message: 'platform refused the connection' };
  }
  const detail = code ?? (error instanceof Error ? error.message : String(error));
  return { kind: 'unavailable', cause: 'network', message: `platform connection failed (${detail})` };
}

function timeoutFailure(timeoutMs: number): Unavailable {
  return { kind: 'unavailable', cause: 'timeout', message: `platform did not answer within ${timeoutMs} ms` };
}

function attempt(
  request: PlatformRequest,
  agent: http.Agent,
  remainingMs: number,
  timeoutMs: number,
  maxBytes: number,
): Promise<Attempt> {
  return new Promise((resolve) => {
    let settled = false;
    let clientRequest: http.ClientRequest | undefined;
    const finish = (result: ExchangeResult, staleSocket = false) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve({ result, staleSocket });
    };
    const fail = (failure: Unavailable) => {
      finish({ ok: false, failure });
      clientRequest?.destroy();
    };
    const timer = setTimeout(() => fail(timeoutFailure(timeoutMs)), remainingMs);
    try {
      const transport = request.url.protocol === 'https:' ? https : http;
      clientRequest = transport.request(request.url, {
        method: request.method,
        headers: request.headers,
        agent,
      });
    } catch (error) {
      fail(networkFailure(error));
      return;
    }
    const sent = clientRequest;
    let answered = false;
    sent.on('response', (response) => {
      answered = true;
      const chunks: Buffer[] = [];
      let size = 0;
      response.on('data', (data: Buffer) => {
        size += data.length;
        if (size > maxBytes) {
          fail({ kind: 'unavailable', cause: 'network', message: 'platform answer is too large' });
          return;
        }
        chunks.push(data);
      });
      response.on('end', () =>
        finish({
          ok: true,
          answer: {
            status: response.statusCode ?? 0,
            headers: response.headers,
            body: Buffer.concat(chunks).toString('utf8'),
          },
        }),
      );
      response.on('error', (error) => fail(networkFailure(error)));
      response.on('close', () => {
        if (!response.complete) fail(networkFailure(new Error('connection closed during the answer')));
      });
    });
    sent.on('error', (error: NodeJS.ErrnoException) => {
      const stale = sent.reusedSocket && !answered && STALE_SOCKET_CODES.has(error.code ?? '');
      finish({ ok: false, failure: networkFailure(error) }, stale);
    });
    sent.end(request.body);
  });
}

/**
 * Sends the request, retrying once within the same deadline when a reused keep-alive socket turns
 * out to be closed (the server never saw the request), as Node's documentation advises.
 */
export async function exchange(
  request: PlatformRequest,
  agent: http.Agent,
  timeoutMs: number,
  maxBytes = MAX_ANSWER_BYTES,
): Promise<ExchangeResult> {
  const startedAt = performance.now();
  const first = await attempt(request, agent, timeoutMs, timeoutMs, maxBytes);
  if (!first.staleSocket) return first.result;
  const left = Math.floor(timeoutMs - (performance.now() - startedAt));
  if (left <= 0) return { ok: false, failure: timeoutFailure(timeoutMs) };
  return (await attempt(request, agent, left, timeoutMs, maxBytes)).result;
}
