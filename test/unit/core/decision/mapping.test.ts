import { describe, expect, it } from 'vitest';
import {
  compileMappingRules,
  DEFAULT_USAGE,
  normalizedPath,
  type QueryParameters,
} from '../../../../core/decision/mapping';
import { type MappingRule, parseConfig } from '../../../../core/settings/config';

function rule(method: string, pattern: string, metric = 'm', delta = 1): MappingRule {
  return { method, pattern, metric, delta };
}

function usage(rules: MappingRule[], method: string, path: string, query: QueryParameters = {}) {
  return compileMappingRules(parseConfig({ serviceId: 's', mappingRules: rules }).mappingRules).usageOf({
    method,
    path,
    query,
  });
}

describe('mapping rules', () => {
  it('count one hit per request when none is configured', () => {
    expect(usage([], 'DELETE', '/anything')).toEqual(DEFAULT_USAGE);
    expect(DEFAULT_USAGE).toEqual({ hits: 1 });
  });

  const table: [
    string,
    MappingRule[],
    string,
    string,
    QueryParameters,
    Record<string, number> | undefined,
  ][] = [
    ['exact path', [rule('GET', '/v1/words')], 'GET', '/v1/words', {}, { m: 1 }],
    ['prefix match without $', [rule('GET', '/v1/words')], 'GET', '/v1/words/x/y', {}, { m: 1 }],
    [
      'prefix match is textual, as in APIcast',
      [rule('GET', '/v1/words')],
      'GET',
      '/v1/wordsmith',
      {},
      { m: 1 },
    ],
    ['$ anchors the end', [rule('GET', '/v1/words$')], 'GET', '/v1/words/x', {}, undefined],
    ['$ still matches the exact path', [rule('GET', '/v1/words$')], 'GET', '/v1/words', {}, { m: 1 }],
    ['other method', [rule('POST', '/v1')], 'GET', '/v1', {}, undefined],
    ['ANY method', [rule('ANY', '/v1')], 'PATCH', '/v1', {}, { m: 1 }],
    ['lower-case request method', [rule('GET', '/v1')], 'get', '/v1', {}, { m: 1 }],
    [
      '{param} matches a segment',
      [rule('GET', '/v1/words/{word}.json')],
      'GET',
      '/v1/words/hello.json',
      {},
      { m: 1 },
    ],
    [
      '{param} never spans a slash',
      [rule('GET', '/v1/words/{word}.json$')],
      'GET',
      '/v1/words/a/b.json',
      {},
      undefined,
    ],
    [
      '{param} takes pchar symbols',
      [rule('GET', '/u/{id}$')],
      'GET',
      "/u/a-b.c~d%20!$&'()*+,;=@:",
      {},
      { m: 1 },
    ],
    ['{param} needs one character', [rule('GET', '/u/{id}$')], 'GET', '/u/', {}, undefined],
    ['{param} refuses other characters', [rule('GET', '/u/{id}$')], 'GET', '/u/a"b', {}, undefined],
    ['. is literal', [rule('GET', '/v1/a.json')], 'GET', '/v1/aXjson', {}, undefined],
    ['+ is literal', [rule('GET', '/v1/a+b$')], 'GET', '/v1/aab', {}, undefined],
    ['+ matches itself', [rule('GET', '/v1/a+b$')], 'GET', '/v1/a+b', {}, { m: 1 }],
    ['repeated slashes count once', [rule('GET', '/v1//words$')], 'GET', '/v1/words', {}, { m: 1 }],
    ['repeated slashes in the path too', [rule('GET', '/v1/words$')], 'GET', '//v1///words', {}, { m: 1 }],
    ['query literal must equal', [rule('GET', '/s?type=a')], 'GET', '/s', { type: ['b'] }, undefined],
    ['query literal equal', [rule('GET', '/s?type=a')], 'GET', '/s', { type: ['a'] }, { m: 1 }],
    [
      'query literal matches any repeated value',
      [rule('GET', '/s?type=a')],
      'GET',
      '/s',
      { type: ['a', 'b'] },
      { m: 1 },
    ],
    [
      'query literal matches a later value',
      [rule('GET', '/s?type=a')],
      'GET',
      '/s',
      { type: ['b', 'a'] },
      { m: 1 },
    ],
    [
      'percent-encoded letters are the letters',
      [rule('GET', '/v1/premium')],
      'GET',
      '/v1/%70remium/x',
      {},
      { m: 1 },
    ],
    ['an encoded slash is a slash', [rule('GET', '/v1/premium')], 'GET', '/v1%2Fpremium', {}, { m: 1 }],
    ['dot segments are resolved', [rule('GET', '/v1/premium')], 'GET', '/v1/a/../premium', {}, { m: 1 }],
    [
      'encoded dot segments are resolved',
      [rule('GET', '/v1/premium')],
      'GET',
      '/v1/a/%2e%2E/premium',
      {},
      { m: 1 },
    ],
    ['a dot segment is dropped', [rule('GET', '/v1/premium$')], 'GET', '/v1/./premium', {}, { m: 1 }],
    ['no climbing above the root', [rule('GET', '/v1/premium')], 'GET', '/../../v1/premium', {}, { m: 1 }],
    ['decoded once only', [rule('GET', '/v1/premium')], 'GET', '/v1/%2570remium', {}, undefined],
    ['query literal missing', [rule('GET', '/s?type=a')], 'GET', '/s', {}, undefined],
    ['query placeholder needs presence', [rule('GET', '/s?q={q}')], 'GET', '/s', {}, undefined],
    ['query placeholder present', [rule('GET', '/s?q={q}')], 'GET', '/s', { q: ['x'] }, { m: 1 }],
    ['query encoded literal', [rule('GET', '/s?t=a%20b')], 'GET', '/s', { t: ['a b'] }, { m: 1 }],
  ];
  it.each(table)('%s', (_, rules, method, path, query, expected) => {
    expect(usage(rules, method, path, query)).toEqual(expected);
  });

  it('add up every matching rule, per metric', () => {
    const rules = [
      rule('GET', '/', 'hits', 1),
      rule('GET', '/v1/words/{word}.json', 'get_word', 2),
      rule('GET', '/v1/words/', 'get_word', 3),
      rule('POST', '/v1/words/{word}.json', 'post_word', 1),
      rule('GET', '/v2', 'v2', 1),
    ];
    expect(usage(rules, 'GET', '/v1/words/x.json')).toEqual({ hits: 1, get_word: 5 });
  });

  it('count a delta of 0 as a match', () => {
    expect(usage([rule('GET', '/free', 'free', 0)], 'GET', '/free')).toEqual({ free: 0 });
  });

  it('stop at a matching rule marked last, as APIcast does, and only when it matches', () => {
    const rules = [
      rule('GET', '/', 'hits', 1),
      { ...rule('GET', '/v1/words/{word}.json', 'get_word', 2), last: true },
      rule('GET', '/v1/words/', 'get_word', 3),
    ];
    expect(usage(rules, 'GET', '/v1/words/x.json')).toEqual({ hits: 1, get_word: 2 });
    expect(usage(rules, 'GET', '/v1/words/x.xml')).toEqual({ hits: 1, get_word: 3 });
  });

  it('refuse a last that is not true or false, naming it', () => {
    expect(() => usage([{ ...rule('GET', '/'), last: 'yes' as never }], 'GET', '/')).toThrow(
      /mappingRules\[0\]\.last must be true or false/,
    );
  });
});

describe('normalizedPath', () => {
  it.each([
    ['/v1/words/hello.json', '/v1/words/hello.json'],
    ['/v1/%70remium', '/v1/premium'],
    ['/v1%2Fpremium/x', '/v1/premium/x'],
    ['//v1///words/', '/v1/words/'],
    ['/a/b/..', '/a/'],
    ['/a/..', '/'],
    ['/a/./b/.', '/a/b/'],
    ['/v1/a%20b', '/v1/a%20b'],
    ['/v1/%2570', '/v1/%2570'],
    ['/v1/50%', '/v1/50%25'],
    ['/v1/%3Fq=1', '/v1/%3Fq=1'],
    ['/v1/caf%C3%A9', '/v1/caf%C3%A9'],
    ['/v1/café', '/v1/caf%C3%A9'],
    ['/', '/'],
    ['', '/'],
    ['v1/x', '/v1/x'],
    ['/.well-known/x', '/.well-known/x'],
    ['/a/.../..b', '/a/.../..b'],
    ['/x/%2e%2e/y', '/y'],
    ['/a#b?c', '/a%23b%3Fc'],
  ])('%s is matched as %s', (raw, normalized) => {
    expect(normalizedPath(raw)).toBe(normalized);
  });
});
