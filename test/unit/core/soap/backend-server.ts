/** A real HTTP server on a free loopback port that records what it receives, for the forwarding tests. */
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import { closeServer, listenOnLoopback, readBody } from '../../../../local/http-server';

export interface ReceivedRequest {
  readonly method: string;
  readonly url: string;
  readonly headers: IncomingHttpHeaders;
  readonly body: Buffer;
}

export interface TestBackend {
  readonly url: string;
  readonly received: ReceivedRequest[];
  stop(): Promise<void>;
}

export type BackendBehaviour = (request: ReceivedRequest, response: ServerResponse) => void;

export async function startBackend(behaviour: BackendBehaviour): Promise<TestBackend> {
  const received: ReceivedRequest[] = [];
  const server = createServer((request: IncomingMessage, response) => {
    void readBody(request, 16 * 1024 * 1024).then((body) => {
      const seen = { method: request.method ?? '', url: request.url ?? '', headers: request.headers, body };
      received.push(seen);
      behaviour(seen, response);
    });
  });
  const port = await listenOnLoopback(server, 0);
  return {
    url: `http://127.0.0.1:${port}/soap`,
    received,
    async stop() {
      // Requests a test left hanging are cut, so the server closes at once.
      server.closeAllConnections();
      await closeServer(server);
    },
  };
}
