import { describe, expect, it } from 'vitest';
import { checkCsrf, csrfBinding, csrfToken } from '../../../../core/portal/csrf';
import type { PortalRequest } from '../../../../core/portal/http';

const KEY = 'signing-key-signing-key-signing-key';
const BINDING = 'b'.repeat(43);

function post(headers: Record<string, string>): PortalRequest {
  return {
    method: 'POST',
    base: '/prod/portal',
    path: '/signup',
    query: {},
    headers: { host: 'api.example.com', cookie: `__Host-portal-csrf=${BINDING}`, ...headers },
    body: '',
    sourceAddress: '192.0.2.1',
  };
}

describe('checkCsrf', () => {
  const token = csrfToken(KEY, BINDING);

  it('lets a same-origin form with its token through', () => {
    expect(
      checkCsrf(post({ origin: 'https://api.example.com', 'sec-fetch-site': 'same-origin' }), KEY, token),
    ).toEqual({ ok: true });
    // A client that sends neither header still needs the token.
    expect(checkCsrf(post({}), KEY, token)).toEqual({ ok: true });
  });

  it('refuses a foreign Origin, an Origin of null, and a cross-site or same-site fetch', () => {
    expect(checkCsrf(post({ origin: 'https://evil.example' }), KEY, token).ok).toBe(false);
    expect(checkCsrf(post({ origin: 'null' }), KEY, token).ok).toBe(false);
    expect(checkCsrf(post({ 'sec-fetch-site': 'cross-site' }), KEY, token).ok).toBe(false);
    expect(checkCsrf(post({ 'sec-fetch-site': 'same-site' }), KEY, token).ok).toBe(false);
  });

  it('refuses a missing token, a wrong one, and one of another browser’s cookie', () => {
    expect(checkCsrf(post({}), KEY, undefined).ok).toBe(false);
    expect(checkCsrf(post({}), KEY, `${token}x`).ok).toBe(false);
    expect(checkCsrf(post({}), KEY, csrfToken(KEY, 'c'.repeat(43))).ok).toBe(false);
    expect(checkCsrf(post({}), 'another-key', token).ok).toBe(false);
  });

  it('compares the origin with the scheme the gateway reports', () => {
    const local = post({
      origin: 'http://api.example.com',
      'x-forwarded-proto': 'http',
      cookie: `portal-csrf=${BINDING}`,
    });
    expect(checkCsrf(local, KEY, token)).toEqual({ ok: true });
  });
});

describe('csrfBinding', () => {
  it('keeps a browser’s cookie, or makes one with the portal flags', () => {
    expect(csrfBinding(post({}))).toEqual({ value: BINDING });
    const fresh = csrfBinding({ ...post({}), headers: { host: 'api.example.com' } });
    expect(fresh.value).toHaveLength(43);
    expect(fresh.setCookie).toMatch(
      /^__Host-portal-csrf=[^;]+; Path=\/; Max-Age=\d+; HttpOnly; SameSite=Lax; Secure$/,
    );
  });
});
