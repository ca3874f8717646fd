/**
 * One-time links on a real redis-server: a GET reads, a POST uses once, expiry by the portal's clock, the
 * token kept as its SHA-256.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { LINK_TTL_MS, LinkStore } from '../../../../core/portal/links';
import { describeOnTopologies } from '../../../support/redis-topology';

describeOnTopologies(['redis-server'], (redis) => {
  afterEach(async () => {
    await redis().flushAll();
  });

  describe('LinkStore', () => {
    it('is read by peek without being used, used once by use, then gone', async () => {
      const links = new LinkStore(await redis().client(), 'portal:t:', Date.now);
      const token = await links.issue({ purpose: 'signup', email: 'a@example.com', orgName: 'A' });
      expect(await links.peek(token)).toEqual({
        kind: 'valid',
        facts: { purpose: 'signup', email: 'a@example.com', orgName: 'A' },
      });
      expect((await links.peek(token)).kind).toBe('valid');
      expect((await links.use(token)).kind).toBe('valid');
      expect(await links.use(token)).toEqual({ kind: 'gone' });
      expect(await links.peek(token)).toEqual({ kind: 'gone' });
    });

    it('lets only one of two concurrent uses through', async () => {
      const links = new LinkStore(await redis().client(), 'portal:t:', Date.now);
      const token = await links.issue({ purpose: 'signin', email: 'b@example.com' });
      const kinds = (await Promise.all([links.use(token), links.use(token)]))
        .map((lookup) => lookup.kind)
        .sort();
      expect(kinds).toEqual(['gone', 'valid']);
    });

    it('expires after 15 minutes of the portal clock', async () => {
      let now = 1_000_000;
      const links = new LinkStore(await redis().client(), 'portal:t:', () => now);
      const token = await links.issue({ purpose: 'signin', email: 'c@example.com' });
      now += LINK_TTL_MS - 1;
      expect((await links.peek(token)).kind).toBe('valid');
      now += 1;
      expect((await links.peek(token)).kind).toBe('gone');
      expect((await links.use(token)).kind).toBe('gone');
    });

    it('keeps the token only as its SHA-256', async () => {
      const links = new LinkStore(await redis().client(), 'portal:t:', Date.now);
      const token = await links.issue({ purpose: 'signin', email: 'd@example.com' });
      const keys = await redis().keys();
      expect(keys).toHaveLength(1);
      expect(keys[0]).toMatch(/^portal:t:link:[0-9a-f]{64}$/);
      expect(keys.join()).not.toContain(token);
    });
  });
});
