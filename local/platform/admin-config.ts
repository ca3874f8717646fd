/**
 * The `platform.admin` section of the local stack file: what the Account Management API needs beyond
 * services and plans. The provider's settings (porta's `Settings`: `account_approval_required`,
 * `signups_enabled`), its access tokens (porta's `AccessToken`: scopes, `ro`/`rw`, owned by an admin or
 * a member user with permissions) and the webhook switch "Actions in the admin portal also trigger
 * webhooks" (porta's `WebHook#provider_actions`).
 */
import { ConfigError, knownFields, nonEmpty, oneOf, optionalNonEmpty } from '../../core/settings/config';

/** porta's `AccessToken::SCOPES`. */
export const TOKEN_SCOPES = ['cms', 'finance', 'account_management', 'stats', 'policy_registry'] as const;
export type TokenScope = (typeof TOKEN_SCOPES)[number];
/** porta's `AccessToken::PERMISSIONS`. */
export type TokenPermission = 'ro' | 'rw';
export type UserRole = 'admin' | 'member';
/** The admin sections a provider member may be given (porta's `AdminSection`), as the abilities name them. */
export const MEMBER_PERMISSIONS = [
  'partners',
  'monitoring',
  'plans',
  'settings',
  'portal',
  'finance',
  'policy_registry',
] as const;
export type MemberPermission = (typeof MEMBER_PERMISSIONS)[number];

export interface AccessTokenConfig {
  /** The token's value, as callers send it in `access_token`. */
  readonly value: string;
  /** The provider (tenant) owning the token; may be left out when the platform has one provider key. */
  readonly providerKey: string;
  readonly role: UserRole;
  readonly permission: TokenPermission;
  readonly scopes: readonly TokenScope[];
  /** A member's admin sections; `partners` is what the Account Management API asks of a member. */
  readonly memberPermissions: readonly MemberPermission[];
}

export interface ProviderSettingsConfig {
  readonly accountApprovalRequired: boolean;
  readonly signupsEnabled: boolean;
}

export interface AdminConfig {
  readonly settings: ProviderSettingsConfig;
  /** Off: a change made through the Account Management API sends no webhook (porta's `push_user?`). */
  readonly webhookProviderActions: boolean;
  readonly accessTokens: readonly AccessTokenConfig[];
}

export function flag(setting: string, value: unknown, fallback: boolean): boolean {
  if (value === undefined) return fallback;
  if (typeof value !== 'boolean')
    throw new ConfigError(setting, `must be true or false (got ${JSON.stringify(value)})`);
  return value;
}

function stringList<T extends string>(setting: string, value: unknown, allowed: readonly T[]): T[] {
  if (!Array.isArray(value)) throw new ConfigError(setting, 'must be an array');
  return [...new Set(value.map((entry, i) => oneOf(`${setting}[${i}]`, entry, allowed)))];
}

function accessToken(setting: string, value: unknown, providerKeys: ReadonlySet<string>): AccessTokenConfig {
  const fields = knownFields(setting, value, [
    'value',
    'providerKey',
    'role',
    'permission',
    'scopes',
    'memberPermissions',
  ]);
  const only = providerKeys.size === 1 ? [...providerKeys][0] : undefined;
  const providerKey = optionalNonEmpty(`${setting}.providerKey`, fields.providerKey) ?? only;
  if (providerKey === undefined || !providerKeys.has(providerKey)) {
    throw new ConfigError(
      `${setting}.providerKey`,
      providerKey === undefined
        ? 'is required when the services have several provider keys'
        : 'must be the providerKey of one of the services',
    );
  }
  const role = oneOf<UserRole>(`${setting}.role`, fields.role ?? 'admin', ['admin', 'member']);
  const memberPermissions = stringList(
    `${setting}.memberPermissions`,
    fields.memberPermissions ?? [],
    MEMBER_PERMISSIONS,
  );
  if (role === 'admin' && memberPermissions.length > 0) {
    throw new ConfigError(`${setting}.memberPermissions`, 'applies to a member only (an admin has them all)');
  }
  return {
    value: nonEmpty(`${setting}.value`, fields.value),
    providerKey,
    role,
    permission: oneOf<TokenPermission>(`${setting}.permission`, fields.permission, ['ro', 'rw']),
    scopes: stringList(`${setting}.scopes`, fields.scopes, TOKEN_SCOPES),
    memberPermissions,
  };
}

/** Validates `platform.admin`; `providerKeys` are the services' provider keys (the tenants). */
export function adminConfig(setting: string, value: unknown, providerKeys: ReadonlySet<string>): AdminConfig {
  const fields = knownFields(setting, value, ['settings', 'webhookProviderActions', 'accessTokens']);
  const settings = knownFields(`${setting}.settings`, fields.settings ?? {}, [
    'accountApprovalRequired',
    'signupsEnabled',
  ]);
  const tokens = fields.accessTokens ?? [];
  if (!Array.isArray(tokens)) throw new ConfigError(`${setting}.accessTokens`, 'must be an array');
  const seen = new Set<string>();
  const accessTokens = tokens.map((entry, i) => {
    const token = accessToken(`${setting}.accessTokens[${i}]`, entry, providerKeys);
    if (seen.has(token.value) || providerKeys.has(token.value)) {
      throw new ConfigError(`${setting}.accessTokens[${i}].value`, 'repeats another token or a provider key');
    }
    seen.add(token.value);
    return token;
  });
  return {
    settings: {
      accountApprovalRequired: flag(
        `${setting}.settings.accountApprovalRequired`,
        settings.accountApprovalRequired,
        false,
      ),
      signupsEnabled: flag(`${setting}.settings.signupsEnabled`, settings.signupsEnabled, true),
    },
    webhookProviderActions: flag(`${setting}.webhookProviderActions`, fields.webhookProviderActions, true),
    accessTokens,
  };
}
