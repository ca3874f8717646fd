import { describe, expect, it } from 'vitest';
import {
  checkWorkloadTable,
  GROUP_ROUNDS,
  interleavedChunks,
  OVER_LIMIT_WORKLOADS,
  REFUSED_WORKLOADS,
  runGroups,
  WORKLOADS,
} from '../../../bench/workloads';

describe('interleavedChunks', () => {
  it('alternates the members, forward then reversed, so none always follows the other', () => {
    const chunks = interleavedChunks(
      [
        { member: 'off', calls: 40 },
        { member: 'on', calls: 40 },
      ],
      4,
    );
    expect(chunks.map(({ member }) => member)).toEqual(['off', 'on', 'on', 'off', 'off', 'on', 'on', 'off']);
    expect(chunks.filter(({ member }) => member === 'on').map(({ from, count }) => [from, count])).toEqual([
      [0, 10],
      [10, 10],
      [20, 10],
      [30, 10],
    ]);
  });

  it('measures every call of every member exactly once, whatever the split leaves over', () => {
    const members = [
      { member: 'a', calls: 1_001 },
      { member: 'b', calls: 7 },
      { member: 'c', calls: 5_000 },
    ];
    const chunks = interleavedChunks(members, GROUP_ROUNDS.serial.full);
    for (const { member, calls } of members) {
      const mine = chunks.filter((chunk) => chunk.member === member);
      let next = 0;
      for (const { from, count } of mine) {
        expect(from).toBe(next);
        expect(count).toBeGreaterThan(0);
        next = from + count;
      }
      expect(next).toBe(calls);
      const counts = mine.map(({ count }) => count);
      expect(Math.max(...counts) - Math.min(...counts)).toBeLessThanOrEqual(1);
    }
  });

  it('is one chunk per member in one round, and refuses a round count that is not a positive integer', () => {
    expect(interleavedChunks([{ member: 'hot', calls: 20_000 }], 1)).toEqual([
      { member: 'hot', from: 0, count: 20_000 },
    ]);
    expect(() => interleavedChunks([{ member: 'hot', calls: 1 }], 0)).toThrow(RangeError);
    expect(() => interleavedChunks([{ member: 'hot', calls: 1 }], 1.5)).toThrow(RangeError);
  });
});

describe('runGroups', () => {
  it('runs a group together where its first member stands, every other workload and design alone', () => {
    expect(runGroups(['hot', 'hot-serial', 'oauth', 'cold', 'hot-alerts-off', 'hot-alerts-on'])).toEqual([
      [{ workload: 'hot', design: 'project' }],
      [{ workload: 'hot', design: 'baseline' }],
      [
        { workload: 'hot-serial', design: 'project' },
        { workload: 'oauth', design: 'project' },
      ],
      [
        { workload: 'cold', design: 'project' },
        { workload: 'cold', design: 'baseline' },
      ],
      [
        { workload: 'hot-alerts-off', design: 'project' },
        { workload: 'hot-alerts-on', design: 'project' },
      ],
    ]);
  });

  it('groups the workloads each comparison reads together', () => {
    expect(WORKLOADS.oauth.group).toBe(WORKLOADS['app-id-serial'].group);
    expect(WORKLOADS.soap.group).toBe(WORKLOADS['hot-serial'].group);
    expect(WORKLOADS['hot-alerts-on'].group).toBe(WORKLOADS['hot-alerts-off'].group);
    expect(WORKLOADS['hot-alerts-on'].group).not.toBe(WORKLOADS.oauth.group);
  });
});

describe('refused workloads', () => {
  it('expects every call of both floods and of the refused app refused, and puts the over-limit ones on the plan that allows none', () => {
    expect([...REFUSED_WORKLOADS]).toEqual(['flood-over-limit', 'flood-throttled', 'app-refused']);
    expect([...OVER_LIMIT_WORKLOADS]).toEqual(['flood-over-limit', 'app-refused']);
  });
});

describe('checkWorkloadTable', () => {
  it('takes the table as it is', () => {
    expect(() => checkWorkloadTable()).not.toThrow();
  });

  it('refuses the original design on a set-up it does not have, and an unprotected authorizer', () => {
    expect(() =>
      checkWorkloadTable({ soap: { ...WORKLOADS.soap, designs: ['project', 'baseline'] } }),
    ).toThrow('bench workload soap: the baseline runs the rest and app set-ups only');
    expect(() => checkWorkloadTable({ hot: { ...WORKLOADS.hot, designs: ['unprotected'] } })).toThrow(
      'bench workload hot: only the app set-up runs unprotected',
    );
  });
});
