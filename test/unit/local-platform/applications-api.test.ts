/**
 * Application Create, List, Read, Delete and Accept, as porta's Admin::Api::BuyersApplicationsController
 * answers them; the applications are the platform's own, so authrep.xml follows each change at once.
 */
import { describe, expect, it } from 'vitest';
import { APP_ID_SERVICE, OIDC_SERVICE, USER_KEY_SERVICE, usePortalPlatform } from './admin-fixture';

describe('applications API', () => {
  const { start, api, events, authrep, signUp, state } = usePortalPlatform();

  async function developer(name: string) {
    await start();
    const account = await signUp(name);
    await events(3);
    state.received.length = 0;
    return account.id as string;
  }

  it('creates a user_key application with a generated key that authorizes at once, with a created webhook', async () => {
    const accountId = await developer('alice');
    const created = await api('POST', `accounts/${accountId}/applications.xml`, {
      plan_id: 'Basic',
      name: 'My app',
      description: 'Words',
    });
    expect(created.status).toBe(201);
    const [application] = created.body.application;
    expect(application).toMatchObject({
      state: 'live',
      user_account_id: accountId,
      service_id: USER_KEY_SERVICE,
      name: 'My app',
      description: 'Words',
    });
    expect(application.user_key).toMatch(/^[0-9a-f]{32}$/);
    expect(await authrep({ service_id: USER_KEY_SERVICE, user_key: application.user_key })).toBe(200);
    const [event] = await events(1);
    expect(event).toMatchObject({ type: 'application', action: 'created' });
    expect(event?.object.application[0].id).toBe(application.id);
  });

  it('creates an app_id application with an 8-hex id and a first key, or with the given ones', async () => {
    const accountId = await developer('bob');
    const generated = (
      await api('POST', `accounts/${accountId}/applications.xml`, { plan_id: 'Pro', name: 'A' })
    ).body.application[0];
    expect(generated.application_id).toMatch(/^[0-9a-f]{8}$/);
    expect(generated.keys.key).toEqual([expect.stringMatching(/^[0-9a-f]{32}$/)]);
    expect(generated.id).not.toBe(generated.application_id);
    const query = { service_id: APP_ID_SERVICE, app_id: generated.application_id };
    expect(await authrep({ ...query, app_key: generated.keys.key[0] })).toBe(200);
    expect(await authrep({ ...query, app_key: 'wrong-key' })).toBe(409);
    const given = await api('POST', `accounts/${accountId}/applications.xml`, {
      plan_id: 'Pro',
      name: 'B',
      application_id: 'my-app-id',
      // Rack: a repeated name keeps its last value; `[]` makes a list.
      'application_key[]': ['first-key', 'second-key'],
    });
    expect(given.body.application[0]).toMatchObject({
      application_id: 'my-app-id',
      keys: { key: ['first-key', 'second-key'] },
    });
    const oidc = (
      await api('POST', `accounts/${accountId}/applications.xml`, { plan_id: 'Client', name: 'C' })
    ).body.application[0];
    expect(oidc).toMatchObject({ service_id: OIDC_SERVICE, redirect_url: '' });
  });

  it('refuses what porta refuses: an unknown account or plan (404), no name, a taken or malformed credential (422)', async () => {
    const accountId = await developer('carol');
    expect((await api('POST', 'accounts/1/applications.xml', { plan_id: 'Basic', name: 'x' })).status).toBe(
      404,
    );
    expect((await api('POST', `accounts/${accountId}/applications.xml`, { name: 'x' })).status).toBe(404);
    expect(
      (await api('POST', `accounts/${accountId}/applications.xml`, { plan_id: 'Gold', name: 'x' })).status,
    ).toBe(404);
    const unnamed = await api('POST', `accounts/${accountId}/applications.xml`, { plan_id: 'Basic' });
    expect(unnamed).toMatchObject({ status: 422, body: { errors: { error: ["Name can't be blank"] } } });
    const taken = await api('POST', `accounts/${accountId}/applications.xml`, {
      plan_id: 'Basic',
      name: 'x',
      user_key: 'config-key',
    });
    expect(taken.body.errors.error).toEqual(['User key has already been taken']);
    const malformed = await api('POST', `accounts/${accountId}/applications.xml`, {
      plan_id: 'Basic',
      name: 'x',
      user_key: 'has spaces',
    });
    expect(malformed.body.errors.error).toEqual(['User key is invalid']);
    const app = (await api('POST', `accounts/${accountId}/applications.xml`, { plan_id: 'Basic', name: 'x' }))
      .body.application[0];
    const changed = await api('PUT', `accounts/${accountId}/applications/${app.id}.xml`, {
      user_key: 'has spaces',
    });
    expect(changed).toMatchObject({ status: 422, body: { errors: { error: ['User key is invalid'] } } });
    const tooMany = await api('POST', `accounts/${accountId}/applications.xml`, {
      plan_id: 'Pro',
      name: 'x',
      'application_key[]': ['key-1', 'key-2', 'key-3', 'key-4', 'key-5', 'key-6'],
    });
    expect(tooMany.body.errors.error).toEqual(['Limit reached']);
  });

  it('starts an application on an approval_required plan pending, refused until accept.xml', async () => {
    const accountId = await developer('dave');
    const pending = (
      await api('POST', `accounts/${accountId}/applications.xml`, { plan_id: 'Reviewed', name: 'x' })
    ).body.application[0];
    expect(pending.state).toBe('pending');
    const query = { service_id: USER_KEY_SERVICE, user_key: pending.user_key };
    expect(await authrep(query)).toBe(409);
    const accepted = await api('PUT', `accounts/${accountId}/applications/${pending.id}/accept.xml`);
    expect(accepted.body.application[0].state).toBe('live');
    expect(accepted.body.application[0].created_at).toBe(pending.created_at);
    expect(Date.parse(accepted.body.application[0].updated_at)).toBeGreaterThanOrEqual(
      Date.parse(pending.created_at),
    );
    expect(await authrep(query)).toBe(200);
    const again = await api('PUT', `accounts/${accountId}/applications/${pending.id}/accept.xml`);
    expect(again).toMatchObject({
      status: 422,
      body: { errors: { error: ['State cannot transition via "accept"'] } },
    });
    expect((await events(2)).map((e) => e.action)).toEqual(['created', 'updated']);
  });

  it('dates an application as porta does: created_at at creation, updated_at at each change', async () => {
    const clock = { time: Date.UTC(2026, 0, 2, 3, 4, 5) };
    await start({}, () => clock.time);
    const account = await signUp('hana');
    const created = (
      await api('POST', `accounts/${account.id}/applications.xml`, { plan_id: 'Pro', name: 'x' })
    ).body.application[0];
    expect(created).toMatchObject({ created_at: '2026-01-02T03:04:05Z', updated_at: '2026-01-02T03:04:05Z' });
    clock.time += 60_000;
    const path = `accounts/${account.id}/applications/${created.id}`;
    expect((await api('POST', `${path}/keys.xml`)).body.application[0]).toMatchObject({
      created_at: '2026-01-02T03:04:05Z',
      updated_at: '2026-01-02T03:05:05Z',
    });
    clock.time += 60_000;
    await api('PUT', `${path}/suspend.xml`);
    expect((await api('GET', `${path}.xml`)).body.application[0].updated_at).toBe('2026-01-02T03:06:05Z');
  });

  it("lists and reads an account's applications, by state too, and not another account's", async () => {
    const accountId = await developer('erin');
    const other = await signUp('frank');
    await api('POST', `accounts/${accountId}/applications.xml`, { plan_id: 'Reviewed', name: 'pending one' });
    const list = await api('GET', `accounts/${accountId}/applications.xml`);
    expect(list.body.applications.application.map((a: { name: string }) => a.name)).toEqual([
      'API signup',
      'pending one',
    ]);
    const pending = await api('GET', `accounts/${accountId}/applications.xml`, { state: 'pending' });
    expect(pending.body.applications.application.map((a: { name: string }) => a.name)).toEqual([
      'pending one',
    ]);
    const live = list.body.applications.application[0];
    expect(
      (await api('GET', `accounts/${accountId}/applications/${live.id}.xml`)).body.application[0].id,
    ).toBe(live.id);
    expect((await api('GET', `accounts/${other.id}/applications/${live.id}.xml`)).status).toBe(404);
  });

  it('deletes an application: 200 with no body, its key refused at once, a deleted webhook', async () => {
    const accountId = await developer('gina');
    const app = (await api('POST', `accounts/${accountId}/applications.xml`, { plan_id: 'Basic', name: 'x' }))
      .body.application[0];
    const deleted = await api('DELETE', `accounts/${accountId}/applications/${app.id}.xml`);
    expect(deleted).toMatchObject({ status: 200, text: '' });
    expect(await authrep({ service_id: USER_KEY_SERVICE, user_key: app.user_key })).toBe(403);
    expect((await api('GET', `accounts/${accountId}/applications/${app.id}.xml`)).status).toBe(404);
    expect((await events(2)).map((e) => e.action)).toEqual(['created', 'deleted']);
  });
});
