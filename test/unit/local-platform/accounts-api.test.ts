/**
 * Account Find, Read, List, Delete, Approve, Reject and Reset to Pending, as porta's
 * Admin::Api::AccountsController answers them, with their webhooks.
 */
import { describe, expect, it } from 'vitest';
import { TOKENS, USER_KEY_SERVICE, usePortalPlatform } from './admin-fixture';

describe('accounts API', () => {
  const { start, api, events, authrep, signUp, state } = usePortalPlatform();

  it('finds an account by username, user_id or email, and answers 404 with no body otherwise', async () => {
    await start();
    const account = await signUp('alice');
    const queries: Record<string, string>[] = [
      { username: 'alice' },
      { user_id: account.users.user[0].id },
      { email: 'alice@example.com' },
    ];
    for (const query of queries) {
      const found = await api('GET', 'accounts/find.xml', query);
      expect(found.status).toBe(200);
      expect(found.body.account[0]).toMatchObject({ id: account.id, state: 'approved' });
    }
    // username wins over email, as in porta
    expect(
      (await api('GET', 'accounts/find.xml', { username: 'nobody', email: 'alice@example.com' })).status,
    ).toBe(404);
    const missing = await api('GET', 'accounts/find.xml', {});
    expect(missing).toMatchObject({ status: 404, text: '' });
  });

  it('reads one account and lists them by state, paginated with at most 500 a page', async () => {
    await start({ settings: { accountApprovalRequired: true } });
    const first = await signUp('ann');
    const second = await signUp('ben');
    await api('PUT', `accounts/${second.id}/approve.xml`);
    expect((await api('GET', `accounts/${first.id}.xml`)).body.account[0]).toMatchObject({
      id: first.id,
      state: 'created',
      org_name: 'ann Inc',
    });
    expect((await api('GET', 'accounts/999.xml')).status).toBe(404);
    const created = await api('GET', 'accounts.xml', { state: 'created' });
    expect(created.body.accounts.account.map((a: { id: string }) => a.id)).toEqual([first.id]);
    const page = await api('GET', 'accounts.xml', { per_page: '1', page: '2' });
    expect(page.body.accounts).toMatchObject({
      current_page: '2',
      per_page: '1',
      total_entries: '2',
      total_pages: '2',
    });
    expect(page.body.accounts.account.map((a: { id: string }) => a.id)).toEqual([second.id]);
    expect((await api('GET', 'accounts.xml', { per_page: '9000' })).body.accounts.per_page).toBe('500');
    expect((await api('GET', 'accounts.xml', { state: 'bogus' })).body.accounts.account).toBeUndefined();
  });

  it('moves an account through approve, reject and make_pending, each with an account updated webhook', async () => {
    await start({ settings: { accountApprovalRequired: true } });
    const account = await signUp('carol');
    await events(2);
    state.received.length = 0;
    const moves: [string, string][] = [
      ['make_pending', 'pending'],
      ['approve', 'approved'],
      ['reject', 'rejected'],
      ['approve', 'approved'],
    ];
    for (const [event, to] of moves) {
      const answer = await api('PUT', `accounts/${account.id}/${event}.xml`);
      expect(answer.status).toBe(200);
      expect(answer.body.account[0].state).toBe(to);
    }
    const sent = await events(4);
    expect(sent.map((e) => `${e.type} ${e.action} ${e.object.account[0].state}`)).toEqual([
      'account updated pending',
      'account updated approved',
      'account updated rejected',
      'account updated approved',
    ]);
  });

  it('answers an invalid transition 422 as porta does, and changes nothing', async () => {
    await start();
    const account = await signUp('dave');
    const again = await api('PUT', `accounts/${account.id}/approve.xml`);
    expect(again.status).toBe(422);
    expect(again.text).toBe(
      '<?xml version="1.0" encoding="UTF-8"?><errors><error>State cannot transition via "approve"</error></errors>',
    );
    await api('PUT', `accounts/${account.id}/reject.xml`);
    expect((await api('PUT', `accounts/${account.id}/reject.xml`)).status).toBe(422);
    expect((await api('GET', `accounts/${account.id}.xml`)).body.account[0].state).toBe('rejected');
    expect((await api('PUT', 'accounts/42/approve.xml')).status).toBe(404);
  });

  it("leaves the account's applications as they are on rejection, as porta's backend sync does", async () => {
    await start();
    const account = await signUp('erin');
    const key = account.applications.application[0].user_key;
    await api('PUT', `accounts/${account.id}/reject.xml`);
    expect(await authrep({ service_id: USER_KEY_SERVICE, user_key: key })).toBe(200);
  });

  it('deletes an account with its applications: their keys stop at once, with deleted webhooks', async () => {
    await start();
    const account = await signUp('frank');
    const key = account.applications.application[0].user_key;
    await events(3);
    const deleted = await api('DELETE', `accounts/${account.id}.xml`);
    expect(deleted).toMatchObject({ status: 200, text: '' });
    expect(await authrep({ service_id: USER_KEY_SERVICE, user_key: key })).toBe(403);
    expect((await api('GET', `accounts/${account.id}.xml`)).status).toBe(404);
    const sent = await events(5);
    expect(sent.slice(3).map((e) => `${e.type} ${e.action}`)).toEqual([
      'application deleted',
      'account deleted',
    ]);
  });

  it("refuses a member's approve, reject and delete with 403 and no body (admin abilities), but lets it make pending", async () => {
    await start();
    const account = await signUp('gina');
    for (const [method, path] of [
      ['PUT', `accounts/${account.id}/reject.xml`],
      ['PUT', `accounts/${account.id}/approve.xml`],
      ['DELETE', `accounts/${account.id}.xml`],
    ] as const) {
      expect(await api(method, path, {}, TOKENS.member)).toMatchObject({ status: 403, text: '' });
    }
    expect((await api('PUT', `accounts/${account.id}/make_pending.xml`, {}, TOKENS.member)).status).toBe(200);
    expect((await api('GET', `accounts/${account.id}.xml`, {}, TOKENS.member)).body.account[0].state).toBe(
      'pending',
    );
  });
});
