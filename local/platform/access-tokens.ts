/**
 * Who calls the Account Management API, and what they may do, as porta decides it:
 * - `access_token` (or a provider key, porta's legacy `provider_key`, standing for the provider's admin
 *   with every scope and `rw`) names the tenant; neither known answers 403 "Access denied"
 *   (`Filters::ProviderRequired`);
 * - the token needs the `account_management` scope, and a member owner the `partners` permission that
 *   scope asks of members (`AccessToken::Scope#permission_name`), else 403 "Your access token does not
 *   have the correct permissions" (`ApiAuthentication::ByAccessToken#verify_access_token_scopes`);
 * - a write needs `rw`: a read-only token's writes fail with the same answer (porta opens a read-only
 *   database transaction, and the write's error is mapped to that 403);
 * - approving, rejecting and deleting an account are abilities of a provider admin only
 *   (`config/abilities/admin.rb`); a member gets 403 with no body (CanCan::AccessDenied).
 */
import type { AccessTokenConfig } from './admin-config';
import { AdminApiError } from './admin-errors';
import type { PlatformModel } from './model';
import type { ParamHash } from './params';
import type { Tenant } from './tenant';

export interface Caller {
  readonly tenant: Tenant;
  /** Undefined when the caller gave the provider key. */
  readonly token?: AccessTokenConfig;
}

/** What a route does, for the permission checks. */
export type Access = 'read' | 'write' | 'admin-write';

function given(values: ParamHash, name: string): string | undefined {
  const value = values[name];
  return typeof value === 'string' && value !== '' ? value : undefined;
}

/**
 * porta's `http_authentication`: from an HTTP Basic `Authorization` header, the user name, or the password
 * when the user name is empty. It stands for `access_token` or `provider_key` when the parameter is absent.
 */
export function basicCredential(header: string | undefined): string | undefined {
  const match = /^Basic\s+([A-Za-z0-9+/]+=*)\s*$/i.exec(header ?? '');
  if (match === null) return undefined;
  const decoded = Buffer.from(match[1] as string, 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  const user = colon < 0 ? decoded : decoded.slice(0, colon);
  const password = colon < 0 ? '' : decoded.slice(colon + 1);
  return user || password || undefined;
}

/** The caller of an Account Management API request; throws 403 "Access denied" for an unknown one. */
export function identify(model: PlatformModel, values: ParamHash, basic?: string): Caller {
  const tokenValue = 'access_token' in values ? given(values, 'access_token') : basic;
  const providerKey = 'provider_key' in values ? given(values, 'provider_key') : basic;
  if (tokenValue !== undefined) {
    for (const tenant of model.tenants.values()) {
      const token = tenant.tokens.get(tokenValue);
      if (token !== undefined) return { tenant, token };
    }
    // The local platform has long taken the provider key as the token too.
    const tenant = model.tenants.get(tokenValue);
    if (tenant !== undefined) return { tenant };
  }
  if (providerKey !== undefined) {
    const tenant = model.tenants.get(providerKey);
    if (tenant !== undefined) return { tenant };
  }
  throw AdminApiError.accessDenied();
}

/** Throws the answer porta gives when the caller may not do this with the Account Management API. */
export function authorize(caller: Caller, access: Access): void {
  const { token } = caller;
  if (token === undefined) return;
  const scoped =
    token.scopes.includes('account_management') &&
    (token.role === 'admin' || token.memberPermissions.includes('partners'));
  if (!scoped) throw AdminApiError.tokenPermissions();
  // The ability is checked in the action, before the write that a read-only transaction refuses.
  if (access === 'admin-write' && token.role !== 'admin') throw AdminApiError.forbidden();
  if (access !== 'read' && token.permission !== 'rw') throw AdminApiError.tokenPermissions();
}
