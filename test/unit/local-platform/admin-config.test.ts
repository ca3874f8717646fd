/** The `platform.admin` section: provider settings, access tokens and the webhook switch, validated. */
import { describe, expect, it } from 'vitest';
import { loadPlatformConfig } from '../../../local/platform/config';

function withAdmin(admin: unknown, providerKeys: string[] = ['pk-1']) {
  return {
    services: providerKeys.map((providerKey, i) => ({
      id: `s${i}`,
      providerKey,
      authentication: 'user_key',
      plans: [{ name: 'P' }],
    })),
    admin,
  };
}

function message(input: unknown): string {
  try {
    loadPlatformConfig(input);
    return 'accepted';
  } catch (error) {
    return (error as Error).message;
  }
}

describe('platform.admin config', () => {
  it('defaults to no approval, open sign-ups, webhooks from API changes, no tokens', () => {
    expect(loadPlatformConfig(withAdmin(undefined)).admin).toEqual({
      settings: { accountApprovalRequired: false, signupsEnabled: true },
      webhookProviderActions: true,
      accessTokens: [],
    });
  });

  it('reads a token, filling the only provider key and the admin role', () => {
    const admin = loadPlatformConfig(
      withAdmin({
        accessTokens: [{ value: 't', permission: 'ro', scopes: ['account_management', 'stats'] }],
      }),
    ).admin;
    expect(admin?.accessTokens).toEqual([
      {
        value: 't',
        providerKey: 'pk-1',
        role: 'admin',
        permission: 'ro',
        scopes: ['account_management', 'stats'],
        memberPermissions: [],
      },
    ]);
  });

  it.each([
    [
      'a bad scope',
      { accessTokens: [{ value: 't', permission: 'rw', scopes: ['admin'] }] },
      'scopes[0] must be one of',
    ],
    ['no permission', { accessTokens: [{ value: 't', scopes: [] }] }, 'permission must be one of ro, rw'],
    [
      'member permissions on an admin',
      { accessTokens: [{ value: 't', permission: 'rw', scopes: [], memberPermissions: ['partners'] }] },
      'applies to a member only',
    ],
    [
      'a token equal to a provider key',
      { accessTokens: [{ value: 'pk-1', permission: 'rw', scopes: [] }] },
      'repeats another token or a provider key',
    ],
    ['a non-boolean switch', { settings: { accountApprovalRequired: 'yes' } }, 'must be true or false'],
    ['an unknown field', { approvals: true }, 'platform.admin.approvals is not a known setting'],
  ])('stops on %s', (_name, admin, expected) => {
    expect(message(withAdmin(admin))).toContain(expected);
  });

  it('asks which provider a token belongs to when there are several', () => {
    const tokens = { accessTokens: [{ value: 't', permission: 'rw', scopes: [] }] };
    expect(message(withAdmin(tokens, ['pk-1', 'pk-2']))).toContain(
      'providerKey is required when the services have several provider keys',
    );
    expect(
      message(
        withAdmin({ accessTokens: [{ ...tokens.accessTokens[0], providerKey: 'pk-3' }] }, ['pk-1', 'pk-2']),
      ),
    ).toContain('must be the providerKey of one of the services');
  });

  it('allows one default plan per service', () => {
    const config = {
      services: [
        {
          id: 's',
          providerKey: 'pk',
          authentication: 'user_key',
          plans: [
            { name: 'A', default: true },
            { name: 'B', default: true },
          ],
        },
      ],
    };
    expect(message(config)).toContain('may mark at most one plan as default');
  });
});
