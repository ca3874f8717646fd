/**
 * Application Key List, Create and Delete, as porta's Admin::Api::BuyerApplicationKeysController answers
 * them: generated keys, at most 5 (1 for OIDC), each change effective at authrep.xml at once.
 */
import { describe, expect, it } from 'vitest';
import { APP_ID_SERVICE, OIDC_SERVICE, usePortalPlatform } from './admin-fixture';

describe('application keys API', () => {
  const { start, api, events, authrep, signUp } = usePortalPlatform();

  async function application(plan: string) {
    await start();
    const account = await signUp('alice');
    const created = await api('POST', `accounts/${account.id}/applications.xml`, {
      plan_id: plan,
      name: 'keys',
    });
    const app = created.body.application[0];
    return {
      path: `accounts/${account.id}/applications/${app.id}`,
      appId: app.application_id,
      first: app.keys.key[0],
    };
  }

  it('lists keys, generates one when none is given, and refuses the sixth with "Limit reached"', async () => {
    const { path, appId, first } = await application('Pro');
    expect((await api('GET', `${path}/keys.xml`)).body.keys.key).toEqual([{ value: first }]);
    const generated = await api('POST', `${path}/keys.xml`);
    expect(generated.status).toBe(201);
    const added = generated.body.application[0].keys.key[1];
    expect(added).toMatch(/^[0-9a-f]{32}$/);
    expect(await authrep({ service_id: APP_ID_SERVICE, app_id: appId, app_key: added })).toBe(200);
    for (const key of ['key-three', 'key-four', 'key-five']) {
      expect((await api('POST', `${path}/keys.xml`, { key })).status).toBe(201);
    }
    const sixth = await api('POST', `${path}/keys.xml`, { key: 'key-six' });
    expect(sixth).toMatchObject({ status: 422, body: { errors: { error: ['Limit reached'] } } });
    expect((await api('GET', `${path}/keys.xml`)).body.keys.key).toHaveLength(5);
  });

  it('refuses a short, spaced or repeated key with porta messages', async () => {
    const { path, first } = await application('Pro');
    const problems = [
      ['abc', 'Value is too short (minimum is 5 characters)'],
      ['has a space', 'Value is invalid'],
      [first.toUpperCase(), 'Value has already been taken'],
    ];
    for (const [key, message] of problems) {
      expect((await api('POST', `${path}/keys.xml`, { key: key as string })).body.errors.error).toEqual([
        message,
      ]);
    }
  });

  it('deletes a key: 200 with no body, the key refused at once, 404 for an unknown one, each with its webhook', async () => {
    const { path, appId, first } = await application('Pro');
    await api('POST', `${path}/keys.xml`, { key: 'second-key' });
    expect(await api('DELETE', `${path}/keys/${first}.xml`)).toMatchObject({ status: 200, text: '' });
    expect(await authrep({ service_id: APP_ID_SERVICE, app_id: appId, app_key: first })).toBe(409);
    expect(await authrep({ service_id: APP_ID_SERVICE, app_id: appId, app_key: 'second-key' })).toBe(200);
    expect((await api('DELETE', `${path}/keys/${first}.xml`)).status).toBe(404);
    const actions = (await events(6)).map((event) => `${event.type} ${event.action}`);
    expect(actions.slice(-2)).toEqual(['application key_created', 'application key_deleted']);
  });

  it('holds one client secret in an OIDC service', async () => {
    const { path } = await application('Client');
    expect((await api('GET', `${path}.xml`)).body.application[0].service_id).toBe(OIDC_SERVICE);
    expect((await api('POST', `${path}/keys.xml`, { key: 'another-secret' })).body.errors.error).toEqual([
      'Limit reached',
    ]);
  });
});
