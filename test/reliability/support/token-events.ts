/**
 * Generated REQUEST authorizer events for an oauth-mode authorizer: `Authorization` header values and
 * `access_token` query values, genuine or hostile. As for keys, every event carries the category its
 * token was generated as (RFC 6750 and the issuer's rules), never one asked of the product:
 * - known: a token the issuer signed for an active application, sent as RFC 6750 allows;
 * - suspended: a genuine token of a suspended application (403 from the platform's answer);
 * - unknown: a genuine token whose client id the platform never knew;
 * - malformed: anything else (a forged, expired or misaddressed token, a bad header, two tokens...): a
 *   401 before any Redis, platform or SNS call.
 */
import { randomBytes } from 'node:crypto';
import fc from 'fast-check';
import {
  type CryptoKey,
  exportJWK,
  exportSPKI,
  generateKeyPair,
  importJWK,
  type JWTPayload,
  SignJWT,
  UnsecuredJWT,
} from 'jose';
import {
  CONTROL,
  type CredentialCase,
  type CredentialHeaders,
  type CredentialQuery,
  eventsCarrying,
  type GeneratedEvent,
  type KeyCategory,
  NON_ASCII,
  placed,
  placement,
  spliced,
} from './request-events';
import type { TokenIssuer } from './token-issuer';

/** Tokens made once before the run (signing is asynchronous; the generators draw from these). */
export interface TokenMaterial {
  /** Genuine tokens of active applications: issued by the endpoint, plus valid odd shapes of claims. */
  readonly active: readonly string[];
  readonly suspended: readonly string[];
  readonly unknownClient: readonly string[];
  /** Tokens that must be refused on sight, with what is wrong with each. */
  readonly forged: readonly { readonly flaw: string; readonly token: string }[];
}

export interface TokenApplications {
  readonly active: readonly { readonly id: string; readonly secret: string }[];
  readonly suspended: readonly { readonly id: string }[];
}

const seconds = () => Math.floor(Date.now() / 1000);

/** The token endpoint's tokens for the active applications, and genuine and forged tokens around them. */
export async function tokenMaterial(issuer: TokenIssuer, apps: TokenApplications): Promise<TokenMaterial> {
  const issued: string[] = [];
  for (const [i, app] of apps.active.entries()) {
    const answer = await issuer.requestToken(
      app.id,
      app.secret,
      (['query', 'body', 'basic'] as const)[i % 3],
    );
    if (!answer.accessToken) throw new Error(`no token for ${app.id}: ${answer.status} ${answer.body}`);
    issued.push(answer.accessToken);
  }
  const [first] = apps.active;
  if (!first || issued.length < 2) throw new Error('token material needs two active applications');
  const now = seconds();
  const claims = (clientId: string, extra: JWTPayload = {}): JWTPayload => ({
    iss: issuer.url,
    aud: issuer.url,
    iat: now,
    exp: now + 3600,
    client_id: clientId,
    ...extra,
  });
  const genuine = (extra: JWTPayload = {}, header: Record<string, unknown> = {}, clientId = first.id) =>
    issuer.sign(claims(clientId, extra), header);
  const issuerKid = await issuer.signer.keyId();
  const other = await generateKeyPair('ES256', { extractable: true });
  const rsa = await generateKeyPair('RS256', { extractable: true });
  const issuerJwk = await issuer.signer.publicJwk();
  const signedBy = (key: CryptoKey | Uint8Array, alg: string, header: Record<string, unknown> = {}) =>
    new SignJWT(claims(first.id)).setProtectedHeader({ alg, kid: issuerKid, ...header }).sign(key);
  const [headerPart, payloadPart, signaturePart] = (issued[0] as string).split('.');
  const [, otherPayload, otherSignature] = (issued[1] as string).split('.');
  const unsecured = new UnsecuredJWT(claims(first.id)).encode();

  const forged: [string, string | Promise<string>][] = [
    ['another key under the issuer kid', signedBy(other.privateKey, 'ES256')],
    [
      'another key under an unknown kid',
      signedBy(other.privateKey, 'ES256', { kid: randomBytes(8).toString('hex') }),
    ],
    ['RS256 by a key the issuer never published', signedBy(rsa.privateKey, 'RS256')],
    [
      'another key embedded in the header',
      signedBy(other.privateKey, 'ES256', { jwk: await exportJWK(other.publicKey) }),
    ],
    ['alg none, empty signature', unsecured],
    ['alg none with a signature', `${unsecured}${signaturePart}`],
    [
      'HS256 keyed with the public JWK',
      signedBy(new TextEncoder().encode(JSON.stringify(issuerJwk)), 'HS256'),
    ],
    [
      'HS256 keyed with the public key PEM',
      signedBy(
        new TextEncoder().encode(
          await exportSPKI((await importJWK(issuerJwk, 'ES256', { extractable: true })) as CryptoKey),
        ),
        'HS256',
      ),
    ],
    ['ES384 header over an ES256 signature', genuine({}, { alg: 'ES384' })],
    ['an unknown critical header', genuine({}, { crit: ['x-never'], 'x-never': 1 })],
    ['expired beyond the skew', genuine({ iat: now - 7200, exp: now - 120 })],
    ['expired long ago', genuine({ iat: now - 90_000, exp: now - 86_400 })],
    ['not valid before beyond the skew', genuine({ nbf: now + 600 })],
    ['no exp', genuine({ exp: undefined })],
    ['another issuer', genuine({ iss: 'https://issuer.invalid' })],
    ['no issuer', genuine({ iss: undefined })],
    ['another audience', genuine({ aud: 'https://api.invalid' })],
    ['no client id claim', genuine({ client_id: undefined, sub: first.id })],
    ['a client id that is a number', genuine({ client_id: 42 })],
    ['a client id with a space', genuine({}, {}, `${first.id} x`)],
    ['a client id with a comma', genuine({}, {}, `${first.id},${first.id}`)],
    ['a client id too long', genuine({}, {}, 'c'.repeat(300))],
    ['a client id in unicode', genuine({}, {}, `${first.id}é`)],
    ['the payload of another token', `${headerPart}.${otherPayload}.${signaturePart}`],
    ['the signature of another token', `${headerPart}.${payloadPart}.${otherSignature}`],
    ['four segments', `${issued[0]}.${signaturePart}`],
    ['padded base64', `${issued[0]}=`],
  ];
  return {
    active: [
      ...issued,
      // Valid though unusual: not-before within the 60 s skew, aud as a list, the client id as azp only.
      await genuine({ nbf: now + 30 }),
      await genuine({ aud: ['https://other.example', issuer.url] }),
      await genuine({ client_id: undefined, azp: first.id }),
    ],
    suspended: await Promise.all(apps.suspended.map((app) => genuine({}, {}, app.id))),
    unknownClient: await Promise.all(
      Array.from({ length: 5 }, (_, i) =>
        genuine({}, {}, `ghost-app-${i}-${randomBytes(4).toString('hex')}`),
      ),
    ),
    forged: await Promise.all(forged.map(async ([flaw, token]) => ({ flaw, token: await token }))),
  };
}

/** A character of the token changed, never the signature's last one (its spare bits may not count). */
function alteredCharacter(token: string, at: number, by: string): string | undefined {
  const lastSignatureChar = token.length - 1;
  const index = at % lastSignatureChar;
  if (token[index] === '.' || token[index] === by) return undefined;
  return token.slice(0, index) + by + token.slice(index + 1);
}

const BASE64URL_CHAR = fc.constantFrom(
  ...'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_'.split(''),
);

/**
 * Leaves out values whitespace surrounds: a header value's surrounding whitespace is not part of it
 * (HTTP strips it), so such a token in a header would be a genuine one.
 */
function untrimmable(value: fc.Arbitrary<string>): fc.Arbitrary<string> {
  return value.filter((text) => text.trim() === text);
}

/** Whitespace RFC 6750 does not allow between `Bearer` and the token (it allows spaces only). */
const NOT_A_SPACE = fc.constantFrom('\t', '\u00a0', '\u2028', '\u3000', '\r\n', '\v');

/** Token values that must be refused whatever header carries them. */
function badTokens(material: TokenMaterial): fc.Arbitrary<{ flaw: string; token: string }> {
  const genuine = fc.constantFrom(...material.active);
  const flawed = (flaw: string, token: fc.Arbitrary<string>) => token.map((t) => ({ flaw, token: t }));
  return fc.oneof(
    { weight: 6, arbitrary: fc.constantFrom(...material.forged) },
    {
      weight: 4,
      arbitrary: flawed(
        'one character changed',
        fc
          .tuple(genuine, fc.nat(), BASE64URL_CHAR)
          .map(([token, at, by]) => alteredCharacter(token, at, by))
          .filter((token): token is string => token !== undefined),
      ),
    },
    {
      weight: 2,
      arbitrary: flawed(
        'cut short',
        fc.tuple(genuine, fc.nat()).map(([token, at]) => token.slice(0, at % (token.length - 1))),
      ),
    },
    {
      weight: 2,
      arbitrary: flawed(
        'control characters',
        untrimmable(spliced(genuine, fc.string({ unit: CONTROL, minLength: 1, maxLength: 3 }))),
      ),
    },
    { weight: 2, arbitrary: flawed('unicode', untrimmable(spliced(genuine, NON_ASCII))) },
    {
      weight: 1,
      arbitrary: flawed(
        'comma-joined',
        fc.tuple(genuine, genuine).map(([a, b]) => `${a},${b}`),
      ),
    },
    {
      weight: 2,
      arbitrary: flawed(
        'huge',
        fc
          .tuple(genuine, fc.integer({ min: 8 * 1024, max: 48 * 1024 }))
          .map(([token, size]) => token.replace('.', `${'A'.repeat(size)}.`)),
      ),
    },
    {
      weight: 2,
      arbitrary: flawed(
        'garbage',
        fc.oneof(
          fc.string({ minLength: 1, maxLength: 200 }),
          fc.stringMatching(/^[A-Za-z0-9_-]{1,40}\.[A-Za-z0-9_-]{1,40}\.[A-Za-z0-9_-]{1,90}$/),
          fc.constantFrom('a.b.c', '..', '.', 'null', 'undefined', '{}', 'eyJ', 'eyJhbGciOiJub25lIn0..'),
        ),
      ),
    },
  );
}

const AUTHORIZATION = fc.constantFrom('Authorization', 'authorization', 'AUTHORIZATION', 'aUtHoRiZaTiOn');
/** RFC 7235: the scheme name is case-insensitive; RFC 6750: one or more spaces before the token. */
const BEARER_PREFIX = fc.constantFrom('Bearer ', 'bearer ', 'BEARER ', 'Bearer   ', 'bEaReR  ');

function inQuery(token: string, form: 'single' | 'multi' | 'both'): CredentialQuery {
  return {
    ...(form !== 'multi' && { queryStringParameters: { access_token: token } }),
    ...(form !== 'single' && { multiValueQueryStringParameters: { access_token: [token] } }),
  };
}

const QUERY_FORM = fc.constantFrom<'single' | 'multi' | 'both'>('single', 'multi', 'both');
const NO_HEADERS: CredentialHeaders = { headers: {}, multiValueHeaders: {} };

/** A token sent as RFC 6750 allows: a Bearer header (any spelling) or the access_token query parameter. */
function sent(category: KeyCategory, token: fc.Arbitrary<string>): fc.Arbitrary<CredentialCase> {
  const header = fc.tuple(token, BEARER_PREFIX, AUTHORIZATION, placement).map(
    ([t, prefix, name, where]): CredentialCase => ({
      category,
      key: t,
      headers: placed(name, `${prefix}${t}`, where),
    }),
  );
  const query = fc
    .tuple(token, QUERY_FORM)
    .map(([t, form]): CredentialCase => ({ category, key: t, headers: NO_HEADERS, query: inQuery(t, form) }));
  return fc.oneof({ weight: 2, arbitrary: header }, query);
}

function malformedCase(flaw: string, headers: CredentialHeaders, query?: CredentialQuery): CredentialCase {
  return { category: 'malformed', flaw, headers, ...(query && { query }) };
}

/** Authorization values that carry no usable Bearer token, whatever the token. */
function badAuthorization(token: string): fc.Arbitrary<[string, string]> {
  const basic = `Basic ${Buffer.from(`app-0:${token.slice(0, 12)}`).toString('base64')}`;
  return fc.oneof(
    fc.constantFrom<[string, string]>(
      ['Bearer alone', 'Bearer'],
      ['Bearer and a space', 'Bearer '],
      ['empty', ''],
      ['spaces only', '   '],
      ['no scheme', token],
      ['Bearer glued to the token', `Bearer${token}`],
      ['a tab after Bearer', `Bearer\t${token}`],
      ['Bearer twice', `Bearer Bearer ${token}`],
      ['two tokens after Bearer', `Bearer ${token} ${token}`],
      ['two Bearer credentials', `Bearer ${token}, Bearer ${token}`],
      ['Basic', basic],
      ['Token scheme', `Token ${token}`],
      ['Digest scheme', `Digest username="app-0", response="${token.slice(0, 16)}"`],
      ['JWT scheme', `JWT ${token}`],
      ['Bearer in quotes', `Bearer "${token}"`],
      ['the token as a parameter', `Bearer token=${token}`],
    ),
    untrimmable(spliced(fc.constant(`Bearer ${token}`), NOT_A_SPACE)).map((value): [string, string] => [
      'whitespace other than spaces',
      value,
    ]),
  );
}

function tokenCases(material: TokenMaterial): fc.Arbitrary<CredentialCase> {
  const active = fc.constantFrom(...material.active);
  const anyGenuine = fc.constantFrom(...material.active, ...material.suspended, ...material.unknownClient);
  return fc.oneof(
    { weight: 14, arbitrary: sent('known', active) },
    { weight: 3, arbitrary: sent('suspended', fc.constantFrom(...material.suspended)) },
    { weight: 3, arbitrary: sent('unknown', fc.constantFrom(...material.unknownClient)) },
    {
      weight: 14,
      arbitrary: badTokens(material).chain((bad) =>
        sent('malformed', fc.constant(bad.token)).map(
          ({ key: _sentToken, ...rest }): CredentialCase => ({ ...rest, flaw: bad.flaw }),
        ),
      ),
    },
    {
      weight: 8,
      arbitrary: fc
        .tuple(anyGenuine, AUTHORIZATION, placement)
        .chain(([token, name, where]) =>
          badAuthorization(token).map(([flaw, value]) => malformedCase(flaw, placed(name, value, where))),
        ),
    },
    {
      weight: 3,
      arbitrary: fc
        .tuple(active, active, AUTHORIZATION, QUERY_FORM)
        .map(([a, b, name, form]) =>
          malformedCase(
            'a token in the header and one in the query',
            placed(name, `Bearer ${a}`, 'both'),
            inQuery(b, form),
          ),
        ),
    },
    {
      weight: 2,
      arbitrary: fc.tuple(active, active).map(([a, b]) =>
        malformedCase('two Authorization headers', {
          headers: {},
          multiValueHeaders: { Authorization: [`Bearer ${a}`, `Bearer ${b}`] },
        }),
      ),
    },
    {
      weight: 2,
      arbitrary: fc.tuple(active, active).map(([a, b]) =>
        malformedCase('Authorization under two spellings', {
          headers: { Authorization: `Bearer ${a}`, authorization: `Bearer ${b}` },
          multiValueHeaders: {},
        }),
      ),
    },
    {
      weight: 2,
      arbitrary: fc.tuple(active, active).map(([a, b]) =>
        malformedCase('access_token repeated', NO_HEADERS, {
          queryStringParameters: { access_token: b },
          multiValueQueryStringParameters: { access_token: [a, b] },
        }),
      ),
    },
    {
      weight: 2,
      arbitrary: fc
        .tuple(
          active,
          fc.constantFrom('Access_Token', 'ACCESS_TOKEN', 'access-token', 'token', 'accessToken'),
        )
        .map(([token, name]) =>
          malformedCase('the token under another query name', NO_HEADERS, {
            queryStringParameters: { [name]: token },
          }),
        ),
    },
    {
      weight: 1,
      arbitrary: fc.constant(malformedCase('an empty access_token', NO_HEADERS, inQuery('', 'both'))),
    },
    {
      weight: 1,
      arbitrary: active.map((token) =>
        malformedCase('the token in the apikey header', placed('apikey', token, 'both')),
      ),
    },
    { weight: 1, arbitrary: fc.constant(malformedCase('no credential at all', NO_HEADERS)) },
  );
}

/** Events of an oauth-mode API: on the mapped route, or (category anyRoute) an odd one. */
export function tokenEvents(material: TokenMaterial): fc.Arbitrary<GeneratedEvent> {
  return eventsCarrying(tokenCases(material));
}
