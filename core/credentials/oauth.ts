/**
 * OAuth 2.0 access tokens (RFC 6750): `Authorization: Bearer <token>` or the `access_token` query
 * parameter, never both. The token is a JWT verified here with no network call on the hot path: the
 * issuer's keys (JWKS) are fetched once per container and again only for a key id they do not hold, at
 * most once a minute. A valid token's client id is the platform application id: from there the call is an
 * `app_id` credential without a key, and the existing path (cache, limits, reports) runs unchanged.
 * jose is loaded on the first token: a deployment in a key mode never loads it, and its module init
 * stays small (issue 23).
 */
import type { JWTPayload, JWTVerifyGetKey } from 'jose';
import { ConfigError, jwksUrlOf } from '../settings/config';
import type { CredentialExtraction, CredentialScheme, CredentialSettings } from './scheme';
import type { TokensNotBefore } from './token-revocation';
import {
  type CredentialRequest,
  checkedValue,
  singleHeaderValue,
  singleQueryValue,
  type ValueRead,
} from './values';
import { type KnownToken, tokenDigest, VerifiedTokens } from './verified-tokens';

export const AUTHORIZATION_HEADER = 'authorization';
export const ACCESS_TOKEN_PARAMETER = 'access_token';

/** Longest token accepted: a JWT with a few claims is well under 2 KB; API Gateway caps headers at 10 KB. */
export const MAX_TOKEN_BYTES = 8192;

/** The clock skew tolerated on `exp` and `nbf`. */
export const TOKEN_CLOCK_TOLERANCE_SECONDS = 60;

/** A JWKS is fetched again for an unknown key id at most this often. */
export const JWKS_REFRESH_COOLDOWN_MS = 60_000;

/** Keys are fetched again after this long even when no unknown key id asked (a withdrawn key stops working). */
export const JWKS_MAX_AGE_MS = 10 * 60_000;

/** Three base64url parts: what a JWS compact serialization looks like before any decoding. */
const COMPACT_JWS = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/;

/** RFC 7235: the scheme name is case-insensitive; RFC 6750 2.1: one or more spaces, then the token. */
const BEARER = /^bearer +(\S+)$/i;

type TokenSettings = Pick<
  CredentialSettings,
  'oidcIssuer' | 'oidcJwksUrl' | 'oidcAudience' | 'oidcAlgorithms' | 'oidcClientIdClaim' | 'platformTimeoutMs'
>;

/** A token as it travels: a compact JWS of sane size, before any verification. */
function tokenShape(value: string | undefined): ValueRead {
  const checked = checkedValue(value, MAX_TOKEN_BYTES);
  if (!checked.ok || checked.value === undefined) return checked;
  return COMPACT_JWS.test(checked.value) ? checked : { ok: false, reason: 'invalid_token' };
}

/** The Authorization header read whole (its inner space is the scheme's), then its Bearer token. */
function bearerHeaderValue(value: string | undefined): ValueRead {
  if (value === undefined) return { ok: true, value: undefined };
  const match = BEARER.exec(value.trim());
  return match ? tokenShape(match[1]) : { ok: false, reason: 'invalid_token' };
}

type Refusal = Extract<CredentialExtraction, { ok: false }>;

/** The raw token from the header or the query string; both at once is refused as several values. */
export function bearerToken(
  request: CredentialRequest,
): Refusal | { readonly ok: true; readonly token: string } {
  const header = singleHeaderValue(AUTHORIZATION_HEADER, request, bearerHeaderValue);
  if (!header.ok) return { ok: false, header: AUTHORIZATION_HEADER, reason: header.reason };
  const query = singleQueryValue(ACCESS_TOKEN_PARAMETER, request, tokenShape);
  if (!query.ok) return { ok: false, header: ACCESS_TOKEN_PARAMETER, reason: query.reason };
  if (header.value !== undefined && query.value !== undefined) {
    return { ok: false, header: ACCESS_TOKEN_PARAMETER, reason: 'several_values' };
  }
  const token = header.value ?? query.value;
  if (token === undefined) return { ok: false, header: AUTHORIZATION_HEADER, reason: 'missing' };
  return { ok: true, token };
}

/** The issuer's keys could not be had: no token can be judged, which is not the consumer's fault. */
export class TokenKeysUnavailableError extends Error {
  constructor(cause: unknown) {
    super(
      `the token issuer's keys are unavailable: ${cause instanceof Error ? cause.message : String(cause)}`,
    );
    this.name = 'TokenKeysUnavailableError';
  }
}

type Jose = typeof import('jose');

function jose(): Promise<Jose> {
  return import('jose');
}

/** jose's errors that mean the key set could not be fetched or read, not that the token is bad. */
function keysUnavailable(error: unknown, errors: Jose['errors']): boolean {
  if (!(error instanceof errors.JOSEError)) return true;
  return (
    error instanceof errors.JWKSTimeout ||
    error instanceof errors.JWKSInvalid ||
    error.code === 'ERR_JOSE_GENERIC'
  );
}

/** The issuer's JWKS over HTTPS, with the fetch timeout, refresh cooldown and maximum age above. */
export function remoteTokenKeys(
  settings: Pick<TokenSettings, 'oidcIssuer' | 'oidcJwksUrl' | 'platformTimeoutMs'>,
): JWTVerifyGetKey {
  const url = jwksUrlOf(settings);
  if (url === undefined) throw new ConfigError('oidcIssuer', 'is required in oauth mode');
  let keys: Promise<JWTVerifyGetKey> | undefined;
  return async (protectedHeader, token) => {
    keys ??= jose().then(({ createRemoteJWKSet }) =>
      createRemoteJWKSet(new URL(url), {
        timeoutDuration: settings.platformTimeoutMs,
        cooldownDuration: JWKS_REFRESH_COOLDOWN_MS,
        cacheMaxAge: JWKS_MAX_AGE_MS,
      }),
    );
    return (await keys)(protectedHeader, token);
  };
}

export type TokenVerdict = ({ readonly ok: true } & KnownToken) | { readonly ok: false };

/** Verifies access tokens against one issuer: signature, algorithm, issuer, audience, lifetime, client id. */
export class AccessTokenVerifier {
  private readonly clientIdClaims: readonly string[];
  private readonly verified = new VerifiedTokens();

  constructor(
    private readonly settings: TokenSettings,
    private readonly keys: JWTVerifyGetKey = remoteTokenKeys(settings),
  ) {
    if (settings.oidcIssuer === undefined) throw new ConfigError('oidcIssuer', 'is required in oauth mode');
    this.clientIdClaims = settings.oidcClientIdClaim ? [settings.oidcClientIdClaim] : ['client_id', 'azp'];
  }

  /** The token's client id when it is valid; throws TokenKeysUnavailableError when keys cannot be had. */
  async verify(token: string): Promise<TokenVerdict> {
    const digest = tokenDigest(token);
    const now = Date.now();
    const kept = this.verified.known(digest, now);
    if (kept !== undefined) return { ok: true, ...kept };
    const { jwtVerify, errors } = await jose();
    let payload: JWTPayload;
    try {
      ({ payload } = await jwtVerify(token, this.keys, {
        issuer: this.settings.oidcIssuer,
        audience: this.settings.oidcAudience ?? this.settings.oidcIssuer,
        algorithms: [...this.settings.oidcAlgorithms],
        clockTolerance: TOKEN_CLOCK_TOLERANCE_SECONDS,
        requiredClaims: ['exp'],
      }));
    } catch (error) {
      if (keysUnavailable(error, errors)) throw new TokenKeysUnavailableError(error);
      return { ok: false };
    }
    const clientId = this.clientIdOf(payload);
    if (clientId === undefined) return { ok: false };
    const known = { clientId, ...(typeof payload.iat === 'number' && { issuedAt: payload.iat }) };
    // Until it expires, and no longer than the keys are kept: a key withdrawn from the JWKS stops
    // its tokens within the same bound either way.
    this.verified.keep(digest, known, Math.min(Number(payload.exp) * 1000, now + JWKS_MAX_AGE_MS));
    return { ok: true, ...known };
  }

  private clientIdOf(payload: JWTPayload): string | undefined {
    for (const claim of this.clientIdClaims) {
      const value = payload[claim];
      if (value === undefined) continue;
      const checked = typeof value === 'string' ? checkedValue(value) : undefined;
      return checked?.ok ? checked.value : undefined;
    }
    return undefined;
  }
}

/**
 * The oauth reader over a verifier: the token read, verified, and turned into an app id without a key;
 * with `notBefore`, a token its application's key deletion or suspension came after is refused too.
 */
export function tokenReader(verifier: AccessTokenVerifier, notBefore?: TokensNotBefore) {
  return async (request: CredentialRequest): Promise<CredentialExtraction> => {
    const found = bearerToken(request);
    if (!found.ok) return found;
    const verdict = await verifier.verify(found.token);
    if (!verdict.ok || (await notBefore?.refuses(verdict.clientId, verdict.issuedAt))) {
      return { ok: false, header: AUTHORIZATION_HEADER, reason: 'invalid_token' };
    }
    return { ok: true, credential: { kind: 'app_id', appId: verdict.clientId } };
  };
}

/** RFC 6750 3: the challenge of a 401 for a missing or refused token. */
export function bearerChallenge(settings: Pick<CredentialSettings, 'oidcIssuer'>): string {
  const realm = settings.oidcIssuer === undefined ? '' : `realm="${settings.oidcIssuer}", `;
  return `Bearer ${realm}error="invalid_token"`;
}

export const oauthScheme: CredentialScheme = {
  reader: (settings, ports) => tokenReader(new AccessTokenVerifier(settings), ports?.tokensNotBefore),
  // Neither place alone is required, and API Gateway requires every identity source it lists.
  identitySources: () => [],
  hint: () =>
    `send an access token in the Authorization header (Bearer) or in the ${ACCESS_TOKEN_PARAMETER} query parameter, not both`,
  example: () => ({ headers: [], query: [[ACCESS_TOKEN_PARAMETER, '$ACCESS_TOKEN']] }),
  challenge: bearerChallenge,
};
