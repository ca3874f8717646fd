/**
 * The "Actions in the admin portal also trigger webhooks" switch (porta's WebHook#provider_actions):
 * off, no change made through the Account Management API sends a webhook; PUT webhooks.json flips it.
 */
import { describe, expect, it } from 'vitest';
import { USER_KEY_SERVICE, usePortalPlatform } from './admin-fixture';

describe('webhooks.json and provider_actions', () => {
  const { start, api, events, signUp, state } = usePortalPlatform();

  /** A change made on the platform itself (not through the API) always sends its webhook: once it has
   * arrived, any webhook sent before it would have arrived too. */
  async function onlyTheMarkerArrives() {
    state.platform.setApplicationState(USER_KEY_SERVICE, 'app-config', 'suspended');
    await events(1);
    expect(state.received.map((event) => `${event.type} ${event.action}`)).toEqual(['application suspended']);
    state.received.length = 0;
  }

  it('sends no webhook from API changes with the switch off (stack file), and sends them once turned on', async () => {
    await start({ webhookProviderActions: false });
    const account = await signUp('alice');
    await api('PUT', `accounts/${account.id}/reject.xml`);
    await api(
      'PUT',
      `accounts/${account.id}/applications/${account.applications.application[0].id}/suspend.xml`,
    );
    await onlyTheMarkerArrives();
    const turned = await api('PUT', 'webhooks.json', { provider_actions: 'true' });
    expect(turned.body).toEqual({
      webhook: { url: expect.stringMatching(/\/hook$/), active: true, provider_actions: true },
    });
    await api('PUT', `accounts/${account.id}/approve.xml`);
    const [event] = await events(1);
    expect(event).toMatchObject({ type: 'account', action: 'updated' });
  });

  it('turns the switch off with web_hook[provider_actions], and refuses what it does not model', async () => {
    await start();
    const off = await api('PUT', 'webhooks.json', { 'web_hook[provider_actions]': 'false' });
    expect(off.body.webhook.provider_actions).toBe(false);
    await signUp('bob');
    await onlyTheMarkerArrives();
    const url = await api('PUT', 'webhooks.json', { url: 'http://127.0.0.1:1/x' });
    expect(url).toMatchObject({
      status: 422,
      body: { errors: { url: ['is not modelled by the local platform (set webhooks in the stack file)'] } },
    });
  });
});
