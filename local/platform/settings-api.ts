/**
 * Settings Read and Update (porta's `Admin::Api::SettingsController`, JSON only): `{"settings": {...}}`
 * with the fields of porta's `SettingsRepresenter`. An update takes the fields flat (as ActiveDocs lists
 * them) or under `settings[...]` (the controller's `params.require(:settings)`, which `wrap_parameters`
 * fills from flat fields), only those in its `ALLOWED_PARAMS`, booleans cast as Rails casts them. A bad
 * value answers 422 `{"errors": {field: [...]}}` and changes nothing. `account_approval_required` is
 * the one switch sign-up follows: porta reads it from the default account plan, which is the local
 * platform's only account plan.
 */
import { type AdminContext, railsBoolean } from './admin-context';
import { AdminApiError, JSON_HEADERS } from './admin-errors';
import { isParamHash, type ParamHash } from './params';
import type { ProviderSettings } from './tenant';
import type { Answer } from './transactor';

type BooleanSetting = {
  [K in keyof ProviderSettings]: ProviderSettings[K] extends boolean ? K : never;
}[keyof ProviderSettings];

const BOOLEAN_SETTINGS: readonly BooleanSetting[] = [
  'useraccountarea_enabled',
  'hide_service',
  'signups_enabled',
  'account_approval_required',
  'public_search',
  'account_plans_ui_visible',
  'service_plans_ui_visible',
  'enforce_sso',
];
const PLAN_PERMISSIONS = ['request', 'none', 'credit_card', 'request_credit_card', 'direct'];
const PERMISSION_SETTINGS = ['change_account_plan_permission', 'change_service_plan_permission'] as const;

function settingsAnswer(settings: ProviderSettings): Answer {
  return { status: 200, headers: JSON_HEADERS, body: JSON.stringify({ settings }) };
}

export function readSettings(context: AdminContext): Answer {
  return settingsAnswer(context.caller.tenant.settings);
}

function given(values: ParamHash, name: string): string | undefined {
  const nested = values.settings;
  const value = isParamHash(nested) && name in nested ? nested[name] : values[name];
  return typeof value === 'string' && value.trim() !== '' ? value.trim() : undefined;
}

export function updateSettings(context: AdminContext): Answer {
  const { settings } = context.caller.tenant;
  const changes: Partial<Record<keyof ProviderSettings, boolean | string>> = {};
  const errors: Record<string, string[]> = {};
  for (const name of BOOLEAN_SETTINGS) {
    const value = given(context.values, name);
    if (value !== undefined) changes[name] = railsBoolean(value);
  }
  for (const name of PERMISSION_SETTINGS) {
    const value = given(context.values, name);
    if (value === undefined) continue;
    if (PLAN_PERMISSIONS.includes(value)) changes[name] = value;
    else errors[name] = ['is not included in the list'];
  }
  if (changes.enforce_sso === true) {
    // The local platform has no authentication providers, so password sign-in cannot be turned off.
    errors.enforce_sso = [
      'Password-based authentication could not be disabled. No published authentication providers.',
    ];
  }
  if (Object.keys(errors).length > 0) throw AdminApiError.invalid(errors);
  Object.assign(settings, changes);
  return settingsAnswer(settings);
}
