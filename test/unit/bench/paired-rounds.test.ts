import { describe, expect, it } from 'vitest';
import { type PairedFigure, pairedRatios, pairedRoundsNote } from '../../../bench/paired-rounds';

interface Figures {
  readonly total?: number;
  readonly rounds?: readonly number[];
}

const FIGURE: PairedFigure<Figures> = { total: (f) => f.total, rounds: (f) => f.rounds };

describe('pairedRatios', () => {
  it('divides round by round when both ran in the same rounds', () => {
    expect(pairedRatios({ total: 9, rounds: [2, 6, 9] }, { total: 3, rounds: [1, 3, 3] }, FIGURE)).toEqual([
      2, 2, 3,
    ]);
  });

  it('divides the totals when the rounds do not pair, and is NaN when a total is missing', () => {
    expect(pairedRatios({ total: 9, rounds: [2, 6] }, { total: 3, rounds: [1, 3, 3] }, FIGURE)).toEqual([3]);
    expect(pairedRatios({ total: 9 }, { total: 3 }, FIGURE)).toEqual([3]);
    expect(pairedRatios({}, { total: 3 }, FIGURE)[0]).toBeNaN();
  });
});

describe('pairedRoundsNote', () => {
  it('names the rounds and their range, and says nothing of totals', () => {
    expect(pairedRoundsNote([1.1, 0.9, 1.2], '-10%', '+20%')).toBe(
      ' (median of 3 paired rounds; rounds from -10% to +20%)',
    );
    expect(pairedRoundsNote([1.1], '+10%', '+10%')).toBe('');
  });
});
