import { describe, expect, it } from 'vitest';
import { throttleNote } from '../../../lambdas/docs/throttle-note';

describe("the Swagger document's throttle note", () => {
  const throttles = {
    Basic: { rate: 1, burst: 3 },
    Pro: { metrics: { search: { rate: 0.5, burst: 2 } } },
  };

  it("names each plan's throttle of every call, and a metric's throttle on the operations counting it", () => {
    expect(throttleNote(throttles, ['search'])).toBe(
      '\n\nThrottled (calls beyond are refused with 403 `rate_limited`; `reset` says in how many seconds to retry):\n' +
        '- plan `Basic`: 1 per second, 3 at once\n' +
        '- plan `Pro`, `search`: 0.5 per second, 2 at once',
    );
    expect(throttleNote(throttles, ['get_word'])).not.toContain('search');
  });

  it('says nothing when no throttle covers the operation', () => {
    expect(throttleNote({ Pro: { metrics: { search: { rate: 1, burst: 1 } } } }, ['get_word'])).toBe('');
    expect(throttleNote(undefined, ['get_word'])).toBe('');
  });
});
