/**
 * Access tokens this container has verified, so a client that sends its token again is not verified
 * again: an ES256 signature check costs about 1 ms of CPU, against well under 0.1 ms for a cache hit.
 * APIcast does the same (gateway/src/apicast/oauth/oidc.lua: an LRU of verified JWTs, 10,000 entries,
 * each until its `exp`). Keyed by the token's SHA-256, so no raw token is kept as a key. Kept with its
 * `iat`, so a not-before set after it was verified (token-not-before.ts) still refuses it.
 */
import { createHash } from 'node:crypto';

/** As APIcast's cache of verified JWTs. */
export const VERIFIED_TOKENS_KEPT = 10_000;

export function tokenDigest(token: string): string {
  return createHash('sha256').update(token).digest('base64url');
}

/** What a verified token tells: its client, and when it was issued (so a later not-before still applies). */
export interface KnownToken {
  readonly clientId: string;
  /** The `iat` claim (epoch s), when the token has one. */
  readonly issuedAt?: number;
}

interface VerifiedToken {
  readonly token: KnownToken;
  /** Epoch ms from which the token must be verified again. */
  readonly until: number;
}

/** A least-recently-used map of verified tokens' client ids and issue times, each until its own time. */
export class VerifiedTokens {
  private readonly entries = new Map<string, VerifiedToken>();

  constructor(private readonly capacity = VERIFIED_TOKENS_KEPT) {}

  /** What a token verified before and still within its time tells; undefined otherwise. */
  known(digest: string, now: number): KnownToken | undefined {
    const entry = this.entries.get(digest);
    if (entry === undefined) return undefined;
    this.entries.delete(digest);
    if (now >= entry.until) return undefined;
    // A Map iterates in insertion order: set again, the entry becomes the most recently used.
    this.entries.set(digest, entry);
    return entry.token;
  }

  keep(digest: string, token: KnownToken, until: number): void {
    this.entries.delete(digest);
    this.entries.set(digest, { token, until });
    if (this.entries.size > this.capacity) {
      const [leastRecentlyUsed] = this.entries.keys();
      if (leastRecentlyUsed !== undefined) this.entries.delete(leastRecentlyUsed);
    }
  }

  get size(): number {
    return this.entries.size;
  }
}
