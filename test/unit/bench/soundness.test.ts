import { describe, expect, it } from 'vitest';
import { PLATFORM_BUSY, soundnessProblems } from '../../../bench/soundness';

describe('soundnessProblems', () => {
  const sound = {
    workload: 'hot',
    design: 'project',
    calls: 100,
    outcomes: { allow: 100 },
    reportedUsage: { allowed: 101, reported: 101 },
  };

  it('finds nothing in a run where every call was allowed and reported', () => {
    expect(soundnessProblems([sound])).toEqual([]);
  });

  it('expects every made-up key of a flood beside the calls refused, some at once, and the keys to last', () => {
    const floodRun = { ...sound, workload: 'flood-unknown-keys' };
    const refused = { [PLATFORM_BUSY]: 80, unauthorized: 20 };
    expect(
      soundnessProblems([{ ...floodRun, unknownKeyFlood: { outcomes: refused, ranOut: false } }]),
    ).toEqual([]);
    expect(
      soundnessProblems([
        { ...floodRun, unknownKeyFlood: { outcomes: { unauthorized: 99, allow: 1 }, ranOut: true } },
      ]),
    ).toEqual([
      'flood-unknown-keys/project: made-up keys not refused (allow 1)',
      'flood-unknown-keys/project: no made-up key was refused platform_busy',
      'flood-unknown-keys/project: the made-up keys ran out before the calls beside them ended',
    ]);
  });

  it('names calls that were not allowed, with what they were', () => {
    expect(soundnessProblems([{ ...sound, outcomes: { allow: 97, error: 2, unauthorized: 1 } }])).toEqual([
      'hot/project: 3 of 100 calls not allowed (error 2, unauthorized 1)',
    ]);
  });

  it('names allowed usage the platform did not record, and usage recorded twice', () => {
    expect(soundnessProblems([{ ...sound, reportedUsage: { allowed: 101, reported: 100 } }])).toEqual([
      'hot/project: the platform recorded 100 hits for 101 allowed calls',
    ]);
    expect(soundnessProblems([{ ...sound, reportedUsage: { allowed: 101, reported: 102 } }])).toHaveLength(1);
  });

  it('expects every call of a refused flood to be an explicit Deny', () => {
    const flood = {
      ...sound,
      workload: 'flood-over-limit',
      outcomes: { explicit_deny: 100 },
      reportedUsage: { allowed: 0, reported: 0 },
    };
    expect(soundnessProblems([flood], new Set(['flood-over-limit']))).toEqual([]);
    expect(
      soundnessProblems(
        [{ ...flood, outcomes: { explicit_deny: 99, allow: 1 } }],
        new Set(['flood-over-limit']),
      ),
    ).toEqual(['flood-over-limit/project: 1 of 100 calls not refused (allow 1)']);
  });
});
