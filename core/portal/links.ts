/**
 * One-time links: a confirmation of a sign-up, a sign-in, an invitation. The token travels in the e-mail
 * only; Redis keeps its SHA-256 with what the link is for. Opening the link (GET) reads it and changes
 * nothing, so a mail scanner that fetches every link consumes none; the page's button (POST) uses it,
 * once: a used link is remembered until it would have expired anyway, and answers `gone` like an expired one.
 */
import type { RedisConnection } from '../budget/redis-client';
import { randomToken, sha256Hex } from './secrets';

export type LinkPurpose = 'signup' | 'signin' | 'invite';

export interface LinkFacts {
  readonly purpose: LinkPurpose;
  readonly email: string;
  /** Sign-up: the organisation. */
  readonly orgName?: string;
}

interface StoredLink extends LinkFacts {
  readonly expiresAt: number;
  readonly used: boolean;
}

/** A link is good for 15 minutes. */
export const LINK_TTL_MS = 15 * 60 * 1000;
/** An invitation, for a week. */
export const INVITE_TTL_MS = 7 * 24 * 3600 * 1000;
/** How long Redis remembers a used or expired link, so it answers 410 rather than looking unknown. */
const REMEMBER_MS = 24 * 3600 * 1000;

export type LinkLookup =
  | { readonly kind: 'valid'; readonly facts: LinkFacts }
  /** Expired, used, or never issued: all answer the same 410. */
  | { readonly kind: 'gone' };

/** Marks the link used and returns what it was, in one step, so two POSTs cannot both use it. */
const USE_SCRIPT = `
local stored = redis.call('GET', KEYS[1])
if not stored then return false end
local link = cjson.decode(stored)
if link.used or tonumber(link.expiresAt) <= tonumber(ARGV[1]) then return false end
link.used = true
redis.call('SET', KEYS[1], cjson.encode(link), 'KEEPTTL')
return stored`;

export class LinkStore {
  constructor(
    private readonly redis: RedisConnection,
    private readonly prefix: string,
    private readonly now: () => number,
  ) {}

  private key(token: string): string {
    return `${this.prefix}link:${sha256Hex(token)}`;
  }

  /** A new link's token (to put in the e-mail, never to keep). */
  async issue(facts: LinkFacts, ttlMs = LINK_TTL_MS): Promise<string> {
    const token = randomToken();
    const link: StoredLink = { ...facts, expiresAt: this.now() + ttlMs, used: false };
    await this.redis.set(this.key(token), JSON.stringify(link), 'PX', ttlMs + REMEMBER_MS);
    return token;
  }

  /** What the link is, without using it (the GET of the e-mail's link). */
  async peek(token: string): Promise<LinkLookup> {
    const stored = await this.redis.get(this.key(token));
    if (stored === null) return { kind: 'gone' };
    const link = JSON.parse(stored) as StoredLink;
    if (link.used || link.expiresAt <= this.now()) return { kind: 'gone' };
    return { kind: 'valid', facts: factsOf(link) };
  }

  /** Uses the link, once (the POST of the page's button). */
  async use(token: string): Promise<LinkLookup> {
    const stored = (await this.redis.eval(USE_SCRIPT, 1, this.key(token), this.now())) as string | null;
    if (stored === null) return { kind: 'gone' };
    return { kind: 'valid', facts: factsOf(JSON.parse(stored) as StoredLink) };
  }
}

function factsOf(link: StoredLink): LinkFacts {
  return {
    purpose: link.purpose,
    email: link.email,
    ...(link.orgName !== undefined && { orgName: link.orgName }),
  };
}
