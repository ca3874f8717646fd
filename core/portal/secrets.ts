/**
 * The portal's one-time values: link tokens and session ids are random, sent once to their owner, and
 * kept in Redis only as their SHA-256. A credential the page shows again is shown as a fingerprint.
 */
import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

/** 32 random bytes, base64url: what a link token or a session id is. */
export function randomToken(): string {
  return randomBytes(32).toString('base64url');
}

/** `bytes` random bytes in hex: a user key (porta generates 16 bytes the same way) or an app key. */
export function randomHex(bytes = 16): string {
  return randomBytes(bytes).toString('hex');
}

export function sha256Hex(text: string): string {
  return createHash('sha256').update(text, 'utf8').digest('hex');
}

/** HMAC-SHA256 of `text` under `key`, base64url. */
export function signature(key: string, text: string): string {
  return createHmac('sha256', key).update(text, 'utf8').digest('base64url');
}

/** Whether two strings are equal, compared in constant time on their digests. */
export function sameSecret(a: string, b: string): boolean {
  return timingSafeEqual(createHash('sha256').update(a).digest(), createHash('sha256').update(b).digest());
}

/** What the page shows of a credential after the answer that created it: enough to tell keys apart. */
export function fingerprint(credential: string): string {
  const hex = sha256Hex(credential);
  return `SHA-256 ${hex.slice(0, 8)}…${hex.slice(-4)}`;
}
