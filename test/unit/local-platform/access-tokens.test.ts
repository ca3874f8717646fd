/**
 * Who may call the Account Management API, as porta decides it: tokens with the account_management
 * scope, ro or rw, owned by an admin or by a member with the partners permission; the provider key.
 */
import { describe, expect, it } from 'vitest';
import { PK, TOKENS, usePortalPlatform } from './admin-fixture';

const PERMISSIONS =
  '<?xml version="1.0" encoding="UTF-8"?><error>Your access token does not have the correct permissions</error>';
const DENIED = '<?xml version="1.0" encoding="UTF-8"?><error>Access denied</error>';

describe('access tokens', () => {
  const { start, api, signUp } = usePortalPlatform();

  it('lets a read-only token read and refuses its writes with the permissions error, changing nothing', async () => {
    await start();
    const account = await signUp('alice');
    expect((await api('GET', `accounts/${account.id}.xml`, {}, TOKENS.adminRo)).status).toBe(200);
    expect((await api('GET', 'settings.json', {}, TOKENS.adminRo)).status).toBe(200);
    const writes = [
      ['PUT', `accounts/${account.id}/reject.xml`],
      ['POST', 'signup.xml'],
      ['PUT', 'settings.json'],
      ['POST', `accounts/${account.id}/applications.xml`],
    ] as const;
    for (const [method, path] of writes) {
      expect(await api(method, path, {}, TOKENS.adminRo)).toMatchObject({ status: 403 });
    }
    expect((await api('PUT', `accounts/${account.id}/reject.xml`, {}, TOKENS.adminRo)).text).toBe(
      PERMISSIONS,
    );
    expect((await api('PUT', 'settings.json', {}, TOKENS.adminRo)).body).toEqual({
      error: 'Your access token does not have the correct permissions',
    });
    expect((await api('GET', `accounts/${account.id}.xml`)).body.account[0].state).toBe('approved');
  });

  it('refuses a token without the account_management scope, and a member without partners', async () => {
    await start();
    for (const token of [TOKENS.stats, TOKENS.memberWithoutPartners]) {
      expect((await api('GET', 'accounts.xml', {}, token)).text).toBe(PERMISSIONS);
    }
  });

  it('lets a member with partners sign developers up and manage applications, but not approve', async () => {
    await start({ settings: { accountApprovalRequired: true } });
    const signup = await api(
      'POST',
      'signup.xml',
      { org_name: 'M', username: 'member-made', email: 'm@example.com', password: 'secret-1' },
      TOKENS.member,
    );
    expect(signup.status).toBe(201);
    const id = signup.body.account[0].id;
    expect(await api('PUT', `accounts/${id}/approve.xml`, {}, TOKENS.member)).toMatchObject({
      status: 403,
      text: '',
    });
    expect((await api('PUT', `accounts/${id}/approve.xml`)).status).toBe(200);
    const created = await api(
      'POST',
      `accounts/${id}/applications.xml`,
      { plan_id: 'Basic', name: 'm' },
      TOKENS.member,
    );
    expect(created.status).toBe(201);
  });

  it('takes the provider key as provider_key or access_token, a token by HTTP Basic too, and answers Access denied to anything else', async () => {
    const platform = await start();
    expect((await api('GET', 'accounts.xml', {}, PK)).status).toBe(200);
    const byKey = await fetch(new URL(`/admin/api/accounts.xml?provider_key=${PK}`, platform.url), {
      signal: AbortSignal.timeout(5000),
    });
    expect(byKey.status).toBe(200);
    const basic = async (credential: string) =>
      (
        await fetch(new URL('/admin/api/accounts.xml', platform.url), {
          headers: { authorization: `Basic ${Buffer.from(credential).toString('base64')}` },
          signal: AbortSignal.timeout(5000),
        })
      ).status;
    // porta's http_authentication: the user name, or the password when the user name is empty
    expect(await basic(`:${TOKENS.adminRw}`)).toBe(200);
    expect(await basic(`${PK}:`)).toBe(200);
    expect(await basic(':nope')).toBe(403);
    for (const token of ['', 'nope']) {
      expect(await api('GET', 'accounts.xml', {}, token)).toMatchObject({ status: 403, text: DENIED });
    }
  });
});
