import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  authQuery,
  chunk,
  formatPlatformTime,
  parsePlatformTime,
  reportBody,
  transactionsProblem,
  usageProblem,
} from '../../../../core/platform/encoding';
import { REDACTED, redact } from '../../../../core/platform/redact';
import type { ServiceAuth } from '../../../../core/platform/types';

const providerKey: ServiceAuth = { kind: 'provider_key', providerKey: 'pk-1' };

describe('platform times', () => {
  it.each([
    ['2010-05-15 00:00:00 +0000', Date.UTC(2010, 4, 15)],
    ['2024-02-29 23:59:59 +0000', Date.UTC(2024, 1, 29, 23, 59, 59)],
    ['2010-05-15 02:30:00 +0230', Date.UTC(2010, 4, 15)],
    ['2010-05-14 19:00:00 -0500', Date.UTC(2010, 4, 15)],
    [' 2010-05-15 00:00:00 +0000 ', Date.UTC(2010, 4, 15)],
  ])('parses %j', (text, epochMs) => {
    expect(parsePlatformTime(text)).toBe(epochMs);
  });

  it.each([
    '',
    '2010-05-15',
    '2010-05-15T00:00:00Z',
    '2010-05-15 00:00:00',
    '2010-05-15 00:00:00 UTC',
    '2023-02-29 00:00:00 +0000',
    '2010-13-01 00:00:00 +0000',
    '2010-05-15 24:00:00 +0000',
    '2010-05-15 00:60:00 +0000',
    '2010-05-15 00:00:00 +0060',
  ])('refuses %j', (text) => {
    expect(parsePlatformTime(text)).toBeUndefined();
  });

  it('formats in UTC as the platform writes times', () => {
    expect(formatPlatformTime(Date.UTC(2010, 4, 5, 7, 8, 9, 999))).toBe('2010-05-05 07:08:09 +0000');
    expect(formatPlatformTime(Date.parse('2010-05-15T00:00:00.999Z'))).toBe('2010-05-15 00:00:00 +0000');
  });

  it('reads back every time it writes, to the second', () => {
    fc.assert(
      fc.property(fc.integer({ min: Date.UTC(1970, 0, 1), max: Date.UTC(9999, 11, 31) }), (epochMs) => {
        expect(parsePlatformTime(formatPlatformTime(epochMs))).toBe(Math.floor(epochMs / 1000) * 1000);
      }),
    );
  });
});

describe('authorize and authrep query', () => {
  it('carries the service auth, the user key and the usage', () => {
    const query = new URLSearchParams(
      authQuery('svc-1', providerKey, { kind: 'user_key', userKey: 'key-1' }, { hits: 1, get_word: 2 }),
    );
    expect([...query]).toEqual([
      ['provider_key', 'pk-1'],
      ['service_id', 'svc-1'],
      ['user_key', 'key-1'],
      ['usage[hits]', '1'],
      ['usage[get_word]', '2'],
    ]);
  });

  it('carries a service token, app id and app key', () => {
    const query = new URLSearchParams(
      authQuery(
        'svc-1',
        { kind: 'service_token', serviceToken: 'st-1' },
        { kind: 'app_id', appId: 'app-1', appKey: 'secret' },
        {},
      ),
    );
    expect([...query]).toEqual([
      ['service_token', 'st-1'],
      ['service_id', 'svc-1'],
      ['app_id', 'app-1'],
      ['app_key', 'secret'],
    ]);
  });

  it('leaves app_key out when the credential has none', () => {
    const query = new URLSearchParams(
      authQuery('svc-1', providerKey, { kind: 'app_id', appId: 'app-1' }, {}),
    );
    expect(query.has('app_key')).toBe(false);
  });

  it('encodes every name and value so none can inject a parameter', () => {
    const userKey = 'k&usage[x]=5 +%#';
    const metric = 'm]=1&provider_key=evil';
    const raw = authQuery('s&1', providerKey, { kind: 'user_key', userKey }, { [metric]: 3 });
    expect(raw).not.toMatch(/[ []/);
    const query = new URLSearchParams(raw);
    expect([...query]).toEqual([
      ['provider_key', 'pk-1'],
      ['service_id', 's&1'],
      ['user_key', userKey],
      [`usage[${metric}]`, '3'],
    ]);
  });
});

describe('report body', () => {
  it('numbers transactions, names user keys or app ids, and formats timestamps', () => {
    const body = new URLSearchParams(
      reportBody('svc-1', providerKey, [
        { credential: { kind: 'user_key', userKey: 'key&1' }, usage: { hits: 3 } },
        {
          credential: { kind: 'app_id', appId: 'app-1', appKey: 'never-sent' },
          usage: { get_word: 1, post_word: 2 },
          timestamp: Date.UTC(2024, 0, 2, 3, 4, 5),
        },
      ]),
    );
    expect([...body]).toEqual([
      ['provider_key', 'pk-1'],
      ['service_id', 'svc-1'],
      ['transactions[0][user_key]', 'key&1'],
      ['transactions[0][usage][hits]', '3'],
      ['transactions[1][app_id]', 'app-1'],
      ['transactions[1][usage][get_word]', '1'],
      ['transactions[1][usage][post_word]', '2'],
      ['transactions[1][timestamp]', '2024-01-02 03:04:05 +0000'],
    ]);
  });
});

describe('input checks', () => {
  it('splits into chunks of at most the given size', () => {
    expect(chunk([1, 2, 3, 4, 5], 2)).toEqual([[1, 2], [3, 4], [5]]);
    expect(chunk([], 2)).toEqual([]);
  });

  it('accepts non-negative integer usage', () => {
    expect(usageProblem({ hits: 0, get_word: 5 })).toBeUndefined();
  });

  it.each([
    [{ hits: -1 }, 'hits'],
    [{ hits: 1.5 }, 'hits'],
    [{ hits: Number.NaN }, 'hits'],
    [{ hits: Number.POSITIVE_INFINITY }, 'hits'],
    [{ '': 1 }, 'empty metric name'],
  ])('refuses usage %j', (usage, named) => {
    expect(usageProblem(usage)).toContain(named);
  });

  it('names the transaction with bad usage or timestamp', () => {
    const credential = { kind: 'user_key', userKey: 'k' } as const;
    expect(
      transactionsProblem([
        { credential, usage: { hits: 1 } },
        { credential, usage: { hits: -2 } },
      ]),
    ).toEqual({
      code: 'usage_value_invalid',
      message: 'transaction 1: usage of metric "hits" must be a non-negative integer (got -2)',
    });
    expect(transactionsProblem([{ credential, usage: {}, timestamp: Number.NaN }])).toMatchObject({
      code: 'timestamp_invalid',
    });
    expect(transactionsProblem([{ credential, usage: { hits: 1 }, timestamp: Date.now() }])).toBeUndefined();
  });
});

describe('redaction', () => {
  it.each([
    ['user key "abc" is invalid', 'user key "[redacted]" is invalid'],
    ['user key "a"b" is invalid', 'user key "[redacted]" is invalid'],
    ['application key "abc" is invalid', 'application key "[redacted]" is invalid'],
    ['application with id="abc" was not found', 'application with id="[redacted]" was not found'],
    ['provider key "abc" is invalid', 'provider key "[redacted]" is invalid'],
    ['service token "abc" is invalid', 'service token "[redacted]" is invalid'],
    ['metric "hits" is invalid', 'metric "hits" is invalid'],
    ['user key is missing', 'user key is missing'],
  ])('redacts %j by its phrase', (message, redacted) => {
    expect(redact(message, [])).toBe(redacted);
  });

  it('redacts every occurrence of the secrets sent, longest first', () => {
    expect(redact('bad secret-long and secret', ['secret', 'secret-long', ''])).toBe(
      `bad ${REDACTED} and ${REDACTED}`,
    );
  });
});
