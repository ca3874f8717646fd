import { describe, expect, it } from 'vitest';
import { bucketsOf } from '../../../../core/budget/usage-buckets';

describe('bucketsOf', () => {
  it('reads in-flight fields as buckets, oldest first, with usage kept before buckets existed last', () => {
    expect(
      bucketsOf(['200:hits', '2', 't:200', '250', '100:hits', '1', '100:get_word', '1', 'legacy', '4']),
    ).toEqual([
      { start: 100, usage: { hits: 1, get_word: 1 } },
      { start: 200, lastCallAt: 250, usage: { hits: 2 } },
      { usage: { legacy: 4 } },
    ]);
  });
});
