/**
 * The built-in token issuer on loopback, as the local stack serves it: the real token endpoint (POST
 * /oauth/token, the JWKS, the discovery document) over HTTP with a key made at start-up, checking clients
 * with the platform. Its URL is the issuer (`iss`) and the base of its routes, so an authorizer configured
 * with `oidcIssuer` = that URL fetches its keys here, and the fetches are counted.
 */
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { LogPort } from '../../../core/observability/observability';
import type { PlatformPort } from '../../../core/platform/types';
import { defaultOf } from '../../../core/settings/settings';
import {
  type FailedClients,
  JWKS_PATH,
  TOKEN_PATH,
  TokenEndpoint,
  type TokenHttpRequest,
} from '../../../lambdas/token/endpoint';
import type { GuessCounter } from '../../../lambdas/token/guess-limit';
import { localTokenSigner, TOKEN_ALGORITHM, type TokenSigner } from '../../../lambdas/token/signer';

/** Where a client puts its id and secret on a token request (RFC 6749 2.3.1 and the specification's query). */
export type ClientPlace = 'query' | 'body' | 'basic';

export interface TokenAnswer {
  readonly status: number;
  /** The answer's body as sent. */
  readonly body: string;
  /** The access token of a 200 answer. */
  readonly accessToken?: string;
}

export interface TokenIssuer {
  /** The issuer URL: `iss` of its tokens, and the base of /oauth/token and the JWKS. */
  readonly url: string;
  readonly signer: TokenSigner;
  /** GETs of the JWKS so far. */
  jwksFetches(): number;
  /** POST /oauth/token, grant client_credentials, the client's id and secret in `place`. */
  requestToken(clientId: string, clientSecret: string, place?: ClientPlace): Promise<TokenAnswer>;
  /**
   * A JWT with these claims and header fields signed by the issuer's own key: genuine signatures on
   * claims the endpoint would never issue (expired, another audience, an unknown client...).
   */
  sign(
    claims: Readonly<Record<string, unknown>>,
    header?: Readonly<Record<string, unknown>>,
  ): Promise<string>;
  stop(): Promise<void>;
}

export interface TokenIssuerOptions {
  readonly serviceId: string;
  readonly platform: PlatformPort;
  readonly failedClients: FailedClients;
  readonly guesses: GuessCounter;
  readonly logger: LogPort;
  readonly tokenTtlSeconds?: number;
  /** The loopback port, when the issuer URL must be known before the issuer starts; default any free one. */
  readonly port?: number;
}

async function readBody(request: IncomingMessage): Promise<string | undefined> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  return chunks.length === 0 ? undefined : Buffer.concat(chunks).toString('utf8');
}

async function tokenHttpRequest(request: IncomingMessage, url: URL): Promise<TokenHttpRequest> {
  const query: Record<string, string[]> = {};
  for (const name of new Set(url.searchParams.keys())) query[name] = url.searchParams.getAll(name);
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(request.headers)) {
    if (value !== undefined) headers[name] = Array.isArray(value) ? value.join(', ') : value;
  }
  const body = await readBody(request);
  const sourceAddress = request.socket.remoteAddress;
  return {
    method: request.method ?? 'GET',
    headers,
    query,
    ...(body !== undefined && { body }),
    ...(sourceAddress !== undefined && { sourceAddress }),
  };
}

export async function startTokenIssuer(options: TokenIssuerOptions): Promise<TokenIssuer> {
  const signer = await localTokenSigner();
  let endpoint: TokenEndpoint | undefined;
  let jwksFetches = 0;
  const server = createServer(async (request, response) => {
    const url = new URL(request.url ?? '/', 'http://issuer');
    if (url.pathname === JWKS_PATH) jwksFetches++;
    try {
      if (!endpoint) throw new Error('the issuer is not ready');
      const answer = await endpoint.handle(await tokenHttpRequest(request, url), url.pathname);
      response.writeHead(answer.statusCode, answer.headers).end(answer.body);
    } catch (error) {
      response.writeHead(500).end(String(error));
    }
  });
  await new Promise<void>((resolve) => server.listen(options.port ?? 0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  endpoint = new TokenEndpoint({
    config: {
      serviceId: options.serviceId,
      tokenTtlSeconds: options.tokenTtlSeconds ?? 3600,
      oidcIssuer: url,
      tokenGuessWindowSeconds: defaultOf('tokenGuessWindowSeconds'),
      tokenGuessesPerAddress: defaultOf('tokenGuessesPerAddress'),
      tokenGuessesPerClient: defaultOf('tokenGuessesPerClient'),
    },
    platform: options.platform,
    signer,
    failedClients: options.failedClients,
    guesses: options.guesses,
    logger: options.logger,
    now: Date.now,
  });
  const encode = (value: object) => Buffer.from(JSON.stringify(value)).toString('base64url');

  return {
    url,
    signer,
    jwksFetches: () => jwksFetches,
    async requestToken(clientId, clientSecret, place = 'query') {
      const client = new URLSearchParams({ client_id: clientId, client_secret: clientSecret });
      const grant = 'grant_type=client_credentials';
      const init: Record<ClientPlace, { query: string; headers: Record<string, string>; body?: string }> = {
        query: { query: `?${grant}&${client}`, headers: {} },
        body: {
          query: '',
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
          body: `${grant}&${client}`,
        },
        basic: {
          query: `?${grant}`,
          headers: {
            authorization: `Basic ${Buffer.from(`${encodeURIComponent(clientId)}:${encodeURIComponent(clientSecret)}`).toString('base64')}`,
          },
        },
      };
      const { query, headers, body } = init[place];
      const answer = await fetch(`${url}${TOKEN_PATH}${query}`, {
        method: 'POST',
        headers,
        ...(body !== undefined && { body }),
        signal: AbortSignal.timeout(10_000),
      });
      const text = await answer.text();
      const accessToken =
        answer.status === 200 ? (JSON.parse(text) as { access_token?: string }).access_token : undefined;
      return { status: answer.status, body: text, ...(accessToken !== undefined && { accessToken }) };
    },
    async sign(claims, header = {}) {
      const protectedHeader = { alg: TOKEN_ALGORITHM, typ: 'JWT', kid: await signer.keyId(), ...header };
      const signingInput = `${encode(protectedHeader)}.${encode(claims)}`;
      const signature = await signer.sign(Buffer.from(signingInput, 'ascii'));
      return `${signingInput}.${Buffer.from(signature).toString('base64url')}`;
    },
    async stop() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
