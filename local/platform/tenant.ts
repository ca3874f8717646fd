/**
 * One provider (a provider key) as the Account Management API sees it: its settings, its access tokens,
 * its developer accounts, and the ids it hands out (numbers, as porta's database ids are).
 */
import { AccountBook } from './accounts';
import type { AccessTokenConfig, AdminConfig } from './admin-config';

/** porta's `Settings` as `settings.json` shows them; only the two a portal reads change behaviour here. */
export interface ProviderSettings {
  useraccountarea_enabled: boolean;
  hide_service: boolean;
  signups_enabled: boolean;
  account_approval_required: boolean;
  public_search: boolean;
  account_plans_ui_visible: boolean;
  change_account_plan_permission: string;
  service_plans_ui_visible: boolean;
  change_service_plan_permission: string;
  enforce_sso: boolean;
}

/** Ids start high enough that they never read as a config application's small number. */
const FIRST_ID = 2_445_583_000_001;

export class Tenant {
  readonly settings: ProviderSettings;
  readonly tokens: ReadonlyMap<string, AccessTokenConfig>;
  readonly accounts: AccountBook;
  private lastId = FIRST_ID - 1;

  constructor(
    readonly providerKey: string,
    admin: AdminConfig,
  ) {
    this.settings = {
      useraccountarea_enabled: true,
      hide_service: false,
      signups_enabled: admin.settings.signupsEnabled,
      account_approval_required: admin.settings.accountApprovalRequired,
      public_search: false,
      account_plans_ui_visible: true,
      change_account_plan_permission: 'request',
      service_plans_ui_visible: true,
      change_service_plan_permission: 'request',
      enforce_sso: false,
    };
    this.tokens = new Map(
      admin.accessTokens
        .filter((token) => token.providerKey === providerKey)
        .map((token) => [token.value, token]),
    );
    this.accounts = new AccountBook(() => this.nextId());
  }

  nextId(): string {
    this.lastId += 1;
    return String(this.lastId);
  }
}
