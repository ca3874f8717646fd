import { describe, expect, it } from 'vitest';
import { rateLimitFields } from '../../../../core/decision/rate-limit-fields';

describe('rateLimitFields', () => {
  it("writes the limit's policy with its period's window and its state with the seconds until reset", () => {
    expect(rateLimitFields({ limit: 100, remaining: 41, reset: 1800, limitPeriod: 'hour' })).toEqual({
      'RateLimit-Policy': '"default";q=100;w=3600',
      RateLimit: '"default";r=41;t=1800',
    });
  });

  it('writes no window for an eternity limit, and no reset', () => {
    expect(rateLimitFields({ limit: 5, remaining: 0, limitPeriod: 'eternity' })).toEqual({
      'RateLimit-Policy': '"default";q=5',
      RateLimit: '"default";r=0',
    });
  });

  it('reads no window from a period named after what every object inherits', () => {
    expect(
      rateLimitFields({ limit: 5, remaining: 1, limitPeriod: 'constructor' })?.['RateLimit-Policy'],
    ).toBe('"default";q=5');
    expect(rateLimitFields({ limit: 5, remaining: 1, limitPeriod: 'toString' })?.['RateLimit-Policy']).toBe(
      '"default";q=5',
    );
  });

  it("adds the throttle's burst policy after the limit's", () => {
    expect(
      rateLimitFields({
        limit: 100,
        remaining: 41,
        reset: 60,
        limitPeriod: 'minute',
        throttleLimit: 20,
        throttleRemaining: 19,
        throttleReset: 1,
      }),
    ).toEqual({
      'RateLimit-Policy': '"default";q=100;w=60, "burst";q=20;w=1',
      RateLimit: '"default";r=41;t=60, "burst";r=19;t=1',
    });
  });

  it('writes nothing when neither a limit nor a throttle applies', () => {
    expect(rateLimitFields({})).toBeUndefined();
  });
});
