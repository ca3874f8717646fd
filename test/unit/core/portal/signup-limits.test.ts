/** The sign-up bounds over the token endpoint's counters (the same fixed windows, here in memory). */
import { describe, expect, it } from 'vitest';
import { admitSignup, mayMail, SIGNUP_LIMITS } from '../../../../core/portal/signup-limits';
import { memoryGuessCounter } from '../../../../lambdas/token/guess-limit';

const attempt = (sourceAddress: string, email: string, perHour = 100) => ({ sourceAddress, email, perHour });

describe('admitSignup', () => {
  it('admits 5 an hour from one address, then answers with Retry-After within the hour', async () => {
    const counter = memoryGuessCounter(Date.now);
    const verdicts = [];
    for (let i = 0; i < 6; i++)
      verdicts.push(await admitSignup(counter, 'p:', attempt('192.0.2.1', `u${i}@d${i}.example`)));
    expect(verdicts.slice(0, 5).every((verdict) => verdict.ok)).toBe(true);
    const refused = verdicts[5];
    expect(refused?.ok).toBe(false);
    if (refused && !refused.ok) {
      expect(refused.retryAfterSeconds).toBeGreaterThan(0);
      expect(refused.retryAfterSeconds).toBeLessThanOrEqual(3600);
    }
    expect((await admitSignup(counter, 'p:', attempt('192.0.2.2', 'other@elsewhere.example'))).ok).toBe(true);
  });

  it('admits 3 a day per e-mail address, 20 an hour per domain, and the total setting', async () => {
    const counter = memoryGuessCounter(Date.now);
    const sameEmail = [];
    for (let i = 0; i < 4; i++)
      sameEmail.push((await admitSignup(counter, 'e:', attempt(`198.51.100.${i}`, 'one@a.example'))).ok);
    expect(sameEmail).toEqual([true, true, true, false]);
    expect(SIGNUP_LIMITS.perEmail.windowMs).toBe(24 * 3600 * 1000);

    const domain = [];
    for (let i = 0; i < 21; i++)
      domain.push((await admitSignup(counter, 'd:', attempt(`203.0.113.${i}`, `u${i}@b.example`))).ok);
    expect(domain.filter(Boolean)).toHaveLength(20);
    expect(domain.at(-1)).toBe(false);

    const total = [];
    for (let i = 0; i < 3; i++)
      total.push((await admitSignup(counter, 't:', attempt(`192.0.2.${i}`, `u@c${i}.example`, 2))).ok);
    expect(total).toEqual([true, true, false]);
  });
});

describe('mayMail', () => {
  it('lets one e-mail of a kind a minute go to an address', async () => {
    const counter = memoryGuessCounter(Date.now);
    expect(await mayMail(counter, 'm:', 'a@example.com', 'signup')).toBe(true);
    expect(await mayMail(counter, 'm:', 'a@example.com', 'signup')).toBe(false);
    expect(await mayMail(counter, 'm:', 'a@example.com', 'signin')).toBe(true);
    expect(await mayMail(counter, 'm:', 'b@example.com', 'signup')).toBe(true);
  });
});
