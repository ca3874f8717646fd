/**
 * A loopback HTTP proxy in front of the local platform that can fail on command: answer 503, or hang
 * (accept the request and never answer, as an overloaded platform behind a load balancer does). The
 * fault applies to every request or only to one kind (auth calls, or reports). A latency, set apart,
 * holds every passing request that long before forwarding it (a platform slower than a deadline).
 */
import {
  createServer,
  request as httpRequest,
  type IncomingMessage,
  type Server,
  type ServerResponse,
} from 'node:http';
import { closeServer, listenOnLoopback } from '../../../local/http-server';

export type FaultMode = 'pass' | 'unavailable' | 'hang';

/** Which requests a fault hits: `auth` is authorize and authrep, `report` is POST /transactions.xml. */
export type FaultScope = 'all' | 'auth' | 'report';

export interface FaultProxyStats {
  readonly forwarded: number;
  readonly refused: number;
  readonly hung: number;
}

export interface FaultProxy {
  readonly url: string;
  /** Sets the fault for the requests in scope; requests out of scope pass. */
  setFault(mode: FaultMode, scope?: FaultScope): void;
  /** Holds every forwarded request this long before it goes upstream; 0 (the default) forwards at once. */
  setLatency(ms: number): void;
  stats(): FaultProxyStats;
  stop(): Promise<void>;
}

const REPORT_PATH = '/transactions.xml';

function kindOf(request: IncomingMessage): Exclude<FaultScope, 'all'> {
  const path = (request.url ?? '').split('?')[0];
  return request.method === 'POST' && path === REPORT_PATH ? 'report' : 'auth';
}

export async function startFaultProxy(targetUrl: string): Promise<FaultProxy> {
  const target = new URL(targetUrl);
  let mode: FaultMode = 'pass';
  let scope: FaultScope = 'all';
  let latencyMs = 0;
  const delayed = new Set<NodeJS.Timeout>();
  const counts = { forwarded: 0, refused: 0, hung: 0 };
  const hanging = new Set<ServerResponse>();

  function forward(request: IncomingMessage, response: ServerResponse): void {
    counts.forwarded++;
    const upstream = httpRequest(
      {
        host: target.hostname,
        port: target.port,
        method: request.method,
        path: request.url,
        headers: request.headers,
        timeout: 10_000,
      },
      (answer) => {
        response.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(response);
      },
    );
    upstream.on('timeout', () => upstream.destroy(new Error('upstream timeout')));
    upstream.on('error', () => {
      if (!response.headersSent) response.writeHead(502);
      response.end();
    });
    request.pipe(upstream);
  }

  const server: Server = createServer((request, response) => {
    const faulty = mode !== 'pass' && (scope === 'all' || scope === kindOf(request));
    if (!faulty && latencyMs === 0) return forward(request, response);
    if (!faulty) {
      request.pause();
      const timer = setTimeout(() => {
        delayed.delete(timer);
        forward(request, response);
      }, latencyMs);
      delayed.add(timer);
      return;
    }
    request.resume();
    if (mode === 'unavailable') {
      counts.refused++;
      response.writeHead(503, { 'content-type': 'text/plain' });
      response.end('Service Unavailable');
      return;
    }
    counts.hung++;
    hanging.add(response);
    response.on('close', () => hanging.delete(response));
  });
  const port = await listenOnLoopback(server, 0);
  return {
    url: `http://127.0.0.1:${port}`,
    setFault(next, nextScope = 'all') {
      mode = next;
      scope = nextScope;
    },
    setLatency(ms) {
      latencyMs = ms;
    },
    stats: () => ({ ...counts }),
    async stop() {
      for (const timer of delayed) clearTimeout(timer);
      for (const response of hanging) response.destroy();
      server.closeAllConnections();
      await closeServer(server);
    },
  };
}
