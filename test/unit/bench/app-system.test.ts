/** How the bench reads the application's answers (app-system.ts). */
import { describe, expect, it } from 'vitest';
import { outcomeOfStatus } from '../../../bench/app-system';

describe('outcomeOfStatus', () => {
  it('reads the app’s answers in the authorizer workloads’ words', () => {
    expect([200, 401, 403, 429, 503].map(outcomeOfStatus)).toEqual([
      'allow',
      'unauthorized',
      'explicit_deny',
      'explicit_deny',
      'status 503',
    ]);
  });
});
