import { describe, expect, it } from 'vitest';
import { choosePlacement, cpuListOf, cpusOfList, placementText } from '../../../bench/placement';

describe('bench placement', () => {
  it('gives the bench the first half of the allowed CPUs and Redis the rest', () => {
    expect(choosePlacement([0, 1], true)).toEqual({ benchCpus: '0', redisCpus: '1', allCpus: '0-1' });
    expect(choosePlacement([0, 1, 2], true)).toEqual({ benchCpus: '0', redisCpus: '1-2', allCpus: '0-2' });
    expect(choosePlacement([2, 3, 6, 7], true)).toEqual({
      benchCpus: '2-3',
      redisCpus: '6-7',
      allCpus: '2-3,6-7',
    });
  });

  it('leaves a single CPU, or a machine without taskset, unpinned and says so', () => {
    expect(choosePlacement([3], true)).toBeUndefined();
    expect(choosePlacement([0, 1, 2, 3], false)).toBeUndefined();
    expect(placementText(undefined)).toMatch(/^unpinned/);
    expect(placementText({ benchCpus: '0', redisCpus: '1', allCpus: '0-1' })).toBe(
      'redis-server on CPU 1, the bench process on CPU 0 (taskset); module init timed on every CPU',
    );
  });

  it('reads and writes CPU lists as Linux does', () => {
    expect(cpusOfList('0-3,8,10-11\n')).toEqual([0, 1, 2, 3, 8, 10, 11]);
    expect(cpusOfList('0-1,x')).toEqual([]);
    expect(cpuListOf([0, 1, 2, 5, 7, 8])).toBe('0-2,5,7-8');
    expect(cpuListOf([4])).toBe('4');
  });
});
