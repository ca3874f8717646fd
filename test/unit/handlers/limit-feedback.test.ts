/** Limit feedback: the authorizer's context values and the echo backend's RateLimit headers. */
import { describe, expect, it } from 'vitest';
import {
  decisionContext,
  limitContext,
  rateLimitContext,
  throttleContext,
} from '../../../adapters/gateway/context';
import { rateLimitHeaders } from '../../../lambdas/echo/handler';

const NOW = Date.UTC(2030, 0, 1, 10, 59, 30, 200);
const END = Date.UTC(2030, 0, 1, 11, 0, 0);

describe('limit feedback', () => {
  it('the last allowed call of a period leaves remaining 0, with the seconds to the period end rounded up', () => {
    const values = limitContext(
      { metric: 'hits', period: 'hour', max: 100, resetAt: END, remaining: 0 },
      NOW,
    );
    const context = { ...values, ...rateLimitContext(values) };
    expect(context).toEqual({
      limit: 100,
      remaining: 0,
      reset: 30,
      limitMetric: 'hits',
      limitPeriod: 'hour',
      rateLimitPolicy: '"default";q=100;w=3600',
      rateLimit: '"default";r=0;t=30',
    });
    expect(rateLimitHeaders(context)).toEqual({
      'RateLimit-Policy': '"default";q=100;w=3600',
      RateLimit: '"default";r=0;t=30',
    });
  });

  it('a refusal names its limit with remaining 0; eternity has no reset; no limit, no values', () => {
    expect(limitContext({ metric: 'hits', period: 'minute', max: 5, resetAt: END }, END - 1)).toMatchObject({
      remaining: 0,
      reset: 1,
    });
    const eternalValues = limitContext(
      { metric: 'post_word', period: 'eternity', max: 10, remaining: 3 },
      NOW,
    );
    const eternal = { ...eternalValues, ...rateLimitContext(eternalValues) };
    expect(eternal).toEqual({
      limit: 10,
      remaining: 3,
      limitMetric: 'post_word',
      limitPeriod: 'eternity',
      rateLimitPolicy: '"default";q=10',
      rateLimit: '"default";r=3',
    });
    expect(rateLimitHeaders(eternal)).toEqual({
      'RateLimit-Policy': '"default";q=10',
      RateLimit: '"default";r=3',
    });
    expect(limitContext(undefined, NOW)).toEqual({});
    expect(rateLimitContext({})).toEqual({});
    expect(rateLimitHeaders({ plan: 'Basic' })).toEqual({});
  });

  it('a period already over (a clock a little ahead) says 0 seconds, never a negative reset', () => {
    expect(
      limitContext({ metric: 'hits', period: 'hour', max: 1, resetAt: END, remaining: 1 }, END + 500),
    ).toMatchObject({
      reset: 0,
    });
  });

  it('an allowed call under a throttle gains a burst policy of its own beside its limit', () => {
    const context = {
      ...limitContext({ metric: 'hits', period: 'hour', max: 100, resetAt: END, remaining: 7 }, NOW),
      ...throttleContext({ rate: 10, burst: 20, remaining: 19, fullInMs: 100 }),
    };
    expect(context).toMatchObject({ throttleLimit: 20, throttleRemaining: 19, throttleReset: 1 });
    expect(rateLimitHeaders(context)).toEqual({
      'RateLimit-Policy': '"default";q=100;w=3600, "burst";q=20;w=1',
      RateLimit: '"default";r=7;t=30, "burst";r=19;t=1',
    });
    // The fields an HTTP API's response mapping copies carry the burst policy too.
    expect(rateLimitContext(context)).toEqual({
      rateLimitPolicy: '"default";q=100;w=3600, "burst";q=20;w=1',
      rateLimit: '"default";r=7;t=30, "burst";r=19;t=1',
    });
    expect(rateLimitHeaders(throttleContext({ rate: 10, burst: 20, remaining: 0, fullInMs: 2_000 }))).toEqual(
      {
        'RateLimit-Policy': '"burst";q=20;w=1',
        RateLimit: '"burst";r=0;t=2',
      },
    );
  });

  it('a throttled call fills the refusal body: the burst, remaining 0, the seconds until it would pass', () => {
    expect(throttleContext({ metric: 'search', rate: 10, burst: 20, retryInMs: 100 })).toEqual({
      limit: 20,
      remaining: 0,
      reset: 1,
      limitMetric: 'search',
      limitPeriod: 'second',
    });
    expect(throttleContext({ rate: 0.5, burst: 1, retryInMs: 1_500 })).toEqual({
      limit: 1,
      remaining: 0,
      reset: 2,
      limitPeriod: 'second',
    });
    expect(throttleContext(undefined)).toEqual({});
  });

  it('a refusal that passes later says when: retryAfter, and reset when it has no limit of its own', () => {
    const busy = decisionContext(
      {
        effect: 'deny',
        credentialId: 'c',
        plan: '',
        metrics: 'hits',
        reason: 'platform_busy',
        retryAfterSeconds: 1,
      },
      NOW,
    );
    expect(busy).toMatchObject({ reason: 'platform_busy', retryAfter: 1, reset: 1 });
    const limited = decisionContext(
      {
        effect: 'deny',
        credentialId: 'c',
        plan: 'Basic',
        metrics: 'hits',
        reason: 'limits_exceeded',
        limit: { metric: 'hits', period: 'hour', max: 5, resetAt: END },
        retryAfterSeconds: 30,
      },
      NOW,
    );
    expect(limited).toMatchObject({ retryAfter: 30, reset: 30 });
    const never = decisionContext(
      { effect: 'deny', credentialId: 'c', plan: 'Basic', metrics: 'hits', reason: 'application_not_active' },
      NOW,
    );
    expect(never).not.toHaveProperty('retryAfter');
    expect(never).not.toHaveProperty('reset');
  });
});
