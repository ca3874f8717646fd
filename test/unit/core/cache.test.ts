import { describe, expect, it } from 'vitest';
import { bucketsOf } from '../../../lambdas/core/cache';
import { describeOnTopologies } from '../../support/redis-topology';
import { describeAccessCache } from './cache-suite';

// The in-memory stand-in has no command timeout: ioredis-mock's TIME is off by up to a second and a
// half, so the hot-path deadline runs only where it is set explicitly (and in the same suite on Redis).
describeOnTopologies(['in-memory'], describeAccessCache);

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
