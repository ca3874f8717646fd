import { describe, expect, it } from 'vitest';
import { choosePlacement, placementText } from '../../../bench/placement';

describe('bench placement', () => {
  it('gives the bench the first half of the CPUs and Redis the rest', () => {
    expect(choosePlacement(2, true)).toEqual({ benchCpus: '0', redisCpus: '1', allCpus: '0-1' });
    expect(choosePlacement(3, true)).toEqual({ benchCpus: '0', redisCpus: '1-2', allCpus: '0-2' });
    expect(choosePlacement(8, true)).toEqual({ benchCpus: '0-3', redisCpus: '4-7', allCpus: '0-7' });
  });

  it('leaves a single CPU, or a machine without taskset, unpinned and says so', () => {
    expect(choosePlacement(1, true)).toBeUndefined();
    expect(choosePlacement(4, false)).toBeUndefined();
    expect(placementText(undefined)).toMatch(/^unpinned/);
    expect(placementText({ benchCpus: '0', redisCpus: '1', allCpus: '0-1' })).toBe(
      'redis-server on CPU 1, the bench process on CPU 0 (taskset); module init timed on every CPU',
    );
  });
});
