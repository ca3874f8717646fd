/** The plugin's request: read from what a framework hands over, bounded, refused with its problem. */
import { describe, expect, it } from 'vitest';
import { MAX_QUERY_STRING_BYTES } from '../../../core/decision/request';
import { isReadablePath, MAX_HEADER_BYTES, MAX_PATH_BYTES, readRequest } from '../../../plugin/request';

describe('readRequest', () => {
  it('reads the path, the query (every value, decoded) and Node headers with repeated values', () => {
    const read = readRequest({
      method: 'get',
      url: '/v1/words/hi.json?lang=en&lang=fr&q=a%20b',
      headers: { apikey: 'k', 'x-many': ['a', 'b'], 'content-length': undefined },
      clientAddress: '10.0.0.1',
    });
    expect(read).toEqual({
      ok: true,
      request: {
        method: 'GET',
        path: '/v1/words/hi.json',
        query: { lang: ['en', 'fr'], q: ['a b'] },
        headers: { apikey: ['k'], 'x-many': ['a', 'b'] },
        sourceAddress: '10.0.0.1',
      },
    });
  });

  it('reads a Fetch Headers object and an absolute URL (Hono hands both over)', () => {
    const headers = new Headers({ ApiKey: 'k' });
    const read = readRequest({ method: 'GET', url: 'http://localhost:3000/v1/x?a=1#frag', headers });
    expect(read).toMatchObject({
      ok: true,
      request: { path: '/v1/x', query: { a: ['1'] }, headers: { apikey: ['k'] } },
    });
  });

  it('keeps a parameter named __proto__ a parameter', () => {
    const read = readRequest({ method: 'GET', url: '/x?__proto__=1', headers: {} });
    expect(read.ok && Object.getOwnPropertyNames(read.request.query)).toEqual(['__proto__']);
  });

  it('keeps a header named __proto__ a header', () => {
    const headers = JSON.parse('{"__proto__": "x", "apikey": "k"}') as Record<string, string>;
    const read = readRequest({ method: 'GET', url: '/x', headers });
    expect(read.ok && Object.getOwnPropertyNames(read.request.headers)).toEqual(['__proto__', 'apikey']);
    expect(read.ok && Object.getOwnPropertyDescriptor(read.request.headers, '__proto__')?.value).toEqual([
      'x',
    ]);
  });

  it.each([
    ['a path too long', { url: `/${'a'.repeat(MAX_PATH_BYTES)}` }, 'path_too_long'],
    ['a query too long', { url: `/x?q=${'a'.repeat(MAX_QUERY_STRING_BYTES)}` }, 'query_too_long'],
    ['too large a header block', { headers: { big: 'a'.repeat(MAX_HEADER_BYTES) } }, 'headers_too_large'],
    ['a bad percent escape', { url: '/v1/%E0%A4%A' }, 'unreadable_path'],
    ['a path that is not a path', { url: 'v1/x' }, 'unreadable_path'],
  ])('refuses %s', (_name, parts, problem) => {
    expect(readRequest({ method: 'GET', url: '/x', headers: {}, ...parts })).toEqual({ ok: false, problem });
  });
});

describe('isReadablePath', () => {
  it('takes visible ASCII with decodable escapes, refuses raw spaces, controls and non-ASCII', () => {
    expect(isReadablePath('/v1/%70remium/../a;b=c')).toBe(true);
    expect(isReadablePath('/v1/a b')).toBe(false);
    expect(isReadablePath('/v1/\u0000')).toBe(false);
    expect(isReadablePath('/v1/é')).toBe(false);
    expect(isReadablePath('/v1/%ff')).toBe(false);
  });
});
