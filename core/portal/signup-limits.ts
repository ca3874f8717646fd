/**
 * Sign-ups, bounded in fixed windows shared through Redis (the counters the token endpoint's guess limit
 * uses): per source address 5 an hour, per e-mail address 3 a day, per e-mail domain 20 an hour, and in
 * all a setting (100 an hour by default). The first bound reached answers 429 with its Retry-After.
 * Counters are named by SHA-256, never by an address.
 */
import { sha256Hex } from './secrets';

/** Takes one attempt from a named counter unless `bound` are taken in its window. */
export interface Counter {
  take(name: string, bound: number, windowMs: number): Promise<{ taken: boolean; resetInMs: number }>;
}

const HOUR_MS = 3600 * 1000;
const DAY_MS = 24 * HOUR_MS;
const MINUTE_MS = 60 * 1000;

export const SIGNUP_LIMITS = {
  perAddress: { bound: 5, windowMs: HOUR_MS },
  perEmail: { bound: 3, windowMs: DAY_MS },
  perDomain: { bound: 20, windowMs: HOUR_MS },
} as const;

export type LimitVerdict = { readonly ok: true } | { readonly ok: false; readonly retryAfterSeconds: number };

function refusal(resetInMs: number): LimitVerdict {
  return { ok: false, retryAfterSeconds: Math.max(1, Math.ceil(resetInMs / 1000)) };
}

/** Takes one sign-up from each bound in turn; the first refused one answers. */
export async function admitSignup(
  counter: Counter,
  prefix: string,
  attempt: { readonly sourceAddress: string; readonly email: string; readonly perHour: number },
): Promise<LimitVerdict> {
  const domain = attempt.email.slice(attempt.email.lastIndexOf('@') + 1);
  const checks: [string, number, number][] = [
    [
      `addr:${sha256Hex(attempt.sourceAddress)}`,
      SIGNUP_LIMITS.perAddress.bound,
      SIGNUP_LIMITS.perAddress.windowMs,
    ],
    [`email:${sha256Hex(attempt.email)}`, SIGNUP_LIMITS.perEmail.bound, SIGNUP_LIMITS.perEmail.windowMs],
    [`domain:${sha256Hex(domain)}`, SIGNUP_LIMITS.perDomain.bound, SIGNUP_LIMITS.perDomain.windowMs],
    ['all', attempt.perHour, HOUR_MS],
  ];
  for (const [name, bound, windowMs] of checks) {
    const take = await counter.take(`${prefix}signup:${name}`, bound, windowMs);
    if (!take.taken) return refusal(take.resetInMs);
  }
  return { ok: true };
}

/** What an e-mail is for: sign-up confirmations and sign-in links are bounded apart. */
export type MailKind = 'signup' | 'signin';

/**
 * Whether an e-mail of this kind may go to this address now: at most one a minute. A refused send
 * answers the developer the same as a sent one (no enumeration).
 */
export async function mayMail(
  counter: Counter,
  prefix: string,
  email: string,
  kind: MailKind,
): Promise<boolean> {
  return (await counter.take(`${prefix}mail:${kind}:${sha256Hex(email)}`, 1, MINUTE_MS)).taken;
}
