import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { mergedValues } from '../../../../adapters/gateway/rest-request';
import {
  credentialIdInput,
  credentialIdOf,
  credentialIdPrefix,
  extractCredential as extractFromRequest,
  identitySourcesOf,
  keyIdOf,
  MAX_CREDENTIAL_BYTES,
} from '../../../../core/credentials';
import type { Credential } from '../../../../core/platform/types';
import { parseConfig } from '../../../../core/settings/config';

type Values = Readonly<Record<string, string>> | null;
type MultiValues = Readonly<Record<string, readonly string[]>> | null;

/** The credential of a REST event's parts, as the REST adapter hands them to the core's reader. */
function extractCredential(
  config: Parameters<typeof extractFromRequest>[0],
  headers: Values,
  multiValueHeaders: MultiValues,
  query: { queryStringParameters?: Values; multiValueQueryStringParameters?: MultiValues } = {},
) {
  return extractFromRequest(config, {
    headers: mergedValues(headers, multiValueHeaders),
    query: mergedValues(query.queryStringParameters, query.multiValueQueryStringParameters),
  });
}

const userKeyMode = parseConfig({ serviceId: 's1' });
const appIdMode = parseConfig({ serviceId: 's1', credentialMode: 'app_id' });

describe('extractCredential in user_key mode', () => {
  it('reads the apikey header whatever its case', () => {
    for (const name of ['apikey', 'APIKEY', 'ApiKey']) {
      expect(extractCredential(userKeyMode, { [name]: 'k-1' }, null)).toEqual({
        ok: true,
        credential: { kind: 'user_key', userKey: 'k-1' },
      });
    }
  });

  it('reads a configured header name', () => {
    const config = parseConfig({ serviceId: 's1', credentialHeader: 'X-Api-Key' });
    expect(extractCredential(config, { 'x-api-key': 'k-2' }, null)).toMatchObject({ ok: true });
    expect(extractCredential(config, { apikey: 'k-2' }, null)).toMatchObject({
      ok: false,
      reason: 'missing',
    });
  });

  it('accepts the value given in both headers and multiValueHeaders', () => {
    expect(extractCredential(userKeyMode, { apikey: 'k' }, { apikey: ['k'] })).toMatchObject({ ok: true });
    expect(extractCredential(userKeyMode, null, { apikey: ['k'] })).toMatchObject({ ok: true });
  });

  it('accepts every printable ASCII character but the comma, and exactly 256 bytes', () => {
    const printable = Array.from({ length: 0x7e - 0x21 + 1 }, (_, i) => String.fromCharCode(0x21 + i))
      .filter((c) => c !== ',')
      .join('');
    expect(extractCredential(userKeyMode, { apikey: printable }, null)).toMatchObject({ ok: true });
    const longest = 'k'.repeat(MAX_CREDENTIAL_BYTES);
    expect(extractCredential(userKeyMode, { apikey: longest }, null)).toMatchObject({ ok: true });
  });

  const malformed: [
    string,
    Parameters<typeof extractCredential>[1],
    Parameters<typeof extractCredential>[2],
    string,
  ][] = [
    ['no headers at all', null, null, 'missing'],
    ['another header only', { other: 'x' }, null, 'missing'],
    ['an empty value', { apikey: '' }, null, 'empty'],
    ['257 bytes', { apikey: 'k'.repeat(MAX_CREDENTIAL_BYTES + 1) }, null, 'too_long'],
    ['a space inside', { apikey: 'a b' }, null, 'bad_characters'],
    ['a tab', { apikey: 'a\tb' }, null, 'bad_characters'],
    ['a newline', { apikey: 'a\nb' }, null, 'bad_characters'],
    ['DEL', { apikey: 'a\x7fb' }, null, 'bad_characters'],
    ['a non-ASCII letter', { apikey: 'clé' }, null, 'bad_characters'],
    ['comma-joined values', { apikey: 'a,b' }, null, 'several_values'],
    ['two multiValueHeaders entries', { apikey: 'b' }, { apikey: ['a', 'b'] }, 'several_values'],
    ['two spellings of the header', { apikey: 'a', APIKEY: 'a' }, null, 'several_values'],
    ['two spellings across both maps', { apikey: 'a' }, { ApiKey: ['a'] }, 'several_values'],
    ['headers and multiValueHeaders disagreeing', { apikey: 'a' }, { apikey: ['b'] }, 'several_values'],
    ['an empty multiValueHeaders entry', null, { apikey: [''] }, 'empty'],
  ];
  it.each(malformed)('refuses %s', (_, headers, multi, reason) => {
    expect(extractCredential(userKeyMode, headers, multi)).toEqual({ ok: false, header: 'apikey', reason });
  });
});

describe('extractCredential in app_id mode', () => {
  it('reads app_id and app_key', () => {
    expect(extractCredential(appIdMode, { App_Id: 'a1', app_key: 'secret' }, null)).toEqual({
      ok: true,
      credential: { kind: 'app_id', appId: 'a1', appKey: 'secret' },
    });
  });

  it('takes app_key as optional, as the platform does', () => {
    expect(extractCredential(appIdMode, { app_id: 'a1' }, null)).toEqual({
      ok: true,
      credential: { kind: 'app_id', appId: 'a1' },
    });
  });

  it('refuses a missing app_id, and a malformed app_key', () => {
    expect(extractCredential(appIdMode, { app_key: 'k' }, null)).toEqual({
      ok: false,
      header: 'app_id',
      reason: 'missing',
    });
    expect(extractCredential(appIdMode, { app_id: 'a', app_key: '' }, null)).toEqual({
      ok: false,
      header: 'app_key',
      reason: 'empty',
    });
    expect(extractCredential(appIdMode, { app_id: 'a', app_key: 'x y' }, null)).toMatchObject({
      ok: false,
      reason: 'bad_characters',
    });
  });

  it('ignores the apikey header', () => {
    expect(extractCredential(appIdMode, { apikey: 'k' }, null)).toMatchObject({
      ok: false,
      header: 'app_id',
    });
  });
});

const header = (name: string) => ({ location: 'header', name });

describe('identitySourcesOf', () => {
  it('names the key header in user_key mode, only the app id header in app_id mode (keys are optional)', () => {
    expect(identitySourcesOf(userKeyMode)).toEqual([header('apikey')]);
    expect(identitySourcesOf(appIdMode)).toEqual([header('app_id')]);
  });

  it('follows the configured header names, which the config lower-cases', () => {
    const renamed = { credentialHeader: 'X-Api-Key', appIdHeader: 'X-App-Id', appKeyHeader: 'X-App-Key' };
    expect(identitySourcesOf(parseConfig({ serviceId: 's1', ...renamed }))).toEqual([header('x-api-key')]);
    expect(identitySourcesOf(parseConfig({ serviceId: 's1', credentialMode: 'app_id', ...renamed }))).toEqual(
      [header('x-app-id')],
    );
  });

  it('names the platform parameters in the query string with credentialLocation query', () => {
    expect(identitySourcesOf(parseConfig({ serviceId: 's1', credentialLocation: 'query' }))).toEqual([
      { location: 'query', name: 'user_key' },
    ]);
  });
});

describe('credentialLocation query', () => {
  const userKeyQuery = parseConfig({ serviceId: 's1', credentialLocation: 'query' });
  const appIdQuery = parseConfig({ serviceId: 's1', credentialMode: 'app_id', credentialLocation: 'query' });

  it('reads the user key from the user_key query parameter, not from the header', () => {
    expect(extractCredential(userKeyQuery, {}, null, { queryStringParameters: { user_key: 'k-1' } })).toEqual(
      {
        ok: true,
        credential: { kind: 'user_key', userKey: 'k-1' },
      },
    );
    expect(extractCredential(userKeyQuery, { apikey: 'k-1' }, null)).toEqual({
      ok: false,
      header: 'user_key',
      reason: 'missing',
    });
  });

  it('reads app_id and app_key from the query, the key optional, names matched exactly', () => {
    expect(
      extractCredential(appIdQuery, {}, null, { queryStringParameters: { app_id: 'a1', app_key: 'k' } }),
    ).toEqual({ ok: true, credential: { kind: 'app_id', appId: 'a1', appKey: 'k' } });
    expect(extractCredential(appIdQuery, {}, null, { queryStringParameters: { app_id: 'a1' } })).toEqual({
      ok: true,
      credential: { kind: 'app_id', appId: 'a1' },
    });
    expect(
      extractCredential(appIdQuery, {}, null, { queryStringParameters: { APP_ID: 'a1' } }),
    ).toMatchObject({
      ok: false,
      reason: 'missing',
    });
  });

  it('refuses a repeated query parameter as several values', () => {
    expect(
      extractCredential(userKeyQuery, {}, null, {
        queryStringParameters: { user_key: 'b' },
        multiValueQueryStringParameters: { user_key: ['a', 'b'] },
      }),
    ).toEqual({ ok: false, header: 'user_key', reason: 'several_values' });
  });
});

describe('credential ids', () => {
  const hostile = fc
    .array(fc.constantFrom(':', '{', '}', '*', '\n', 'a', '1', ' ', '\u00e9'), {
      minLength: 1,
      maxLength: 64,
    })
    .map((chars) => chars.join(''))
    .chain((base) => fc.integer({ min: 1, max: 4 }).map((times) => base.repeat(times)))
    .filter((value) => Buffer.byteLength(value) <= 256);

  const credential: fc.Arbitrary<Credential> = fc.oneof(
    hostile.map((userKey) => ({ kind: 'user_key' as const, userKey })),
    fc
      .tuple(hostile, fc.option(fc.oneof(hostile, fc.constant('')), { nil: undefined }))
      .map(([appId, appKey]) => ({
        kind: 'app_id' as const,
        appId,
        ...(appKey !== undefined && { appKey }),
      })),
  );

  const budgetOf = (c: Credential) => (c.kind === 'user_key' ? `u${c.userKey}` : `a${c.appId}`);

  it('name one budget per application, and never two applications alike, whatever characters they contain', () => {
    fc.assert(
      fc.property(credential, credential, (a, b) => {
        const sameBudget = budgetOf(a) === budgetOf(b);
        expect(credentialIdInput('s1', a) === credentialIdInput('s1', b)).toBe(sameBudget);
        expect(credentialIdOf('s1', a) === credentialIdOf('s1', b)).toBe(sameBudget);
      }),
      { numRuns: 2000 },
    );
  });

  it('never collide across services', () => {
    fc.assert(
      fc.property(hostile, hostile, credential, (s1, s2, c) => {
        fc.pre(s1 !== s2);
        expect(credentialIdOf(s1, c)).not.toBe(credentialIdOf(s2, c));
      }),
    );
  });

  it('give every key of an application the application id, and each key an id of its own', () => {
    const budgets = new Set([
      credentialIdOf('s', { kind: 'app_id', appId: 'a', appKey: 'k1' }),
      credentialIdOf('s', { kind: 'app_id', appId: 'a', appKey: 'k2' }),
      credentialIdOf('s', { kind: 'app_id', appId: 'a' }),
    ]);
    expect(budgets.size).toBe(1);
    const keys = new Set([
      keyIdOf('s', { kind: 'app_id', appId: 'a:b', appKey: 'c' }),
      keyIdOf('s', { kind: 'app_id', appId: 'a', appKey: 'b:c' }),
      keyIdOf('s', { kind: 'app_id', appId: 'a' }),
      keyIdOf('s', { kind: 'app_id', appId: 'a', appKey: 'k1' }),
      keyIdOf('s:1', { kind: 'app_id', appId: 'a', appKey: 'k1' }),
    ]);
    expect(keys.size).toBe(5);
    for (const key of keys) expect(key).toMatch(/^[0-9a-f]{64}$/);
    expect(keyIdOf('s', { kind: 'user_key', userKey: 'k' })).toBe('');
  });

  it('separate the app id from a user key of the same text, and a service from another', () => {
    const ids = new Set([
      credentialIdOf('s', { kind: 'app_id', appId: 'a' }),
      credentialIdOf('s', { kind: 'user_key', userKey: 'a' }),
      credentialIdOf('s:1', { kind: 'user_key', userKey: 'a' }),
      credentialIdOf('s', { kind: 'user_key', userKey: '1:a' }),
    ]);
    expect(ids.size).toBe(4);
  });

  it('are stable SHA-256 hex and never contain the key', () => {
    const id = credentialIdOf('2555417735060', { kind: 'user_key', userKey: 'demo-key-1' });
    expect(id).toMatch(/^[0-9a-f]{64}$/);
    expect(credentialIdOf('2555417735060', { kind: 'user_key', userKey: 'demo-key-1' })).toBe(id);
    expect(credentialIdPrefix(id)).toBe(id.slice(0, 12));
  });
});
