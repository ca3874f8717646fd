/** Limit feedback: the authorizer's context values and the echo backend's RateLimit headers. */
import { describe, expect, it } from 'vitest';
import { limitContext } from '../../../lambdas/authorizer/adapters/context';
import { rateLimitHeaders } from '../../../lambdas/echo/handler';

const NOW = Date.UTC(2030, 0, 1, 10, 59, 30, 200);
const END = Date.UTC(2030, 0, 1, 11, 0, 0);

describe('limit feedback', () => {
  it('the last allowed call of a period leaves remaining 0, with the seconds to the period end rounded up', () => {
    const context = limitContext(
      { metric: 'hits', period: 'hour', max: 100, resetAt: END, remaining: 0 },
      NOW,
    );
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
    const eternal = limitContext({ metric: 'post_word', period: 'eternity', max: 10, remaining: 3 }, NOW);
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
    expect(rateLimitHeaders({ plan: 'Basic' })).toEqual({});
  });

  it('a period already over (a clock a little ahead) says 0 seconds, never a negative reset', () => {
    expect(
      limitContext({ metric: 'hits', period: 'hour', max: 1, resetAt: END, remaining: 1 }, END + 500),
    ).toMatchObject({
      reset: 0,
    });
  });
});
