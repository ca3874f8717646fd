import { describe, expect, it } from 'vitest';
import { DEFAULT_PORTAL_SETTINGS, parsePortalSettings } from '../../../../core/portal/settings';

describe('parsePortalSettings', () => {
  it('gives the defaults for an empty object', () => {
    expect(parsePortalSettings({})).toEqual(DEFAULT_PORTAL_SETTINGS);
    expect(DEFAULT_PORTAL_SETTINGS).toMatchObject({
      keyReveal: 'creating-tab',
      multipleApplications: false,
      signups: 'open',
      rollGraceSeconds: 86_400,
      signupsPerHour: 100,
    });
  });

  it('takes every setting', () => {
    const settings = {
      keyReveal: 'always',
      multipleApplications: true,
      allowedEmailDomains: ['example.com'],
      signups: 'invite',
      rollGraceSeconds: 0,
      signupsPerHour: 10,
      mailFrom: 'dev@example.com',
    } as const;
    expect(parsePortalSettings(settings)).toEqual(settings);
  });

  it.each([
    [{ keyReveal: 'never' }, 'gateway.portal.keyReveal'],
    [{ signups: 'closed' }, 'gateway.portal.signups'],
    [{ allowedEmailDomains: ['Not A Domain'] }, 'gateway.portal.allowedEmailDomains'],
    [{ rollGraceSeconds: -1 }, 'gateway.portal.rollGraceSeconds'],
    [{ signupsPerHour: 1.5 }, 'gateway.portal.signupsPerHour'],
    [{ mailFrom: 'nobody' }, 'gateway.portal.mailFrom'],
    [{ colour: 'blue' }, 'gateway.portal.colour'],
  ])('refuses %j, naming %s', (input, setting) => {
    expect(() => parsePortalSettings(input, 'gateway.portal')).toThrow(setting);
  });

  it('refuses what is not an object', () => {
    expect(() => parsePortalSettings([], 'portal')).toThrow('portal must be an object');
  });
});
