/** A loopback JWKS endpoint for token tests: its keys can change, its fetches are counted, it can fail. */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { JWK } from 'jose';

export class JwksServer {
  keys: JWK[] = [];
  fetches = 0;
  /** Answer this status instead of the keys (a failing issuer). */
  failWith: number | undefined;
  private server: Server | undefined;
  url = '';

  async start(): Promise<this> {
    this.server = createServer((_, response) => {
      this.fetches++;
      if (this.failWith !== undefined) {
        response.writeHead(this.failWith).end();
        return;
      }
      response
        .writeHead(200, { 'content-type': 'application/json' })
        .end(JSON.stringify({ keys: this.keys }));
    });
    await new Promise<void>((resolve) => this.server?.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/.well-known/jwks.json`;
    return this;
  }

  async stop(): Promise<void> {
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }
}
