import { describe, expect, it } from 'vitest';
import type { LimitInfo, ThrottleRefusal } from '../../../../core/budget/cache-types';
import { RECHECK_GRACE_MS, RefusalMemory } from '../../../../core/decision/refusal-memory';

const BUDGET = 'a'.repeat(64);
const OTHER = 'b'.repeat(64);
const T0 = 1_700_000_000_000;
const perMinute = (resetAt?: number): LimitInfo => ({
  metric: 'hits',
  period: 'minute',
  max: 10,
  ...(resetAt !== undefined && { resetAt }),
});

const throttledFor = (retryInMs: number): ThrottleRefusal => ({ rate: 10, burst: 3, retryInMs });

describe('RefusalMemory', () => {
  it('refuses the same metric of the same budget until the bound, then forgets', () => {
    const memory = new RefusalMemory(1000);
    memory.rememberLimited(BUDGET, '', { hits: 1 }, 'basic', perMinute(T0 + 60_000), T0);
    expect(memory.refusalOf(BUDGET, '', { hits: 1 }, T0 + 999)).toEqual({
      kind: 'limited',
      plan: 'basic',
      limit: perMinute(T0 + 60_000),
    });
    expect(memory.refusalOf(BUDGET, '', { hits: 1 }, T0 + 1000)).toBeUndefined();
  });

  it("ends at the limit's reset when that comes before the bound", () => {
    const memory = new RefusalMemory(1000);
    memory.rememberLimited(BUDGET, '', { hits: 1 }, 'basic', perMinute(T0 + 300), T0);
    expect(memory.refusalOf(BUDGET, '', { hits: 1 }, T0 + 299)?.kind).toBe('limited');
    expect(memory.refusalOf(BUDGET, '', { hits: 1 }, T0 + 300)).toBeUndefined();
  });

  it('never refuses another budget, other metrics, or a call adding less than the refused one', () => {
    const memory = new RefusalMemory(1000);
    memory.rememberLimited(BUDGET, '', { hits: 3, search: 1 }, 'basic', perMinute(), T0);
    expect(memory.refusalOf(OTHER, '', { hits: 3, search: 1 }, T0)).toBeUndefined();
    expect(memory.refusalOf(BUDGET, '', { search: 1 }, T0)).toBeUndefined();
    expect(memory.refusalOf(BUDGET, '', { hits: 3 }, T0)).toBeUndefined();
    expect(memory.refusalOf(BUDGET, '', { hits: 2, search: 1 }, T0)).toBeUndefined();
    expect(memory.refusalOf(BUDGET, '', { hits: 3, search: 1 }, T0)?.kind).toBe('limited');
    expect(memory.refusalOf(BUDGET, '', { search: 1, hits: 5 }, T0)?.kind).toBe('limited');
  });

  it('keeps a limit refusal for the key Redis verified: another key of the budget is asked about', () => {
    const memory = new RefusalMemory(1000);
    memory.rememberLimited(BUDGET, 'key-a', { hits: 1 }, 'basic', perMinute(), T0);
    expect(memory.refusalOf(BUDGET, 'key-a', { hits: 1 }, T0)?.kind).toBe('limited');
    expect(memory.refusalOf(BUDGET, 'key-b', { hits: 1 }, T0)).toBeUndefined();
  });

  it("keeps a refusal by a parent metric's limit for the call's own metrics", () => {
    const memory = new RefusalMemory(1000);
    memory.rememberLimited(BUDGET, '', { get_word: 1 }, 'basic', perMinute(), T0);
    expect(memory.refusalOf(BUDGET, '', { get_word: 1 }, T0)?.kind).toBe('limited');
    expect(memory.refusalOf(BUDGET, '', { hits: 1 }, T0)).toBeUndefined();
  });

  it('refuses a credential the platform refused, for its key only, until the bound', () => {
    const memory = new RefusalMemory(1000);
    memory.rememberInvalid(BUDGET, 'key-1', T0);
    expect(memory.refusalOf(BUDGET, 'key-1', { hits: 1 }, T0 + 500)).toEqual({ kind: 'invalid' });
    expect(memory.refusalOf(BUDGET, 'key-2', { hits: 1 }, T0 + 500)).toBeUndefined();
    expect(memory.refusalOf(BUDGET, 'key-1', { hits: 1 }, T0 + 1000)).toBeUndefined();
  });

  it('keeps nothing with a bound of 0', () => {
    const memory = new RefusalMemory(0);
    memory.rememberLimited(BUDGET, '', { hits: 1 }, 'basic', perMinute(), T0);
    memory.rememberInvalid(BUDGET, '', T0);
    expect(memory.refusalOf(BUDGET, '', { hits: 1 }, T0)).toBeUndefined();
  });

  it('refuses a throttled call until the GCRA lets the same call pass (less its rounding), saying how long is left', () => {
    const memory = new RefusalMemory(1000);
    memory.rememberThrottled(BUDGET, '', { hits: 1 }, 'basic', throttledFor(300), T0);
    expect(memory.refusalOf(BUDGET, '', { hits: 1 }, T0 + 100)).toEqual({
      kind: 'throttled',
      plan: 'basic',
      throttle: { rate: 10, burst: 3, retryInMs: 200 },
    });
    expect(memory.refusalOf(BUDGET, '', { hits: 1 }, T0 + 298)?.kind).toBe('throttled');
    expect(memory.refusalOf(BUDGET, '', { hits: 1 }, T0 + 299)).toBeUndefined();
  });

  it('keeps a throttled refusal no longer than the bound, and not at all with a bound of 0', () => {
    const memory = new RefusalMemory(1000);
    memory.rememberThrottled(BUDGET, '', { hits: 1 }, 'basic', throttledFor(60_000), T0);
    expect(memory.refusalOf(BUDGET, '', { hits: 1 }, T0 + 999)?.kind).toBe('throttled');
    expect(memory.refusalOf(BUDGET, '', { hits: 1 }, T0 + 1000)).toBeUndefined();
    const off = new RefusalMemory(0);
    off.rememberThrottled(BUDGET, '', { hits: 1 }, 'basic', throttledFor(60_000), T0);
    expect(off.refusalOf(BUDGET, '', { hits: 1 }, T0)).toBeUndefined();
  });

  it('never refuses from a throttle another budget, other metrics, or a call taking fewer cells', () => {
    const memory = new RefusalMemory(1000);
    memory.rememberThrottled(BUDGET, '', { hits: 2 }, 'basic', throttledFor(500), T0);
    expect(memory.refusalOf(OTHER, '', { hits: 2 }, T0)).toBeUndefined();
    expect(memory.refusalOf(BUDGET, '', { search: 2 }, T0)).toBeUndefined();
    expect(memory.refusalOf(BUDGET, '', { hits: 1 }, T0)).toBeUndefined();
    expect(memory.refusalOf(BUDGET, '', { hits: 3 }, T0)?.kind).toBe('throttled');
  });

  it('refuses from a throttle only the key Redis verified: another key of the budget asks Redis', () => {
    const memory = new RefusalMemory(1000);
    memory.rememberThrottled(BUDGET, 'key-1', { hits: 1 }, 'basic', throttledFor(500), T0);
    expect(memory.refusalOf(BUDGET, 'key-1', { hits: 1 }, T0)?.kind).toBe('throttled');
    expect(memory.refusalOf(BUDGET, 'key-2', { hits: 1 }, T0)).toBeUndefined();
  });

  it('keeps nothing of a throttle whose wait is within its rounding', () => {
    const memory = new RefusalMemory(1000);
    memory.rememberThrottled(BUDGET, '', { hits: 1 }, 'basic', throttledFor(1), T0);
    expect(memory.refusalOf(BUDGET, '', { hits: 1 }, T0)).toBeUndefined();
  });

  it('past the bound, lets the first call re-check a limit refusal and refuses the others for one grace only', () => {
    const memory = new RefusalMemory(1000);
    memory.rememberLimited(BUDGET, '', { hits: 1 }, 'basic', perMinute(T0 + 60_000), T0);
    expect(memory.refusalOf(BUDGET, '', { hits: 1 }, T0 + 1000)).toBeUndefined();
    expect(memory.refusalOf(BUDGET, '', { hits: 1 }, T0 + 1000)?.kind).toBe('limited');
    expect(memory.refusalOf(BUDGET, '', { hits: 1 }, T0 + 1000 + RECHECK_GRACE_MS - 1)?.kind).toBe('limited');
    // No answer within the grace (a slow Redis): a raised limit must still reach the calls within the
    // bound and the grace, so every call asks Redis until an answer is remembered.
    expect(memory.refusalOf(BUDGET, '', { hits: 1 }, T0 + 1000 + RECHECK_GRACE_MS)).toBeUndefined();
    expect(memory.refusalOf(BUDGET, '', { hits: 1 }, T0 + 1000 + RECHECK_GRACE_MS)).toBeUndefined();
  });

  it('past the bound, keeps a throttle refusal for a grace at a time while its re-checks go unanswered', () => {
    const memory = new RefusalMemory(1000);
    memory.rememberThrottled(BUDGET, '', { hits: 1 }, 'basic', throttledFor(60_000), T0);
    expect(memory.refusalOf(BUDGET, '', { hits: 1 }, T0 + 1000)).toBeUndefined();
    expect(memory.refusalOf(BUDGET, '', { hits: 1 }, T0 + 1000)?.kind).toBe('throttled');
    expect(memory.refusalOf(BUDGET, '', { hits: 1 }, T0 + 1000 + RECHECK_GRACE_MS)).toBeUndefined();
    expect(memory.refusalOf(BUDGET, '', { hits: 1 }, T0 + 1000 + RECHECK_GRACE_MS)?.kind).toBe('throttled');
  });

  it("never keeps a refusal past its limit's reset, nor a throttle's past the moment the call can pass", () => {
    const memory = new RefusalMemory(1000);
    const resetAt = T0 + 1000 + RECHECK_GRACE_MS / 2;
    memory.rememberLimited(BUDGET, '', { hits: 1 }, 'basic', perMinute(resetAt), T0);
    memory.rememberThrottled(
      BUDGET,
      '',
      { search: 1 },
      'basic',
      throttledFor(1000 + RECHECK_GRACE_MS / 2),
      T0,
    );
    for (const usage of [{ hits: 1 }, { search: 1 }] as Record<string, number>[]) {
      expect(memory.refusalOf(BUDGET, '', usage, T0 + 1000)).toBeUndefined();
      expect(memory.refusalOf(BUDGET, '', usage, T0 + 1000)).toBeDefined();
    }
    expect(memory.refusalOf(BUDGET, '', { hits: 1 }, resetAt)).toBeUndefined();
    expect(memory.refusalOf(BUDGET, '', { hits: 1 }, resetAt)).toBeUndefined();
    expect(memory.refusalOf(BUDGET, '', { search: 1 }, resetAt - 1)).toBeUndefined();
    expect(memory.refusalOf(BUDGET, '', { search: 1 }, resetAt - 1)).toBeUndefined();
  });

  it('forgets what it kept for the budget, key and metrics of an allowed call', () => {
    const memory = new RefusalMemory(1000);
    memory.rememberLimited(BUDGET, 'key-1', { hits: 1 }, 'basic', perMinute(), T0);
    memory.rememberThrottled(BUDGET, 'key-1', { hits: 1 }, 'basic', throttledFor(500), T0);
    memory.rememberLimited(BUDGET, 'key-1', { search: 1 }, 'basic', perMinute(), T0);
    memory.forget(BUDGET, 'key-1', { hits: 1 });
    expect(memory.refusalOf(BUDGET, 'key-1', { hits: 1 }, T0)).toBeUndefined();
    expect(memory.refusalOf(BUDGET, 'key-1', { search: 1 }, T0)?.kind).toBe('limited');
  });

  it('keeps at most its maximum of entries, dropping the oldest', () => {
    const memory = new RefusalMemory(1000, 2);
    for (const id of ['1', '2', '3']) memory.rememberInvalid(id.repeat(64), '', T0);
    expect(memory.refusalOf('1'.repeat(64), '', { hits: 1 }, T0)).toBeUndefined();
    expect(memory.refusalOf('3'.repeat(64), '', { hits: 1 }, T0)).toEqual({ kind: 'invalid' });
  });
});
