/**
 * The oauth workload's issuer: the project's token endpoint (lambdas/token/endpoint.ts) with the local
 * signer, served over HTTP on a loopback port, so the authorizer fetches its JWKS as it would the built-in
 * issuer's, and tokens are had as a client has them (client credentials checked with the platform).
 */
import { createServer } from 'node:http';
import { silentLogger } from '../core/observability/observability';
import { platformClientFromConfig } from '../core/platform/client';
import { parseConfig } from '../core/settings/config';
import { type FailedClients, TOKEN_PATH, TokenEndpoint } from '../lambdas/token/endpoint';
import { memoryGuessCounter } from '../lambdas/token/guess-limit';
import { localTokenSigner } from '../lambdas/token/signer';
import { closeServer, LOOPBACK, listenOnLoopback, readBody } from '../local/http-server';
import { BENCH_OAUTH_SERVICE_ID, BENCH_PROVIDER_KEY, clientSecretOf } from './fixture';

const REQUEST_TIMEOUT_MS = 10_000;

export interface TokenIssuer {
  /** The issuer URL (`iss`, and the audience): its JWKS is at /.well-known/jwks.json. */
  readonly url: string;
  /** An access token for the client, from POST /oauth/token with its id and secret. */
  token(clientId: string): Promise<string>;
  stop(): Promise<void>;
}

/** Failed client checks kept in memory: the bench's clients are all genuine, so none is ever added. */
function memoryFailedClients(): FailedClients {
  const failed = new Map<string, number>();
  return {
    has: async (hash) => (failed.get(hash) ?? 0) > Date.now(),
    add: async (hash, ttlSeconds) => {
      failed.set(hash, Date.now() + ttlSeconds * 1000);
    },
  };
}

export async function startTokenIssuer(platformUrl: string): Promise<TokenIssuer> {
  const server = createServer();
  const port = await listenOnLoopback(server, 0);
  const url = `http://${LOOPBACK}:${port}`;
  const config = parseConfig({
    serviceId: BENCH_OAUTH_SERVICE_ID,
    platformUrl,
    platformCredential: BENCH_PROVIDER_KEY,
    credentialMode: 'oauth',
    oidcIssuer: url,
  });
  const platform = platformClientFromConfig(config, BENCH_PROVIDER_KEY);
  const endpoint = new TokenEndpoint({
    config: { ...config, oidcIssuer: url },
    platform,
    signer: await localTokenSigner(),
    failedClients: memoryFailedClients(),
    guesses: memoryGuessCounter(Date.now),
    logger: silentLogger,
    now: Date.now,
  });
  server.on('request', (request, response) => {
    const target = new URL(request.url ?? '/', url);
    const query: Record<string, string[]> = {};
    for (const [name, value] of target.searchParams) query[name] = [...(query[name] ?? []), value];
    readBody(request, 64 * 1024)
      .then((body) =>
        endpoint.handle(
          {
            method: request.method ?? 'GET',
            headers: request.headers as Record<string, string | undefined>,
            query,
            body: body.toString('utf8'),
          },
          target.pathname,
        ),
      )
      .then(
        (answer) => response.writeHead(answer.statusCode, answer.headers).end(answer.body),
        () => response.writeHead(500).end(),
      );
  });
  return {
    url,
    async token(clientId) {
      const query = new URLSearchParams({
        grant_type: 'client_credentials',
        client_id: clientId,
        client_secret: clientSecretOf(clientId),
      });
      const response = await fetch(`${url}${TOKEN_PATH}?${query}`, {
        method: 'POST',
        signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
      });
      const answer = (await response.json()) as { access_token?: string; error?: string };
      if (answer.access_token === undefined) {
        throw new Error(`no token for a bench client: ${response.status} ${answer.error ?? ''}`);
      }
      return answer.access_token;
    },
    async stop() {
      platform.close();
      await closeServer(server);
    },
  };
}
