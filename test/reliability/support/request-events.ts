/**
 * Generated API Gateway REQUEST authorizer events for the fuzz test. Every event carries the category
 * its credential was generated from, so the test judges the answer by what was generated, never by
 * asking the product's own credential rules.
 */
import type { APIGatewayRequestAuthorizerEvent } from 'aws-lambda';
import fc from 'fast-check';
import { requestAuthorizerEvent } from '../../../local/authorizer-event';

const API_ID = 'fuzzapi123';
const STAGE = 'test';
/** The route the fuzz config maps (`get_word`); the only one a known key is expected to pass. */
const MAPPED_RESOURCE = '/v1/words/{word}.json';
/** The longest credential the design accepts, in bytes. */
const MAX_KEY_BYTES = 256;

/**
 * malformed: the design refuses it with 401 before any Redis, platform or SNS call (missing, empty,
 * too long, bad characters, several values). unknown: well formed, not issued by the platform.
 * known: issued to an active application, on the mapped route. suspended: issued to a suspended one.
 * anyRoute: an issued or unknown key on an odd path or method (no expectation but the invariants).
 */
export type KeyCategory = 'malformed' | 'unknown' | 'known' | 'suspended' | 'anyRoute';

export interface GeneratedEvent {
  readonly category: KeyCategory;
  /** What made the key malformed, for the failure message. */
  readonly flaw?: string;
  /** The single credential value the event carries, when it carries exactly one. */
  readonly key?: string;
  readonly event: APIGatewayRequestAuthorizerEvent;
}

export interface FuzzKeys {
  readonly active: readonly string[];
  readonly suspended: readonly string[];
  /** Unknown but well-formed keys that come back, so the negative cache gets exercised. */
  readonly recurringUnknown: readonly string[];
}

export type KeyPlacement = 'headers' | 'multi' | 'both';

export interface CredentialHeaders {
  readonly headers: Record<string, string>;
  readonly multiValueHeaders: Record<string, string[]>;
}

const PRINTABLE = fc.constantFrom(
  ...Array.from({ length: 0x7e - 0x21 + 1 }, (_, i) => String.fromCharCode(0x21 + i)).filter(
    (c) => c !== ',',
  ),
);
export const CONTROL = fc.constantFrom(
  ...Array.from({ length: 32 }, (_, i) => String.fromCharCode(i)),
  '\x7f',
  '\x80',
  '\xa0',
  '\xff',
);
const WHITESPACE = fc.constantFrom(' ', '\t', '\u00a0', '\u2028', '\u3000');
export const NON_ASCII = fc.oneof(
  fc
    .string({ unit: 'grapheme', minLength: 1, maxLength: 4 })
    .filter((s) => [...s].some((c) => (c.codePointAt(0) ?? 0) > 0x7f)),
  fc.constantFrom('é', 'ß', 'Ω', 'ключ', '鍵', '🔑', '\u200b', '\ufeff', '\ud800', 'e\u0301'),
);

function printableKey(minLength: number, maxLength: number): fc.Arbitrary<string> {
  return fc.string({ unit: PRINTABLE, minLength, maxLength });
}

/** Inserts `inner` somewhere in `base`. */
export function spliced(base: fc.Arbitrary<string>, inner: fc.Arbitrary<string>): fc.Arbitrary<string> {
  return fc.tuple(base, inner, fc.double({ min: 0, max: 1, noNaN: true })).map(([text, piece, at]) => {
    const index = Math.floor(at * (text.length + 1));
    return text.slice(0, index) + piece + text.slice(index);
  });
}

const HEADER_SPELLING = fc.constantFrom('apikey', 'APIKEY', 'ApiKey', 'apiKey', 'aPiKeY');

export function placed(name: string, value: string, placement: KeyPlacement): CredentialHeaders {
  return {
    headers: placement === 'multi' ? {} : { [name]: value },
    multiValueHeaders: placement === 'headers' ? {} : { [name]: [value] },
  };
}

export const placement = fc.constantFrom<KeyPlacement>('headers', 'multi', 'both');

function singleKey(value: fc.Arbitrary<string>): fc.Arbitrary<{ key: string; headers: CredentialHeaders }> {
  return fc
    .tuple(value, HEADER_SPELLING, placement)
    .map(([key, name, where]) => ({ key, headers: placed(name, key, where) }));
}

/** Query parameters a credential travels in (API Gateway fills both maps). */
export interface CredentialQuery {
  readonly queryStringParameters?: Record<string, string>;
  readonly multiValueQueryStringParameters?: Record<string, string[]>;
}

/** One generated credential: where it travels, and what it was generated as. */
export interface CredentialCase {
  readonly category: KeyCategory;
  readonly flaw?: string;
  readonly key?: string;
  readonly headers: CredentialHeaders;
  readonly query?: CredentialQuery;
}

function malformed(flaw: string, headers: fc.Arbitrary<CredentialHeaders>): fc.Arbitrary<CredentialCase> {
  return headers.map((h) => ({ category: 'malformed' as const, flaw, headers: h }));
}

function malformedValue(flaw: string, value: fc.Arbitrary<string>): fc.Arbitrary<CredentialCase> {
  return malformed(
    flaw,
    singleKey(value).map((k) => k.headers),
  );
}

function credentialCases(keys: FuzzKeys): fc.Arbitrary<CredentialCase> {
  const issued = fc.constantFrom(...keys.active, ...keys.suspended);
  const anyWellFormed = fc.oneof(issued, fc.constantFrom(...keys.recurringUnknown), printableKey(1, 64));
  const everyIssued = new Set([...keys.active, ...keys.suspended]);
  const notIssued = (key: string) => !everyIssued.has(key);
  const twoValues = fc.tuple(anyWellFormed, anyWellFormed);
  const wellFormed = (category: KeyCategory, value: fc.Arbitrary<string>) =>
    singleKey(value).map((k): CredentialCase => ({ category, key: k.key, headers: k.headers }));

  return fc.oneof(
    { weight: 14, arbitrary: wellFormed('known', fc.constantFrom(...keys.active)) },
    { weight: 3, arbitrary: wellFormed('suspended', fc.constantFrom(...keys.suspended)) },
    { weight: 6, arbitrary: wellFormed('unknown', fc.constantFrom(...keys.recurringUnknown)) },
    { weight: 4, arbitrary: wellFormed('unknown', printableKey(1, MAX_KEY_BYTES).filter(notIssued)) },
    {
      weight: 3,
      // An issued key off by one letter's case or one extra character is a different credential.
      arbitrary: wellFormed(
        'unknown',
        fc
          .tuple(fc.constantFrom(...keys.active), fc.nat(), PRINTABLE)
          .map(([key, at, extra]) =>
            at % 2 === 0
              ? key.toUpperCase()
              : key.slice(0, at % (key.length + 1)) + extra + key.slice(at % (key.length + 1)),
          )
          .filter(notIssued),
      ),
    },
    {
      weight: 3,
      arbitrary: fc.tuple(fc.constantFrom<KeyPlacement>('headers', 'both'), HEADER_SPELLING).map(
        ([where, name]): CredentialCase => ({
          category: 'malformed',
          flaw: 'missing',
          headers: placed(`x-${name}`, 'decoy', where),
        }),
      ),
    },
    {
      weight: 1,
      arbitrary: malformed('no headers at all', fc.constant({ headers: {}, multiValueHeaders: {} })),
    },
    { weight: 2, arbitrary: malformedValue('empty', fc.constant('')) },
    { weight: 3, arbitrary: malformedValue('too long', printableKey(MAX_KEY_BYTES + 1, 4096)) },
    {
      weight: 2,
      // Few characters, but more than 256 bytes in UTF-8.
      arbitrary: malformedValue(
        'too long (multi-byte)',
        fc.integer({ min: 86, max: 200 }).map((n) => '鍵'.repeat(n)),
      ),
    },
    {
      weight: 4,
      arbitrary: malformedValue(
        'binary',
        spliced(anyWellFormed, fc.string({ unit: CONTROL, minLength: 1, maxLength: 4 })),
      ),
    },
    { weight: 4, arbitrary: malformedValue('unicode', spliced(anyWellFormed, NON_ASCII)) },
    {
      weight: 3,
      arbitrary: malformedValue('whitespace', spliced(fc.constantFrom(...keys.active), WHITESPACE)),
    },
    {
      weight: 3,
      arbitrary: malformedValue(
        'comma-joined values',
        twoValues.map(([a, b]) => `${a},${b}`),
      ),
    },
    {
      weight: 4,
      arbitrary: malformed(
        'two values in multiValueHeaders',
        fc.tuple(twoValues, HEADER_SPELLING, fc.boolean()).map(([[a, b], name, alsoSingle]) => ({
          headers: alsoSingle ? { [name]: b } : {},
          multiValueHeaders: { [name]: [a, b] },
        })),
      ),
    },
    {
      weight: 4,
      arbitrary: malformed(
        'two header names differing in case',
        fc
          .tuple(twoValues, fc.constantFrom<KeyPlacement>('headers', 'multi', 'both'))
          .map(([[a, b], where]) => {
            const first = placed('apikey', a, where);
            const second = placed('APIKEY', b, where);
            return {
              headers: { ...first.headers, ...second.headers },
              multiValueHeaders: { ...first.multiValueHeaders, ...second.multiValueHeaders },
            };
          }),
      ),
    },
    {
      weight: 2,
      arbitrary: malformed(
        'headers and multiValueHeaders disagree',
        fc
          .tuple(twoValues, HEADER_SPELLING)
          .filter(([[a, b]]) => a !== b)
          .map(([[a, b], name]) => ({ headers: { [name]: a }, multiValueHeaders: { [name]: [b] } })),
      ),
    },
  );
}

const ODD_METHOD = fc.oneof(
  { weight: 3, arbitrary: fc.constant('GET') },
  fc.constantFrom(
    'GET',
    'get',
    'POST',
    'PUT',
    'DELETE',
    'PATCH',
    'HEAD',
    'OPTIONS',
    'ANY',
    'FOO',
    '',
    'G E T',
  ),
  fc.string({ unit: 'grapheme', maxLength: 12 }),
);

/** Segments the `{word}` placeholder accepts (RFC 3986 pchar), including the ones a key scheme fears. */
const ODD_WORD = fc.string({
  unit: fc.constantFrom(..."aZ09-._~%!$&'()*+,;=@:{}".split('')),
  minLength: 1,
  maxLength: 40,
});

const ODD_PATH = fc.oneof(
  { weight: 3, arbitrary: ODD_WORD.map((word) => `/v1/words/${word}.json`) },
  fc.constantFrom(
    '/',
    '',
    '/v1/words/../../admin',
    '/v1/words/%00.json',
    '//v1//words//x.json',
    '/v1/words/{word}.json',
    '/v1/words/a/b.json',
    '/v1/words/.json',
    '/v1/words/😀.json',
    '/v1/words/x.json?apikey=known',
    '/\u0000/\r\n',
  ),
  fc.string({ unit: 'grapheme', maxLength: 64 }).map((s) => `/${s}`),
  fc.string({ unit: 'binary', maxLength: 64 }),
  fc.integer({ min: 1000, max: 8000 }).map((n) => `/v1/${'a'.repeat(n)}`),
);

const WORD = fc.stringMatching(/^[a-z]{1,12}$/);

/** Noise headers; now and then a huge set of them, or one huge value. */
const EXTRA_HEADERS = fc.oneof(
  {
    weight: 12,
    arbitrary: fc.dictionary(fc.stringMatching(/^x-[a-z]{1,10}$/), fc.string({ maxLength: 40 }), {
      maxKeys: 5,
    }),
  },
  {
    weight: 1,
    arbitrary: fc
      .tuple(fc.integer({ min: 100, max: 400 }), fc.integer({ min: 10, max: 200 }))
      .map(([count, size]) =>
        Object.fromEntries(Array.from({ length: count }, (_, i) => [`x-filler-${i}`, 'v'.repeat(size)])),
      ),
  },
  {
    weight: 1,
    arbitrary: fc.integer({ min: 8 * 1024, max: 64 * 1024 }).map((size) => ({ 'x-huge': 'h'.repeat(size) })),
  },
);

function eventOf(
  method: string,
  resource: string,
  path: string,
  credential: CredentialHeaders,
  extra: Record<string, string>,
  query: CredentialQuery = {},
): APIGatewayRequestAuthorizerEvent {
  const extraMulti = Object.fromEntries(Object.entries(extra).map(([name, value]) => [name, [value]]));
  return requestAuthorizerEvent({
    apiId: API_ID,
    stage: STAGE,
    method,
    resource,
    path,
    headers: { ...extra, ...credential.headers },
    multiValueHeaders: { ...extraMulti, ...credential.multiValueHeaders },
    pathParameters: null,
    ...query,
    requestId: 'fuzz-request',
    requestTimeEpoch: 0,
    resourceId: 'abc123',
    sourceIp: '127.0.0.1',
    userAgent: 'fuzz',
  });
}

/** Events on the mapped route, except for category anyRoute, whose path and method are odd. */
export function requestEvents(keys: FuzzKeys): fc.Arbitrary<GeneratedEvent> {
  return eventsCarrying(credentialCases(keys));
}

/** Events carrying the credentials generated, on the mapped route or (category anyRoute) an odd one. */
export function eventsCarrying(cases: fc.Arbitrary<CredentialCase>): fc.Arbitrary<GeneratedEvent> {
  const mapped = fc.tuple(cases, WORD, EXTRA_HEADERS).map(([credential, word, extra]): GeneratedEvent => {
    const path = `/v1/words/${word}.json`;
    return {
      category: credential.category,
      ...(credential.flaw !== undefined && { flaw: credential.flaw }),
      ...(credential.key !== undefined && { key: credential.key }),
      event: eventOf('GET', MAPPED_RESOURCE, path, credential.headers, extra, credential.query),
    };
  });
  const oddRoute = fc
    .tuple(cases, ODD_METHOD, ODD_PATH, fc.oneof(fc.constant(MAPPED_RESOURCE), ODD_PATH), EXTRA_HEADERS)
    .map(([credential, method, path, resource, extra]): GeneratedEvent => {
      // A malformed key stays malformed on any route: the 401 comes before the route matters.
      const category = credential.category === 'malformed' ? 'malformed' : 'anyRoute';
      return {
        category,
        ...(credential.flaw !== undefined && { flaw: credential.flaw }),
        ...(credential.key !== undefined && { key: credential.key }),
        event: eventOf(method, resource, path, credential.headers, extra, credential.query),
      };
    });
  return fc.oneof({ weight: 4, arbitrary: mapped }, { weight: 1, arbitrary: oddRoute });
}

/**
 * Ways a client may spell the path of `/v1/<collection>/<word>.json`, all meaning the same path to the
 * backend and to the mapping rules: plain, percent-encoded letters, a repeated slash, a dot segment.
 */
export const PATH_SPELLINGS = {
  plain: (collection: string, word: string) => `/v1/${collection}/${word}.json`,
  percentEncoded: (collection: string, word: string) =>
    `/v1/%${collection.charCodeAt(0).toString(16)}${collection.slice(1)}/${word}.json`,
  repeatedSlash: (collection: string, word: string) => `/v1//${collection}/${word}.json`,
  dotSegment: (collection: string, word: string) => `/v1/x/../${collection}/${word}.json`,
} as const;

export type PathSpelling = keyof typeof PATH_SPELLINGS;

/** A well-formed GET of `/v1/<collection>/<word>.json` carrying `headers` (single values). */
export function routeEvent(
  headers: Readonly<Record<string, string>>,
  word = 'hello',
  collection: 'words' | 'sentences' = 'words',
  spelling: PathSpelling = 'plain',
): APIGatewayRequestAuthorizerEvent {
  const credential = {
    headers: { ...headers },
    multiValueHeaders: Object.fromEntries(Object.entries(headers).map(([name, value]) => [name, [value]])),
  };
  const path = PATH_SPELLINGS[spelling](collection, word);
  return eventOf('GET', `/v1/${collection}/{word}.json`, path, credential, {});
}

/** A call with `apikey: userKey`. */
export function keyEvent(
  userKey: string,
  word?: string,
  collection?: 'words' | 'sentences',
  spelling?: PathSpelling,
): APIGatewayRequestAuthorizerEvent {
  return routeEvent({ apikey: userKey }, word, collection, spelling);
}
