/**
 * What every route of the portal works with: its ports, its stores, and the answers it gives. Pages
 * are never cached (each is one developer's), carry a CSP with a fresh nonce, and send a Referer to
 * their own origin only, so a link's token in the address bar goes nowhere else.
 */
import { randomBytes } from 'node:crypto';
import type { RedisConnection } from '../budget/redis-client';
import type { LogPort } from '../observability/observability';
import type { AuthOutcome, Credential } from '../platform/types';
import type { CredentialMode } from '../settings/config';
import type { AdminClient, AdminResult } from './admin-client';
import type { Application } from './admin-xml';
import type { CacheNotice } from './cache-notice';
import { csrfBinding, csrfToken } from './csrf';
import type { PortalRequest, PortalResponse } from './http';
import { LinkStore } from './links';
import type { MailPort } from './mail';
import { contentSecurityPolicy, type PageContext } from './pages';
import { type Session, SessionStore } from './sessions';
import type { PortalSettings } from './settings';
import type { Counter } from './signup-limits';

export interface PortalDeps {
  readonly settings: PortalSettings;
  readonly serviceId: string;
  readonly credentialMode: CredentialMode;
  /** Whether this stack issues OAuth tokens itself (the docs then fill in client id and secret). */
  readonly builtInIssuer: boolean;
  readonly admin: Pick<
    AdminClient,
    | 'settings'
    | 'signup'
    | 'findAccount'
    | 'account'
    | 'plans'
    | 'applications'
    | 'createApplication'
    | 'deleteApplication'
    | 'changeUserKey'
    | 'keys'
    | 'addKey'
    | 'deleteKey'
  >;
  readonly redis: RedisConnection;
  readonly counter: Counter;
  readonly mail: MailPort;
  /** Signs session cookies and CSRF tokens (a secret; never logged). */
  readonly signingKey: string;
  /** The admin token, accepted as the provider's bearer on `POST /invitations`. */
  readonly adminToken: string;
  /** The shared secret of the account webhook's URL. */
  readonly webhookToken: string;
  /** The platform's authorize, for this period's usage (records nothing). */
  readonly usage: (credential: Credential) => Promise<AuthOutcome>;
  readonly cache: CacheNotice;
  readonly logger: LogPort;
  readonly now: () => number;
}

export class PortalContext {
  readonly links: LinkStore;
  readonly sessions: SessionStore;
  /** Redis names of the portal's keys, per service. */
  readonly prefix: string;

  constructor(readonly deps: PortalDeps) {
    this.prefix = `portal:${deps.serviceId}:`;
    this.links = new LinkStore(deps.redis, this.prefix, deps.now);
    this.sessions = new SessionStore(deps.redis, this.prefix, deps.signingKey);
  }

  /** The account's applications of this portal's service (an account may have others elsewhere). */
  async applications(accountId: string): Promise<AdminResult<Application[]>> {
    const all = await this.deps.admin.applications(accountId);
    return all.ok
      ? { ok: true, value: all.value.filter((app) => app.serviceId === this.deps.serviceId) }
      : all;
  }

  /** The page's nonce, CSRF token (and the cookie it binds to, when new) for this request. */
  page(request: PortalRequest, session: Session | undefined): { context: PageContext; cookies: string[] } {
    const binding = csrfBinding(request);
    return {
      context: {
        base: request.base,
        nonce: randomBytes(16).toString('base64'),
        csrf: csrfToken(this.deps.signingKey, binding.value),
        signedIn: session !== undefined,
      },
      cookies: binding.setCookie ? [binding.setCookie] : [],
    };
  }
}

const SECURITY_HEADERS = {
  'cache-control': 'no-store',
  // Not no-referrer: under it a browser sends `Origin: null` with the portal's own forms, which the CSRF
  // check must refuse. Same-origin keeps a link's token from reaching any other origin.
  'referrer-policy': 'same-origin',
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
};

export function html(
  status: number,
  context: PageContext,
  body: string,
  options: { cookies?: readonly string[]; headers?: Record<string, string>; connect?: string } = {},
): PortalResponse {
  return {
    status,
    headers: {
      ...SECURITY_HEADERS,
      'content-type': 'text/html; charset=utf-8',
      'content-security-policy': contentSecurityPolicy(context.nonce, options.connect),
      ...options.headers,
    },
    cookies: options.cookies ?? [],
    body,
  };
}

export function json(status: number, value: unknown, headers: Record<string, string> = {}): PortalResponse {
  return {
    status,
    headers: { ...SECURITY_HEADERS, 'content-type': 'application/json', ...headers },
    cookies: [],
    body: JSON.stringify(value),
  };
}

export function redirect(location: string, cookies: readonly string[] = []): PortalResponse {
  return { status: 303, headers: { ...SECURITY_HEADERS, location }, cookies, body: '' };
}
