/** Settings Read and Update, as porta's Admin::Api::SettingsController answers them (JSON). */
import { describe, expect, it } from 'vitest';
import { usePortalPlatform } from './admin-fixture';

const PORTA_DEFAULTS = {
  useraccountarea_enabled: true,
  hide_service: false,
  signups_enabled: true,
  account_approval_required: false,
  public_search: false,
  account_plans_ui_visible: true,
  change_account_plan_permission: 'request',
  service_plans_ui_visible: true,
  change_service_plan_permission: 'request',
  enforce_sso: false,
};

describe('settings.json', () => {
  const { start, api } = usePortalPlatform();

  it("reads porta's settings, with the stack file's approval and sign-up switches", async () => {
    await start();
    const answer = await api('GET', 'settings.json');
    expect(answer.status).toBe(200);
    expect(answer.contentType).toContain('application/json');
    expect(answer.body).toEqual({ settings: PORTA_DEFAULTS });
    await start({ settings: { accountApprovalRequired: true, signupsEnabled: false } });
    expect((await api('GET', 'settings.json')).body.settings).toMatchObject({
      account_approval_required: true,
      signups_enabled: false,
    });
  });

  it('updates from flat fields or settings[...], casting booleans as Rails does', async () => {
    await start();
    const flat = await api('PUT', 'settings.json', {
      account_approval_required: '1',
      signups_enabled: 'false',
    });
    expect(flat.body.settings).toMatchObject({ account_approval_required: true, signups_enabled: false });
    const nested = await api('PUT', 'settings.json', { 'settings[signups_enabled]': 'true' });
    expect(nested.body.settings).toMatchObject({ account_approval_required: true, signups_enabled: true });
    expect((await api('GET', 'settings.json')).body.settings.signups_enabled).toBe(true);
  });

  it('answers a bad value 422 with the errors by field, and changes nothing', async () => {
    await start();
    const answer = await api('PUT', 'settings.json', {
      signups_enabled: 'false',
      change_account_plan_permission: 'invalid',
    });
    expect(answer.status).toBe(422);
    expect(answer.body).toEqual({
      errors: { change_account_plan_permission: ['is not included in the list'] },
    });
    expect((await api('GET', 'settings.json')).body.settings.signups_enabled).toBe(true);
    const sso = await api('PUT', 'settings.json', { enforce_sso: 'true' });
    expect(sso.body.errors.enforce_sso).toEqual([
      'Password-based authentication could not be disabled. No published authentication providers.',
    ]);
  });
});
