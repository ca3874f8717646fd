import { describe, expect, it } from 'vitest';
import { cutShortBefore, HIT_SCRIPT_STEPS, pairedFigures } from '../../../bench/hit-script-steps';
import { CHECK_SCRIPT } from '../../../core/budget/scripts/check-script';

describe('the hit script cut short after each step', () => {
  it('finds every step of the hot-path script once, in the order the script runs them', () => {
    const at = HIT_SCRIPT_STEPS.map((step) => CHECK_SCRIPT.lua.indexOf(step.before));
    for (const step of HIT_SCRIPT_STEPS)
      expect(() => cutShortBefore(CHECK_SCRIPT.lua, step.before)).not.toThrow();
    expect(at).toEqual([...at].sort((a, b) => a - b));
  });

  it('returns before the whole line holding the marker', () => {
    const lua = 'local a = 1\nlocal b = a + 1\nreturn b\n';
    expect(cutShortBefore(lua, 'a + 1')).toBe('local a = 1\ndo return 1 end\nlocal b = a + 1\nreturn b\n');
  });

  it('refuses a marker missing or found twice', () => {
    expect(() => cutShortBefore('return 1', 'nowhere')).toThrow(/nowhere/);
    expect(() => cutShortBefore('x = 1\nx = 1', 'x = 1')).toThrow(/more than once/);
  });
});

describe('paired figures', () => {
  it('takes the median of each round against the reference in the same round', () => {
    const rounds = new Map([
      ['whole', [20, 30, 22]],
      ['part', [10, 25, 11]],
    ]);
    expect(pairedFigures(rounds, 'whole')).toEqual([
      { name: 'whole', medianMicros: 22, medianDifferenceMicros: 0, rounds: 3 },
      { name: 'part', medianMicros: 11, medianDifferenceMicros: -10, rounds: 3 },
    ]);
  });

  it('refuses rounds that do not pair', () => {
    expect(() => pairedFigures(new Map([['part', [1]]]), 'whole')).toThrow(/no rounds of whole/);
    expect(() =>
      pairedFigures(
        new Map([
          ['whole', [1, 2]],
          ['part', [1]],
        ]),
        'whole',
      ),
    ).toThrow(/1 rounds/);
  });
});
