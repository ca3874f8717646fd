/**
 * The oauth credential scheme: where a token travels, and the verification of its JWT against the issuer's
 * JWKS (signature, algorithm allow-list, issuer, audience, lifetime with 60 s skew, client id claim, key
 * refresh on an unknown kid at most once a minute). Keys are served by a loopback JWKS endpoint.
 */

import type Redis from 'ioredis';
import RedisMock from 'ioredis-mock';
import { exportJWK, exportSPKI, generateKeyPair, type JWTPayload, SignJWT } from 'jose';
import { afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { mergedValues } from '../../../../adapters/gateway/rest-request';
import { credentialKeys } from '../../../../core/budget/keys';
import { credentialIdOf, credentialReaderOf } from '../../../../core/credentials';
import {
  AccessTokenVerifier,
  JWKS_MAX_AGE_MS,
  JWKS_REFRESH_COOLDOWN_MS,
  remoteTokenKeys,
  TokenKeysUnavailableError,
} from '../../../../core/credentials/oauth';
import { VerifiedTokens } from '../../../../core/credentials/verified-tokens';
import { createAccessAuthorizer } from '../../../../core/decision/access';
import { type AccessConfigInput, parseConfig } from '../../../../core/settings/config';
import { accessConfig, gatewayRequest, SERVICE } from '../../handlers/fixtures';
import { CapturingLogger, CapturingMetrics, countingRedis, FakePlatform } from '../fakes';
import { JwksServer } from '../jwks-server';

const ISSUER = 'https://issuer.example';
const AUDIENCE = 'https://api.example';
type KeyPair = Awaited<ReturnType<typeof generateKeyPair>>;

let jwks: JwksServer;
let issuerKey: KeyPair;
let otherKey: KeyPair;

function settings(overrides: Partial<AccessConfigInput> = {}) {
  return parseConfig({
    serviceId: 's1',
    credentialMode: 'oauth',
    oidcIssuer: ISSUER,
    oidcJwksUrl: jwks.url,
    oidcAudience: AUDIENCE,
    ...overrides,
  });
}

async function token(
  claims: JWTPayload = {},
  options: { key?: KeyPair; kid?: string; alg?: string; secret?: Uint8Array } = {},
): Promise<string> {
  const now = Math.floor(Date.now() / 1000);
  const payload = { iss: ISSUER, aud: AUDIENCE, iat: now, exp: now + 3600, client_id: 'app-1', ...claims };
  return new SignJWT(payload)
    .setProtectedHeader({ alg: options.alg ?? 'ES256', kid: options.kid ?? 'k1' })
    .sign(options.secret ?? (options.key ?? issuerKey).privateKey);
}

function bearer(value: string) {
  return { headers: { Authorization: `Bearer ${value}` }, multiValueHeaders: null };
}

type Values = Readonly<Record<string, string>> | null;
type MultiValues = Readonly<Record<string, readonly string[]>> | null;

/** A REST event's parts, read as the REST adapter hands them to the core's reader. */
interface RestParts {
  readonly headers: Values;
  readonly multiValueHeaders: MultiValues;
  readonly queryStringParameters?: Values;
}

async function read(request: RestParts, overrides = {}) {
  return credentialReaderOf(settings(overrides))({
    headers: mergedValues(request.headers, request.multiValueHeaders),
    query: mergedValues(request.queryStringParameters, null),
  });
}

const APP_1 = { ok: true, credential: { kind: 'app_id', appId: 'app-1' } };
const INVALID = { ok: false, header: 'authorization', reason: 'invalid_token' };
/** A verdict on a valid token of app-1, which says when it was issued. */
const VALID_APP_1 = { ok: true, clientId: 'app-1', issuedAt: expect.any(Number) };

beforeAll(async () => {
  issuerKey = await generateKeyPair('ES256', { extractable: true });
  otherKey = await generateKeyPair('ES256', { extractable: true });
});

beforeEach(async () => {
  jwks = await new JwksServer().start();
  jwks.keys = [{ ...(await exportJWK(issuerKey.publicKey)), kid: 'k1', alg: 'ES256', use: 'sig' }];
});

afterEach(async () => {
  vi.useRealTimers();
  await jwks.stop();
});

describe('where the token travels', () => {
  it('reads a Bearer Authorization header (scheme name in any case) or the access_token query parameter', async () => {
    const jwt = await token();
    expect(await read(bearer(jwt))).toEqual(APP_1);
    expect(await read({ headers: { authorization: `bearer ${jwt}` }, multiValueHeaders: null })).toEqual(
      APP_1,
    );
    expect(
      await read({ headers: {}, multiValueHeaders: null, queryStringParameters: { access_token: jwt } }),
    ).toEqual(APP_1);
  });

  it('refuses a token in the header and the query at once, even the same one', async () => {
    const jwt = await token();
    expect(await read({ ...bearer(jwt), queryStringParameters: { access_token: jwt } })).toEqual({
      ok: false,
      header: 'access_token',
      reason: 'several_values',
    });
  });

  it('refuses no token, another scheme, two Authorization values and what is not a compact JWS', async () => {
    expect(await read({ headers: {}, multiValueHeaders: null })).toEqual({
      ok: false,
      header: 'authorization',
      reason: 'missing',
    });
    expect(await read({ headers: { authorization: 'Basic YTpi' }, multiValueHeaders: null })).toMatchObject({
      ok: false,
      reason: 'invalid_token',
    });
    const jwt = await token();
    expect(
      await read({ headers: null, multiValueHeaders: { Authorization: [`Bearer ${jwt}`, `Bearer ${jwt}`] } }),
    ).toMatchObject({ ok: false, reason: 'several_values' });
    for (const bad of ['not-a-jwt', 'a.b', 'a.b.c.d', 'a.b.', `${jwt}x!`]) {
      expect(await read(bearer(bad))).toMatchObject({ ok: false });
    }
    expect(await read(bearer('a'.repeat(9000)))).toMatchObject({ ok: false, reason: 'too_long' });
    expect(jwks.fetches).toBe(0);
  });
});

describe('verification', () => {
  it('accepts exp and nbf within 60 s of skew, refuses an expired token and one not valid yet', async () => {
    const now = Math.floor(Date.now() / 1000);
    expect(await read(bearer(await token({ exp: now - 30 })))).toEqual(APP_1);
    expect(await read(bearer(await token({ nbf: now + 30 })))).toEqual(APP_1);
    expect(await read(bearer(await token({ exp: now - 120 })))).toEqual(INVALID);
    expect(await read(bearer(await token({ nbf: now + 120 })))).toEqual(INVALID);
  });

  it('refuses a token without exp', async () => {
    const jwt = await new SignJWT({ client_id: 'app-1' })
      .setProtectedHeader({ alg: 'ES256', kid: 'k1' })
      .setIssuer(ISSUER)
      .setAudience(AUDIENCE)
      .sign(issuerKey.privateKey);
    expect(await read(bearer(jwt))).toEqual(INVALID);
  });

  it('refuses another audience and another issuer', async () => {
    expect(await read(bearer(await token({ aud: 'https://elsewhere.example' })))).toEqual(INVALID);
    expect(await read(bearer(await token({ iss: 'https://evil.example' })))).toEqual(INVALID);
  });

  it('refuses alg none, HS256 signed with the public key, and algorithms off the allow-list', async () => {
    const encode = (value: object) => Buffer.from(JSON.stringify(value)).toString('base64url');
    const now = Math.floor(Date.now() / 1000);
    const claims = { iss: ISSUER, aud: AUDIENCE, exp: now + 600, client_id: 'app-1' };
    expect(await read(bearer(`${encode({ alg: 'none' })}.${encode(claims)}.`))).toMatchObject({ ok: false });
    expect(await read(bearer(`${encode({ alg: 'none', kid: 'k1' })}.${encode(claims)}.AAAA`))).toEqual(
      INVALID,
    );
    const publicPem = new TextEncoder().encode(await exportSPKI(issuerKey.publicKey));
    expect(await read(bearer(await token({}, { alg: 'HS256', secret: publicPem })))).toEqual(INVALID);
    // The allow-list is the configuration's: ES256 alone refuses an RS256 key even when the JWKS has it.
    const rsa = await generateKeyPair('RS256', { extractable: true });
    jwks.keys.push({ ...(await exportJWK(rsa.publicKey)), kid: 'r1', alg: 'RS256' });
    const rsaToken = await token({}, { key: rsa, kid: 'r1', alg: 'RS256' });
    expect(await read(bearer(rsaToken))).toEqual(APP_1);
    expect(await read(bearer(rsaToken), { oidcAlgorithms: ['ES256'] })).toEqual(INVALID);
  });

  it('refuses a signature of another key under the issuer key id', async () => {
    expect(await read(bearer(await token({}, { key: otherKey, kid: 'k1' })))).toEqual(INVALID);
  });

  it('takes the client id from client_id, else azp; a configured claim alone', async () => {
    expect(await read(bearer(await token({ client_id: undefined, azp: 'app-2' })))).toEqual({
      ok: true,
      credential: { kind: 'app_id', appId: 'app-2' },
    });
    expect(
      await read(bearer(await token({ client_id: undefined, azp: 'app-2' })), {
        oidcClientIdClaim: 'client_id',
      }),
    ).toEqual(INVALID);
    expect(await read(bearer(await token({ client_id: 'a b' })))).toEqual(INVALID);
    expect(await read(bearer(await token({ client_id: 7 })))).toEqual(INVALID);
  });
});

describe('the issuer keys', () => {
  it('are fetched once, then again for an unknown kid at most once a minute', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    const verifier = new AccessTokenVerifier(settings());
    expect(await verifier.verify(await token())).toEqual(VALID_APP_1);
    expect(await verifier.verify(await token())).toEqual(VALID_APP_1);
    expect(jwks.fetches).toBe(1);

    // A new key appears: within the cooldown its tokens are refused without a fetch.
    const rotated = await generateKeyPair('ES256', { extractable: true });
    jwks.keys.push({ ...(await exportJWK(rotated.publicKey)), kid: 'k2', alg: 'ES256' });
    expect(await verifier.verify(await token({}, { key: rotated, kid: 'k2' }))).toEqual({ ok: false });
    expect(jwks.fetches).toBe(1);

    // After the cooldown, the unknown kid fetches the keys again, once.
    vi.setSystemTime(Date.now() + JWKS_REFRESH_COOLDOWN_MS + 1000);
    expect(await verifier.verify(await token({}, { key: rotated, kid: 'k2' }))).toEqual(VALID_APP_1);
    expect(await verifier.verify(await token({}, { key: otherKey, kid: 'k9' }))).toEqual({ ok: false });
    expect(jwks.fetches).toBe(2);
  });

  it('unreachable or broken: an error that is not a refusal of the token', async () => {
    jwks.failWith = 500;
    const verifier = new AccessTokenVerifier(settings());
    await expect(verifier.verify(await token())).rejects.toBeInstanceOf(TokenKeysUnavailableError);
    const unreachable = new AccessTokenVerifier(settings({ oidcJwksUrl: 'http://127.0.0.1:9/jwks.json' }));
    await expect(unreachable.verify(await token())).rejects.toBeInstanceOf(TokenKeysUnavailableError);
  });
});

describe('verified tokens', () => {
  /** A verifier whose key lookups (one per signature check) are counted. */
  function countingVerifier() {
    const keys = remoteTokenKeys(settings());
    const counted = { lookups: 0 };
    const verifier = new AccessTokenVerifier(settings(), (...args) => {
      counted.lookups++;
      return keys(...args);
    });
    return { verifier, counted };
  }

  it('are checked once, then known until they expire; an expired one is checked again and refused', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    const { verifier, counted } = countingVerifier();
    const shortLived = await token({ exp: Math.floor(Date.now() / 1000) + 120 });
    expect(await verifier.verify(shortLived)).toEqual(VALID_APP_1);
    expect(await verifier.verify(shortLived)).toEqual(VALID_APP_1);
    expect(counted.lookups).toBe(1);
    vi.setSystemTime(Date.now() + 200_000);
    expect(await verifier.verify(shortLived)).toEqual({ ok: false });
    expect(counted.lookups).toBe(2);
  });

  it('are checked again once the keys are as old as they may be kept, and a refused token every time', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    const { verifier, counted } = countingVerifier();
    const valid = await token();
    await verifier.verify(valid);
    vi.setSystemTime(Date.now() + JWKS_MAX_AGE_MS);
    expect(await verifier.verify(valid)).toEqual(VALID_APP_1);
    expect(counted.lookups).toBe(2);
    const forged = await token({}, { key: otherKey });
    expect(await verifier.verify(forged)).toEqual({ ok: false });
    expect(await verifier.verify(forged)).toEqual({ ok: false });
    expect(counted.lookups).toBe(4);
  });

  it('keep the most recently used ones within their capacity', () => {
    const kept = new VerifiedTokens(2);
    const app = (clientId: string) => ({ clientId, issuedAt: 7 });
    kept.keep('a', app('app-a'), 1000);
    kept.keep('b', app('app-b'), 1000);
    expect(kept.known('a', 0)).toEqual(app('app-a'));
    kept.keep('c', app('app-c'), 1000);
    expect([kept.known('a', 0), kept.known('b', 0), kept.known('c', 0)]).toEqual([
      app('app-a'),
      undefined,
      app('app-c'),
    ]);
    expect(kept.known('a', 1000)).toBeUndefined();
    expect(kept.size).toBe(1);
  });
});

describe('the access core in oauth mode', () => {
  async function core() {
    const counted = countingRedis(new RedisMock() as unknown as Redis);
    const platform = new FakePlatform();
    const published: unknown[] = [];
    const access = createAccessAuthorizer({
      config: accessConfig({
        credentialMode: 'oauth',
        oidcIssuer: ISSUER,
        oidcJwksUrl: jwks.url,
        oidcAudience: AUDIENCE,
      }),
      redis: counted.redis,
      publisher: { publish: async (message) => void published.push(message) },
      platform,
      now: Date.now,
      logger: new CapturingLogger(),
      metrics: new CapturingMetrics(),
    });
    await counted.redis.flushall(); // in-memory Redis instances share their data
    counted.calls.length = 0; // the cache's script definitions at construction are no calls to Redis
    return { access, redis: counted.redis, redisCalls: counted.calls, platform, published };
  }

  it('refuses a bad token with 401 before any Redis, platform or SNS call', async () => {
    const { access, redisCalls, platform, published } = await core();
    const expired = await token({ exp: Math.floor(Date.now() / 1000) - 600 });
    for (const headers of [{ authorization: `Bearer ${expired}` }, { authorization: 'Bearer x.y.z' }, {}]) {
      expect(await access.decide(gatewayRequest({ headers, multiValueHeaders: {} }))).toEqual({
        effect: 'unauthorized',
      });
    }
    expect(redisCalls).toEqual([]);
    expect(platform.calls).toEqual([]);
    expect(published).toEqual([]);
  });

  it('refuses a token issued before its application lost a key, verified before or not, with one GET more', async () => {
    const { access, redis, redisCalls, platform } = await core();
    const issuedAt = Math.floor(Date.now() / 1000) - 10;
    const before = await token({ iat: issuedAt });
    const event = (jwt: string) =>
      gatewayRequest({ headers: { Authorization: `Bearer ${jwt}` }, multiValueHeaders: {} });
    expect(await access.decide(event(before))).toMatchObject({ effect: 'allow' });
    expect(redisCalls.filter((call) => call === 'get')).toHaveLength(1);

    const notBefore = credentialKeys(
      SERVICE,
      credentialIdOf(SERVICE, { kind: 'app_id', appId: 'app-1' }),
    ).tokensNotBefore;
    await redis.set(notBefore, String((issuedAt + 5) * 1000));
    const platformCalls = platform.calls.length;
    expect(await access.decide(event(before))).toEqual({ effect: 'unauthorized' });
    expect(await access.decide(event(await token({ iat: issuedAt - 600 })))).toEqual({
      effect: 'unauthorized',
    });
    expect(await access.decide(event(await token({ iat: issuedAt + 5 })))).toMatchObject({ effect: 'allow' });
    expect(platform.calls.length).toBe(platformCalls);
  });

  it('user keys and app ids never read a token not-before', async () => {
    const counted = countingRedis(new RedisMock() as unknown as Redis);
    const access = createAccessAuthorizer({
      config: accessConfig({ credentialMode: 'user_key' }),
      redis: counted.redis,
      publisher: { publish: async () => undefined },
      platform: new FakePlatform(),
      now: Date.now,
      logger: new CapturingLogger(),
      metrics: new CapturingMetrics(),
    });
    await access.decide(gatewayRequest());
    expect(counted.calls).not.toContain('get');
  });

  it('turns a valid token into the app id without a key: authrep with app_id only', async () => {
    const { access, platform } = await core();
    const decision = await access.decide(
      gatewayRequest({ headers: { Authorization: `Bearer ${await token()}` }, multiValueHeaders: {} }),
    );
    expect(decision).toMatchObject({
      effect: 'allow',
      applicationId: 'app-1',
      credentialId: credentialIdOf(SERVICE, { kind: 'app_id', appId: 'app-1' }),
    });
    expect(platform.calls).toEqual([
      { op: 'authrep', credential: { kind: 'app_id', appId: 'app-1' }, usage: { get_word: 1 } },
    ]);
  });
});
