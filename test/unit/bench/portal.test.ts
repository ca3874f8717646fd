import { describe, expect, it } from 'vitest';
import { pageLatency } from '../../../bench/portal';

describe('pageLatency', () => {
  it('gives the nearest-rank p50 and p95 of the calls, whatever their order', () => {
    const latenciesMs = Array.from({ length: 20 }, (_, i) => 20 - i);
    expect(pageLatency('/portal', latenciesMs)).toEqual({ page: '/portal', calls: 20, p50Ms: 10, p95Ms: 19 });
  });

  it('refuses a page measured with no call', () => {
    expect(() => pageLatency('/portal/docs', [])).toThrow(RangeError);
  });
});
