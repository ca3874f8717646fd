/**
 * POST /admin/api/signup.xml, as porta's Signup Express answers it: the account with its admin user and
 * an "API signup" application on each service's default plan, its state following
 * account_approval_required, and porta's validation errors.
 */
import { describe, expect, it } from 'vitest';
import { USER_KEY_SERVICE, usePortalPlatform } from './admin-fixture';

describe('signup.xml', () => {
  const { start, api, events, authrep, signUp } = usePortalPlatform();

  it('creates an approved account, an active admin user and a live application whose key authorizes at once', async () => {
    await start();
    const account = await signUp('alice');
    expect(account).toMatchObject({ state: 'approved', org_name: 'alice Inc' });
    expect(account.users.user).toEqual([
      expect.objectContaining({
        username: 'alice',
        email: 'alice@example.com',
        state: 'active',
        role: 'admin',
      }),
    ]);
    // Only the user_key service has a default plan.
    const [application] = account.applications.application;
    expect(account.applications.application).toHaveLength(1);
    expect(application).toMatchObject({
      state: 'live',
      user_account_id: account.id,
      service_id: USER_KEY_SERVICE,
      name: 'API signup',
      description: 'API signup',
    });
    expect(application.user_key).toMatch(/^[0-9a-f]{32}$/);
    expect(application.plan[0]).toMatchObject({ name: 'Basic', default: 'true', type: 'application_plan' });
    expect(await authrep({ service_id: USER_KEY_SERVICE, user_key: application.user_key })).toBe(200);
    const sent = await events(3);
    expect(sent.map((event) => `${event.type} ${event.action}`)).toEqual([
      'account created',
      'user created',
      'application created',
    ]);
    expect(sent[0]?.object.account[0]).toMatchObject({ id: account.id, state: 'approved' });
  });

  it('leaves the account created and its user pending when approval is required', async () => {
    await start({ settings: { accountApprovalRequired: true } });
    const account = await signUp('bob');
    expect(account.state).toBe('created');
    expect(account.users.user[0].state).toBe('pending');
    expect(account.plans.plan[0]).toMatchObject({ type: 'account_plan', approval_required: 'true' });
  });

  it('follows a settings.json change without a restart', async () => {
    await start();
    expect((await api('PUT', 'settings.json', { account_approval_required: 'true' })).status).toBe(200);
    expect((await signUp('carol')).state).toBe('created');
  });

  it('subscribes to the plan application_plan_id names instead of the default', async () => {
    await start();
    const account = await signUp('dave', { application_plan_id: 'Reviewed' });
    const [application] = account.applications.application;
    expect(application).toMatchObject({
      state: 'pending',
      plan: [expect.objectContaining({ name: 'Reviewed' })],
    });
    expect(await authrep({ service_id: USER_KEY_SERVICE, user_key: application.user_key })).toBe(409);
    expect((await api('POST', 'signup.xml', { application_plan_id: 'Nope' })).status).toBe(404);
  });

  it('answers 422 with each missing field, and refuses a taken username or e-mail', async () => {
    await start();
    const empty = await api('POST', 'signup.xml', {});
    expect(empty.status).toBe(422);
    expect(empty.body.errors.error).toEqual([
      "Org name can't be blank",
      'Username is too short (minimum is 3 characters)',
      "Email can't be blank",
      "Password can't be blank",
    ]);
    await signUp('erin');
    const again = await api('POST', 'signup.xml', {
      org_name: 'Other',
      username: 'erin',
      email: 'ERIN@example.com',
      password: 'x-secret',
    });
    expect(again.status).toBe(422);
    expect(again.body.errors.error).toEqual([
      'Username has already been taken',
      'Email has already been taken',
    ]);
    const valid = { org_name: 'O', username: 'ok-name', email: 'n@example.com', password: 'p' };
    const refusals: [Record<string, string>, string][] = [
      [{ username: 'no spaces' }, 'Username use only letters, numbers, and .-_@+ please.'],
      [{ username: 'x'.repeat(41) }, 'Username is too long (maximum is 40 characters)'],
      [{ email: 'a@b' }, 'Email is too short (minimum is 6 characters)'],
    ];
    for (const [change, message] of refusals) {
      expect((await api('POST', 'signup.xml', { ...valid, ...change })).body.errors.error).toEqual([message]);
    }
  });

  it('does not read signups_enabled, as porta API does not: the portal must refuse itself', async () => {
    await start({ settings: { signupsEnabled: false } });
    expect((await signUp('frank')).state).toBe('approved');
  });

  it('never shows the password', async () => {
    await start();
    const answer = await api('POST', 'signup.xml', {
      org_name: 'G',
      username: 'grace',
      email: 'grace@example.com',
      password: 'hunter2-unique',
    });
    expect(answer.text).not.toContain('hunter2-unique');
    const found = await api('GET', 'accounts/find.xml', { username: 'grace' });
    expect(found.text).not.toContain('hunter2-unique');
  });
});
