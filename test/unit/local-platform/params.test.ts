import { describe, expect, it } from 'vitest';
import { MalformedParamsError, parseUrlEncoded } from '../../../local/platform/params';

const parse = (text: string) => parseUrlEncoded(Buffer.from(text, 'latin1'));
const plain = (value: unknown) => JSON.parse(JSON.stringify(value));

describe('reading parameters with bracket notation', () => {
  it('builds nested hashes', () => {
    const { values, validUtf8 } = parse(
      'transactions%5B0%5D%5Busage%5D%5Bhits%5D=1&transactions[0][user_key]=k&transactions[1][usage][get_word]=2&usage[hits]=3',
    );
    expect(validUtf8).toBe(true);
    expect(plain(values)).toEqual({
      transactions: { '0': { usage: { hits: '1' }, user_key: 'k' }, '1': { usage: { get_word: '2' } } },
      usage: { hits: '3' },
    });
  });

  it('decodes + and %-escapes, keeps the last of repeated names, and has no value without =', () => {
    expect(plain(parse('a=x+y%26z&a=second&flag&&empty=').values)).toEqual({
      a: 'second',
      flag: null,
      empty: '',
    });
  });

  it('does not let an encoded & or = inject parameters', () => {
    expect(plain(parse('user_key=k%26usage%5Bhits%5D%3D100').values)).toEqual({
      user_key: 'k&usage[hits]=100',
    });
  });

  it('builds arrays from [] and arrays of hashes', () => {
    expect(plain(parse('a[]=1&a[]=2&t[][k]=x&t[][u]=y&t[][k]=z').values)).toEqual({
      a: ['1', '2'],
      t: [{ k: 'x', u: 'y' }, { k: 'z' }],
    });
  });

  it('keeps names that are not of the bracket shape as plain keys', () => {
    expect(plain(parse('usage[hits=1&[x]=2&a[b]c=3').values)).toEqual({
      'usage[hits': '1',
      '[x]': '2',
      'a[b]c': '3',
    });
  });

  it('flags invalid UTF-8 in names or values and keeps reading', () => {
    expect(parse('user_key=%FF').validUtf8).toBe(false);
    expect(parse('%C3%28=1').validUtf8).toBe(false);
    expect(parse('user_key=%C3%A9t%C3%A9').validUtf8).toBe(true);
  });

  it.each([
    ['a malformed %-escape', 'a=%zz'],
    ['a truncated %-escape', 'a=%4'],
    ['a string then a hash', 'usage=1&usage[hits]=1'],
    ['an array then a hash', 'usage[]=1&usage[hits]=1'],
    ['a hash then an array', 'usage[hits]=1&usage[]=1'],
    ['nesting deeper than 32', `a${'[b]'.repeat(40)}=1`],
  ])('refuses %s', (_name, text) => {
    expect(() => parse(text)).toThrow(MalformedParamsError);
  });

  it('lets a later plain value replace a hash, as Rack does', () => {
    expect(plain(parse('usage[hits]=1&usage=5').values)).toEqual({ usage: '5' });
  });

  it('is safe with __proto__ names', () => {
    const { values } = parse('__proto__[polluted]=1&constructor[prototype][x]=2');
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(Object.entries(values).map(([name, value]) => [name, plain(value)])).toEqual([
      ['__proto__', { polluted: '1' }],
      ['constructor', { prototype: { x: '2' } }],
    ]);
  });
});
