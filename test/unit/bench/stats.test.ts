import { describe, expect, it } from 'vitest';
import { median, percentile, summarizeLatencies, throughput } from '../../../bench/stats';

describe('percentile (nearest rank)', () => {
  const hundred = Array.from({ length: 100 }, (_, i) => i + 1);

  it('answers an observed value at the nearest rank', () => {
    expect(percentile(hundred, 50)).toBe(50);
    expect(percentile(hundred, 99)).toBe(99);
    expect(percentile(hundred, 100)).toBe(100);
    expect(percentile(hundred, 0.5)).toBe(1);
  });

  it('rounds the rank up, never interpolating', () => {
    expect(percentile([10, 20, 30, 40], 50)).toBe(20);
    expect(percentile([10, 20, 30, 40], 51)).toBe(30);
    expect(percentile([10, 20, 30], 99)).toBe(30);
    expect(percentile([7], 1)).toBe(7);
  });

  it('refuses an empty sample and a percentile outside (0, 100]', () => {
    expect(() => percentile([], 50)).toThrow(/empty/);
    expect(() => percentile([1], 0)).toThrow(RangeError);
    expect(() => percentile([1], 101)).toThrow(RangeError);
    expect(() => percentile([1], Number.NaN)).toThrow(RangeError);
  });
});

describe('summarizeLatencies', () => {
  it('sorts nanosecond samples and reports milliseconds', () => {
    const samples = Float64Array.from([5e6, 1e6, 3e6, 2e6, 4e6]);
    expect(summarizeLatencies(samples)).toEqual({ count: 5, p50Ms: 3, p99Ms: 5, maxMs: 5, meanMs: 3 });
  });

  it('leaves the caller’s samples in call order', () => {
    const samples = Float64Array.from([3e6, 1e6, 2e6]);
    summarizeLatencies(samples);
    expect([...samples]).toEqual([3e6, 1e6, 2e6]);
  });

  it('puts a single slow call at p99 of 100 calls only when it is the slowest 1%', () => {
    const samples = new Float64Array(100).fill(1e6);
    samples[42] = 250e6;
    const summary = summarizeLatencies(samples);
    expect(summary.p99Ms).toBe(1);
    expect(summary.maxMs).toBe(250);
  });
});

describe('throughput', () => {
  it('is calls per second of wall-clock time', () => {
    expect(throughput(20_000, 2_000)).toBe(10_000);
    expect(() => throughput(1, 0)).toThrow(RangeError);
  });
});

describe('median', () => {
  it('takes the median of an odd or even count, and refuses none', () => {
    expect(median([3, 1, 2])).toBe(2);
    expect(median([4, 1, 3, 2])).toBe(2.5);
    expect(() => median([])).toThrow(RangeError);
  });
});
