/**
 * Signed-in developers. The cookie holds a random session id and its HMAC; Redis keeps the id's SHA-256
 * with the account and the account's session version at sign-in. Raising the version (revokeAll) ends
 * every session of the account at once; signing out deletes the one.
 *
 * The cookie is `__Host-portal-session` (HttpOnly, Secure, SameSite=Lax, Path=/) over https. Browsers
 * refuse a `__Host-` cookie without Secure, so over plain http (the local stack) it is `portal-session`,
 * HttpOnly and SameSite=Lax, without Secure.
 */
import type { RedisConnection } from '../budget/redis-client';
import { cookieOf, type PortalRequest, schemeOf } from './http';
import { randomToken, sameSecret, sha256Hex, signature } from './secrets';

export interface Session {
  /** The session id (only in memory, from the cookie). */
  readonly id: string;
  readonly accountId: string;
  readonly email: string;
}

interface StoredSession {
  readonly accountId: string;
  readonly email: string;
  readonly version: number;
}

export const SESSION_TTL_SECONDS = 12 * 3600;

/** The name of a portal cookie on this request's scheme. */
export function cookieName(request: PortalRequest, name: string): string {
  return schemeOf(request) === 'https' ? `__Host-portal-${name}` : `portal-${name}`;
}

/** A Set-Cookie value with the portal's flags; `maxAge` 0 deletes it. */
export function cookieHeader(request: PortalRequest, name: string, value: string, maxAge: number): string {
  const secure = schemeOf(request) === 'https' ? '; Secure' : '';
  return `${cookieName(request, name)}=${value}; Path=/; Max-Age=${maxAge}; HttpOnly; SameSite=Lax${secure}`;
}

export class SessionStore {
  constructor(
    private readonly redis: RedisConnection,
    private readonly prefix: string,
    private readonly signingKey: string,
  ) {}

  private key(id: string): string {
    return `${this.prefix}session:${sha256Hex(id)}`;
  }

  private versionKey(accountId: string): string {
    return `${this.prefix}session-version:${sha256Hex(accountId)}`;
  }

  /** A new session; returns the Set-Cookie value. */
  async open(request: PortalRequest, accountId: string, email: string): Promise<string> {
    const id = randomToken();
    const version = Number((await this.redis.get(this.versionKey(accountId))) ?? 0);
    const stored: StoredSession = { accountId, email, version };
    await this.redis.set(this.key(id), JSON.stringify(stored), 'EX', SESSION_TTL_SECONDS);
    return cookieHeader(request, 'session', `${id}.${signature(this.signingKey, id)}`, SESSION_TTL_SECONDS);
  }

  /** The request's session, if its cookie is genuine, unexpired and of the account's current version. */
  async of(request: PortalRequest): Promise<Session | undefined> {
    const value = cookieOf(request, cookieName(request, 'session'));
    if (value === undefined) return undefined;
    const dot = value.lastIndexOf('.');
    const id = value.slice(0, dot);
    if (dot <= 0 || !sameSecret(value.slice(dot + 1), signature(this.signingKey, id))) return undefined;
    const stored = await this.redis.get(this.key(id));
    if (stored === null) return undefined;
    const session = JSON.parse(stored) as StoredSession;
    const version = Number((await this.redis.get(this.versionKey(session.accountId))) ?? 0);
    if (version !== session.version) return undefined;
    return { id, accountId: session.accountId, email: session.email };
  }

  async close(session: Session): Promise<void> {
    await this.redis.del(this.key(session.id));
  }

  /** Ends every session of the account (a rejection, or the provider's revocation). */
  async revokeAll(accountId: string): Promise<void> {
    await this.redis.incr(this.versionKey(accountId));
  }
}
