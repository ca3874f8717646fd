import http from 'node:http';
import type { AddressInfo } from 'node:net';

/** Listens on 127.0.0.1 and a free port; resolves with the port. */
export async function listenOnFreePort(server: http.Server): Promise<number> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return (server.address() as AddressInfo).port;
}

/** A request as the canned server received it. */
export interface ReceivedRequest {
  readonly method: string;
  readonly path: string;
  readonly query: URLSearchParams;
  readonly headers: http.IncomingHttpHeaders;
  readonly body: string;
  /** The client's port of the TCP connection: equal for two requests on one kept-alive socket. */
  readonly clientPort: number;
}

export type Responder = (request: ReceivedRequest, response: http.ServerResponse) => void;

export interface CannedServer {
  readonly url: string;
  readonly requests: ReceivedRequest[];
  /** TCP connections accepted so far. */
  connections(): number;
  close(): Promise<void>;
}

/** An HTTP server on 127.0.0.1 and a free port that records every request and answers with `respond`. */
export async function startCannedServer(respond: Responder): Promise<CannedServer> {
  const requests: ReceivedRequest[] = [];
  let connections = 0;
  const server = http.createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const url = new URL(request.url ?? '/', 'http://127.0.0.1');
      const received: ReceivedRequest = {
        method: request.method ?? '',
        path: url.pathname,
        query: url.searchParams,
        headers: request.headers,
        body: Buffer.concat(chunks).toString('utf8'),
        clientPort: request.socket.remotePort ?? 0,
      };
      requests.push(received);
      respond(received, response);
    });
  });
  server.on('connection', () => {
    connections += 1;
  });
  const port = await listenOnFreePort(server);
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    connections: () => connections,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.close((error) => (error ? reject(error) : resolve()));
        server.closeAllConnections();
      }),
  };
}

/** Answers with a status, an XML body and headers. */
export function answerWith(status: number, body = '', headers: http.OutgoingHttpHeaders = {}): Responder {
  return (_request, response) => {
    response.writeHead(status, { 'content-type': 'application/vnd.3scale-v2.0+xml', ...headers });
    response.end(body);
  };
}

export const AUTHORIZED_BODY =
  '<?xml version="1.0" encoding="UTF-8"?><status><authorized>true</authorized><plan>Basic</plan></status>';
