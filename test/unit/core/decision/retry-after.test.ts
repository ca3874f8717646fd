/**
 * When a refused call will pass: every refusal that passes later says so in whole seconds (the
 * `Retry-After` a consumer reads); one that never passes says nothing of the kind.
 */
import { describe, expect, it } from 'vitest';
import type { AccessDecision } from '../../../../core/decision/decision';
import {
  PLATFORM_UNAVAILABLE_RETRY_SECONDS,
  retryAfterSecondsOf,
} from '../../../../core/decision/retry-after';

const NOW = Date.UTC(2030, 0, 1, 10, 59, 30, 200);
const END = Date.UTC(2030, 0, 1, 11, 0, 0);
const base = { effect: 'deny', credentialId: 'c', plan: 'Basic', metrics: 'hits' } as const;

type Refusal = Extract<AccessDecision, { effect: 'allow' | 'deny' }>;

function deny(fields: Partial<Refusal>): AccessDecision {
  return { ...base, ...fields };
}

describe('retryAfterSecondsOf', () => {
  it('limits_exceeded: the seconds to the period end, rounded up; an eternity limit never passes', () => {
    const limit = { metric: 'hits', period: 'hour', max: 5, resetAt: END } as const;
    expect(retryAfterSecondsOf(deny({ reason: 'limits_exceeded', limit }), { hits: 1 }, NOW)).toBe(30);
    const eternal = { metric: 'hits', period: 'eternity', max: 5 } as const;
    expect(retryAfterSecondsOf(deny({ reason: 'limits_exceeded', limit: eternal }), { hits: 1 }, NOW)).toBe(
      undefined,
    );
  });

  it('rate_limited: when the throttle admits the call, at least 1 s', () => {
    const throttle = { metric: 'hits', rate: 1, burst: 3, retryInMs: 200 };
    expect(retryAfterSecondsOf(deny({ reason: 'rate_limited', throttle }), { hits: 1 }, NOW)).toBe(1);
    const slow = { rate: 0.5, burst: 1, retryInMs: 1_500 };
    expect(retryAfterSecondsOf(deny({ reason: 'rate_limited', throttle: slow }), { hits: 1 }, NOW)).toBe(2);
  });

  it('rate_limited that can never pass (a delta of 3 on a metric whose burst is 2): no retry', () => {
    const throttle = { metric: 'hits', rate: 1, burst: 2, retryInMs: 1_000 };
    expect(retryAfterSecondsOf(deny({ reason: 'rate_limited', throttle }), { hits: 3 }, NOW)).toBe(undefined);
  });

  it('platform_busy: the next second; platform_unavailable: a few seconds', () => {
    expect(retryAfterSecondsOf(deny({ reason: 'platform_busy' }), { hits: 1 }, NOW)).toBe(1);
    expect(retryAfterSecondsOf(deny({ reason: 'platform_unavailable' }), { hits: 1 }, NOW)).toBe(
      PLATFORM_UNAVAILABLE_RETRY_SECONDS,
    );
  });

  it('a refusal that waiting does not mend, an allowed call, a 401: none', () => {
    for (const reason of ['application_not_active', 'no_mapping_rule', 'platform_misconfigured'] as const) {
      expect(retryAfterSecondsOf(deny({ reason }), { hits: 1 }, NOW), reason).toBe(undefined);
    }
    expect(retryAfterSecondsOf({ ...base, effect: 'allow' }, { hits: 1 }, NOW)).toBe(undefined);
    expect(retryAfterSecondsOf({ effect: 'unauthorized' }, { hits: 1 }, NOW)).toBe(undefined);
  });
});
