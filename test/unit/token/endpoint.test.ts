/**
 * The token endpoint core with a fake platform and the local signer: every place credentials may travel,
 * every RFC 6749 error, the platform's answers, the failed-check cache, and tokens the authorizer accepts.
 */
import { createLocalJWKSet } from 'jose';
import { beforeEach, describe, expect, it } from 'vitest';
import { AccessTokenVerifier } from '../../../core/credentials/oauth';
import type { Credential } from '../../../core/platform/types';
import { parseConfig } from '../../../core/settings/config';
import {
  type FailedClients,
  TOKEN_PATH,
  TokenEndpoint,
  type TokenHttpRequest,
} from '../../../lambdas/token/endpoint';
import { memoryGuessCounter } from '../../../lambdas/token/guess-limit';
import { localTokenSigner, type TokenSigner } from '../../../lambdas/token/signer';
import {
  authorized,
  CapturingLogger,
  denied,
  FakePlatform,
  invalidCredential,
  UNAVAILABLE,
} from '../core/fakes';

const ISSUER = 'http://127.0.0.1:8080/oauth-api';
const config = parseConfig({ serviceId: 's1', credentialMode: 'oauth', oidcIssuer: ISSUER });
const SECRETS: Record<string, string> = { 'client-1': 'secret:with:colons', 'client-2': 's2' };

let platform: FakePlatform;
let signer: TokenSigner;
let remembered: Map<string, number>;
let logger: CapturingLogger;
let endpoint: TokenEndpoint;

const failedClients: FailedClients = {
  has: async (hash) => remembered.has(hash),
  add: async (hash, ttl) => void remembered.set(hash, ttl),
};

beforeEach(async () => {
  platform = new FakePlatform();
  platform.authorizeAnswer = (credential: Credential) =>
    credential.kind === 'app_id' && SECRETS[credential.appId] === credential.appKey
      ? authorized()
      : credential.kind === 'app_id' && SECRETS[credential.appId] === undefined
        ? invalidCredential('application_not_found')
        : denied('application_key_invalid');
  signer ??= await localTokenSigner();
  remembered = new Map();
  logger = new CapturingLogger();
  endpoint = new TokenEndpoint({
    config: { ...config, oidcIssuer: ISSUER },
    platform,
    signer,
    failedClients,
    guesses: memoryGuessCounter(Date.now),
    logger,
    now: Date.now,
  });
});

function post(parts: Partial<TokenHttpRequest>) {
  return endpoint.handle({ method: 'POST', headers: {}, query: {}, ...parts }, TOKEN_PATH);
}

const query = (values: Record<string, string>) =>
  Object.fromEntries(Object.entries(values).map(([name, value]) => [name, [value]]));
const form = (values: Record<string, string>) => ({
  headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
  body: new URLSearchParams(values).toString(),
});
const basic = (id: string, secret: string) =>
  `Basic ${Buffer.from(`${encodeURIComponent(id)}:${encodeURIComponent(secret)}`).toString('base64')}`;
const GRANT = { grant_type: 'client_credentials' };
const CLIENT_1 = { client_id: 'client-1', client_secret: 'secret:with:colons' };

async function verified(accessToken: string) {
  const keys = createLocalJWKSet({ keys: [await signer.publicJwk()] });
  return new AccessTokenVerifier(config, keys).verify(accessToken);
}

describe('a token for the client credentials', () => {
  it('in the query string, a form body or HTTP Basic (a secret with colons): RFC 6749 5.1', async () => {
    for (const answer of [
      await post({ query: query({ ...GRANT, ...CLIENT_1 }) }),
      await post(form({ ...GRANT, ...CLIENT_1 })),
      await post({
        headers: {
          authorization: basic('client-1', 'secret:with:colons'),
          'content-type': 'application/x-www-form-urlencoded',
        },
        body: 'grant_type=client_credentials',
      }),
    ]) {
      expect(answer.statusCode).toBe(200);
      expect(answer.headers).toMatchObject({ 'cache-control': 'no-store', pragma: 'no-cache' });
      const body = JSON.parse(answer.body);
      expect(body).toEqual({ access_token: expect.any(String), token_type: 'Bearer', expires_in: 3600 });
      expect(await verified(body.access_token)).toEqual({
        ok: true,
        clientId: 'client-1',
        issuedAt: expect.any(Number),
      });
    }
    expect(platform.calls.map((call) => call.op === 'authorize' && call.credential)).toEqual(
      Array(3).fill({ kind: 'app_id', appId: 'client-1', appKey: 'secret:with:colons' }),
    );
  });

  it('is a JWT with iss, sub, client_id, aud, iat, exp and a fresh jti', async () => {
    const tokens = await Promise.all(
      [1, 2].map(
        async () => JSON.parse((await post({ query: query({ ...GRANT, ...CLIENT_1 }) })).body).access_token,
      ),
    );
    const [a, b] = tokens.map((t: string) =>
      JSON.parse(Buffer.from(t.split('.')[1] as string, 'base64url').toString()),
    );
    expect(a).toMatchObject({ iss: ISSUER, sub: 'client-1', client_id: 'client-1', aud: ISSUER });
    expect(a.exp - a.iat).toBe(3600);
    expect(a.jti).not.toBe(b.jti);
    const header = JSON.parse(
      Buffer.from((tokens[0] as string).split('.')[0] as string, 'base64url').toString(),
    );
    expect(header).toEqual({ alg: 'ES256', typ: 'JWT', kid: (await signer.publicJwk()).kid });
  });

  it('is given to an application over its limits: the authorizer refuses its calls, not its token', async () => {
    platform.authorizeAnswer = () => denied('limits_exceeded');
    expect((await post({ query: query({ ...GRANT, ...CLIENT_1 }) })).statusCode).toBe(200);
  });
});

describe('RFC 6749 5.2 errors', () => {
  async function error(parts: Partial<TokenHttpRequest>) {
    const answer = await post(parts);
    return {
      status: answer.statusCode,
      ...JSON.parse(answer.body),
      challenge: answer.headers['www-authenticate'],
    };
  }

  it('invalid_request: credentials in two places, a repeated parameter, half a pair, no grant type', async () => {
    expect(
      await error({
        query: query({ ...GRANT, ...CLIENT_1 }),
        headers: { authorization: basic('client-1', 'x') },
      }),
    ).toMatchObject({ status: 400, error: 'invalid_request' });
    expect(
      await error({
        query: query(GRANT),
        ...form(CLIENT_1),
        headers: { ...form(CLIENT_1).headers, authorization: basic('a', 'b') },
      }),
    ).toMatchObject({
      status: 400,
      error: 'invalid_request',
    });
    expect(
      await error({
        query: { ...query(CLIENT_1), grant_type: ['client_credentials', 'client_credentials'] },
      }),
    ).toMatchObject({
      error: 'invalid_request',
    });
    expect(await error({ query: query({ ...GRANT, client_id: 'client-1' }) })).toMatchObject({
      error: 'invalid_request',
    });
    expect(await error({ query: query(CLIENT_1) })).toMatchObject({
      error: 'invalid_request',
      error_description: 'grant_type is missing',
    });
    expect(await error({ headers: { authorization: 'Bearer x' }, query: query(GRANT) })).toMatchObject({
      error: 'invalid_request',
    });
    expect(await error({ headers: { 'content-type': 'application/json' }, body: '{}' })).toMatchObject({
      error: 'invalid_request',
    });
    expect(platform.calls).toEqual([]);
  });

  it('unsupported_grant_type for grants that need a user, and any other', async () => {
    for (const grant of ['authorization_code', 'refresh_token', 'password', 'urn:other']) {
      expect(await error({ query: query({ grant_type: grant, ...CLIENT_1 }) })).toMatchObject({
        status: 400,
        error: 'unsupported_grant_type',
        error_description: expect.stringContaining(grant),
      });
    }
  });

  it('invalid_client (401, Basic challenge): no credentials, a wrong secret, an unknown or suspended client', async () => {
    const challenge = `Basic realm="${ISSUER}"`;
    expect(await error({ query: query(GRANT) })).toMatchObject({
      status: 401,
      error: 'invalid_client',
      challenge,
    });
    expect(
      await error({ query: query({ ...GRANT, client_id: 'client-1', client_secret: 'wrong' }) }),
    ).toMatchObject({
      status: 401,
      error: 'invalid_client',
      challenge,
    });
    expect(
      await error({ query: query({ ...GRANT, client_id: 'nobody', client_secret: 'x' }) }),
    ).toMatchObject({
      error: 'invalid_client',
    });
    platform.authorizeAnswer = () => denied('application_not_active');
    expect(await error({ query: query({ ...GRANT, ...CLIENT_1 }) })).toMatchObject({
      error: 'invalid_client',
    });
  });

  it('remembers a failed check by a hash, so the same wrong secret does not reach the platform again', async () => {
    const wrong = query({ ...GRANT, client_id: 'client-1', client_secret: 'wrong-secret' });
    for (let i = 0; i < 5; i++) expect((await post({ query: wrong })).statusCode).toBe(401);
    expect(platform.count('authorize')).toBe(1);
    const [hash] = [...remembered.keys()];
    expect(hash).toMatch(/^[0-9a-f]{64}$/);
    expect(JSON.stringify(logger.lines)).not.toContain('wrong-secret');
    expect((await post({ query: query({ ...GRANT, ...CLIENT_1 }) })).statusCode).toBe(200);
  });

  it('temporarily_unavailable (503) when the platform cannot answer, never a 500', async () => {
    platform.authorizeAnswer = () => UNAVAILABLE;
    expect(await error({ query: query({ ...GRANT, ...CLIENT_1 }) })).toMatchObject({
      status: 503,
      error: 'temporarily_unavailable',
    });
    expect(remembered.size).toBe(0);
  });
});

describe('the client id and secret are checked as the authorizer checks credentials, first', () => {
  const CLIENT_ID_FLAWS = {
    'a NUL': 'client-1\u0000',
    'a trailing space': 'client-1 ',
    'a tab': 'client-1\t',
    'a newline': 'client-1\n',
    'a comma': 'client-1,client-2',
    'no character': '',
  };

  it('401 invalid_client naming the part, without asking the platform, for a 100 KB id or secret', async () => {
    const huge = 'a'.repeat(100 * 1024);
    for (const [client, part] of [
      [{ client_id: huge, client_secret: 's' }, 'client_id'],
      [{ client_id: 'client-1', client_secret: huge }, 'client_secret'],
    ] as const) {
      for (const parts of [{ query: query({ ...GRANT, ...client }) }, form({ ...GRANT, ...client })]) {
        const answer = await post(parts);
        expect(answer.statusCode).toBe(401);
        expect(JSON.parse(answer.body)).toEqual({
          error: 'invalid_client',
          error_description: `${part} is too long (at most 256 bytes)`,
        });
      }
    }
    expect(platform.calls).toEqual([]);
    expect(logger.lines.filter((line) => line.level !== 'info')).toEqual([]);
  });

  it('no token for an id the authorizer would refuse, even where the platform would take it', async () => {
    platform.authorizeAnswer = () => authorized();
    for (const [flaw, clientId] of Object.entries(CLIENT_ID_FLAWS)) {
      for (const parts of [
        { query: query({ ...GRANT, client_id: clientId, client_secret: 'secret:with:colons' }) },
        form({ ...GRANT, client_id: clientId, client_secret: 'secret:with:colons' }),
        {
          query: query(GRANT),
          headers: { authorization: basic(clientId, 'secret:with:colons') },
        },
      ]) {
        const answer = await post(parts);
        expect(answer.statusCode, flaw).toBe(401);
        expect(JSON.parse(answer.body), flaw).toMatchObject({
          error: 'invalid_client',
          error_description: expect.stringMatching(/^client_id /),
        });
      }
    }
    expect(platform.calls).toEqual([]);
  });

  it('a secret with characters no key has is refused the same way, and never echoed', async () => {
    const answer = await post({
      query: query({ ...GRANT, client_id: 'client-1', client_secret: 'bad secret' }),
    });
    expect(answer.statusCode).toBe(401);
    expect(answer.body).not.toContain('bad secret');
    expect(JSON.parse(answer.body).error_description).toMatch(/^client_secret /);
    expect(platform.calls).toEqual([]);
  });
});

describe('online guessing of a secret is bounded per source address and per client', () => {
  const from = (sourceAddress: string, secret: string, clientId = 'client-1') => ({
    query: query({ ...GRANT, client_id: clientId, client_secret: secret }),
    sourceAddress,
  });

  it('300 distinct wrong secrets from one address: the platform judges 10, the rest get 429 with Retry-After', async () => {
    const statuses: number[] = [];
    let refused: Awaited<ReturnType<typeof post>> | undefined;
    for (let i = 0; i < 300; i++) {
      const answer = await post(from('198.51.100.7', `guess-${i}`));
      statuses.push(answer.statusCode);
      if (answer.statusCode === 429) refused ??= answer;
    }
    expect(platform.count('authorize')).toBe(config.tokenGuessesPerAddress);
    expect(statuses.slice(0, 10)).toEqual(Array(10).fill(401));
    expect(statuses.slice(10)).toEqual(Array(290).fill(429));
    expect(refused?.headers['retry-after']).toMatch(/^\d+$/);
    expect(Number(refused?.headers['retry-after'])).toBeGreaterThan(0);
    expect(Number(refused?.headers['retry-after'])).toBeLessThanOrEqual(config.tokenGuessWindowSeconds);
    expect(JSON.parse(refused?.body ?? '{}')).toMatchObject({ error: 'slow_down' });
    expect(JSON.stringify(logger.lines)).not.toContain('guess-');

    // The genuine client, from another address, still gets its token; from the spent address it waits.
    expect((await post(from('203.0.113.9', 'secret:with:colons'))).statusCode).toBe(200);
    expect((await post(from('198.51.100.7', 'secret:with:colons'))).statusCode).toBe(429);
  });

  it('many addresses: the client bound holds, and an address refused for the client keeps its attempts', async () => {
    let judged = 0;
    for (let i = 0; judged < config.tokenGuessesPerClient + 20; i++) {
      for (let n = 0; n < config.tokenGuessesPerAddress; n++, judged++) {
        await post(from(`10.0.${i}.1`, `guess-${i}-${n}`));
      }
    }
    // The last two addresses came past the client bound: each got its one check as a clean address.
    expect(platform.count('authorize')).toBe(config.tokenGuessesPerClient + 2);
    // Past it an address that failed once is refused for the client; another client from it is not.
    expect((await post(from('203.0.113.9', 'one-more-guess'))).statusCode).toBe(401);
    const refused = await post(from('203.0.113.9', 'secret:with:colons'));
    expect(refused.statusCode).toBe(429);
    expect(JSON.parse(refused.body).error_description).toMatch(/this client/);
    expect((await post(from('203.0.113.9', 's2', 'client-2'))).statusCode).toBe(200);
  });

  it('a stranger cannot lock the client out: 10 addresses x 11 wrong secrets, then the right one from an 11th gets a token', async () => {
    const perAddress = config.tokenGuessesPerAddress;
    const addresses = config.tokenGuessesPerClient / perAddress;
    for (let i = 0; i < addresses; i++) {
      for (let n = 0; n <= perAddress; n++) await post(from(`10.1.${i}.1`, `guess-${i}-${n}`));
    }
    expect(platform.count('authorize')).toBe(config.tokenGuessesPerClient);
    expect((await post(from('203.0.113.9', 'secret:with:colons'))).statusCode).toBe(200);
    // Past the client bound an address with no failure gets one check, no more: guessing stays bounded.
    expect((await post(from('203.0.113.10', 'wrong-1'))).statusCode).toBe(401);
    expect((await post(from('203.0.113.10', 'wrong-2'))).statusCode).toBe(429);
    expect((await post(from('203.0.113.10', 'secret:with:colons'))).statusCode).toBe(429);
    expect(platform.count('authorize')).toBe(config.tokenGuessesPerClient + 2);
  });

  it('a genuine client, or a platform that cannot judge, spends no attempt', async () => {
    for (let i = 0; i < 3 * config.tokenGuessesPerAddress; i++) {
      expect((await post(from('198.51.100.7', 'secret:with:colons'))).statusCode).toBe(200);
    }
    platform.authorizeAnswer = () => UNAVAILABLE;
    for (let i = 0; i < 3 * config.tokenGuessesPerAddress; i++) {
      expect((await post(from('198.51.100.7', 'secret:with:colons'))).statusCode).toBe(503);
    }
    expect(platform.count('authorize')).toBe(6 * config.tokenGuessesPerAddress);
  });
});

describe('published keys', () => {
  it('serves the JWKS and the discovery document', async () => {
    const jwks = await endpoint.handle({ method: 'GET', headers: {}, query: {} }, '/.well-known/jwks.json');
    expect(JSON.parse(jwks.body)).toEqual({ keys: [await signer.publicJwk()] });
    expect(JSON.parse(jwks.body).keys[0]).not.toHaveProperty('d');
    const discovery = await endpoint.handle(
      { method: 'GET', headers: {}, query: {} },
      '/.well-known/openid-configuration',
    );
    expect(JSON.parse(discovery.body)).toMatchObject({
      issuer: ISSUER,
      token_endpoint: `${ISSUER}/oauth/token`,
      jwks_uri: `${ISSUER}/.well-known/jwks.json`,
      grant_types_supported: ['client_credentials'],
    });
  });
});
