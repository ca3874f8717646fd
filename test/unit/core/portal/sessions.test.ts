/**
 * Sessions on a real redis-server: a signed cookie with the portal's flags, revocable by a version, the
 * session id kept as its SHA-256.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { PortalRequest } from '../../../../core/portal/http';
import { SessionStore } from '../../../../core/portal/sessions';
import { describeOnTopologies } from '../../../support/redis-topology';

function request(cookie = '', proto = 'https'): PortalRequest {
  return {
    method: 'GET',
    base: '/portal',
    path: '/app',
    query: {},
    headers: { host: 'api.example.com', 'x-forwarded-proto': proto, cookie },
    body: '',
    sourceAddress: '192.0.2.1',
  };
}

/** The `name=value` of a Set-Cookie, to send back. */
const sent = (setCookie: string) => setCookie.split(';', 1)[0] as string;

describeOnTopologies(['redis-server'], (redis) => {
  afterEach(async () => {
    await redis().flushAll();
  });

  describe('SessionStore', () => {
    it('opens a session behind a signed cookie with the portal flags, and closes it', async () => {
      const sessions = new SessionStore(await redis().client(), 'portal:t:', 'k'.repeat(32));
      const setCookie = await sessions.open(request(), 'acc-1', 'e@example.com');
      expect(setCookie).toMatch(
        /^__Host-portal-session=[^;]+; Path=\/; Max-Age=\d+; HttpOnly; SameSite=Lax; Secure$/,
      );
      const session = await sessions.of(request(sent(setCookie)));
      expect(session).toMatchObject({ accountId: 'acc-1', email: 'e@example.com' });
      await sessions.close(session as NonNullable<typeof session>);
      expect(await sessions.of(request(sent(setCookie)))).toBeUndefined();
    });

    it('over plain http names the cookie without __Host- and leaves Secure off', async () => {
      const sessions = new SessionStore(await redis().client(), 'portal:t:', 'k'.repeat(32));
      const setCookie = await sessions.open(request('', 'http'), 'acc-1', 'e@example.com');
      expect(setCookie).toMatch(/^portal-session=/);
      expect(setCookie).not.toContain('Secure');
    });

    it('refuses a cookie whose signature is not the portal key’s', async () => {
      const sessions = new SessionStore(await redis().client(), 'portal:t:', 'k'.repeat(32));
      const setCookie = await sessions.open(request(), 'acc-1', 'e@example.com');
      const [name, value] = sent(setCookie).split('=') as [string, string];
      const forged = `${name}=${value.slice(0, value.lastIndexOf('.'))}.AAAA`;
      expect(await sessions.of(request(forged))).toBeUndefined();
      const other = new SessionStore(await redis().client(), 'portal:t:', 'x'.repeat(32));
      expect(await other.of(request(sent(setCookie)))).toBeUndefined();
    });

    it('ends every session of the account when its version is raised', async () => {
      const sessions = new SessionStore(await redis().client(), 'portal:t:', 'k'.repeat(32));
      const first = sent(await sessions.open(request(), 'acc-1', 'e@example.com'));
      const second = sent(await sessions.open(request(), 'acc-1', 'e@example.com'));
      const other = sent(await sessions.open(request(), 'acc-2', 'f@example.com'));
      await sessions.revokeAll('acc-1');
      expect(await sessions.of(request(first))).toBeUndefined();
      expect(await sessions.of(request(second))).toBeUndefined();
      expect(await sessions.of(request(other))).toBeDefined();
      // A session opened after the revocation works.
      expect(
        await sessions.of(request(sent(await sessions.open(request(), 'acc-1', 'e@example.com')))),
      ).toBeDefined();
    });

    it('keeps the session id only as its SHA-256', async () => {
      const sessions = new SessionStore(await redis().client(), 'portal:t:', 'k'.repeat(32));
      const cookie = sent(await sessions.open(request(), 'acc-1', 'e@example.com'));
      const id = cookie.slice(cookie.indexOf('=') + 1, cookie.lastIndexOf('.'));
      const keys = await redis().keys();
      expect(keys.join()).not.toContain(id);
      expect(keys.some((key) => /^portal:t:session:[0-9a-f]{64}$/.test(key))).toBe(true);
    });
  });
});
