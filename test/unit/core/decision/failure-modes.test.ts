import { describe, expect, it } from 'vitest';
import { FAILURE_MODE_HANDLERS } from '../../../../core/decision/failure-modes';
import { FAILURE_MODES } from '../../../../core/settings/settings';

const TRUST_MS = 60_000;
const NOW = Date.UTC(2030, 0, 1, 10, 0, 0);
const confirmedAgo = (ms: number) => ({ confirmedAt: NOW - ms, now: NOW, trustMs: TRUST_MS });

describe('the failure-mode table', () => {
  it('has one handler per failure mode a setting may name', () => {
    expect(Object.keys(FAILURE_MODE_HANDLERS).sort()).toEqual([...FAILURE_MODES].sort());
  });

  it.each([
    ['strict', TRUST_MS, true],
    ['strict', TRUST_MS + 1, false],
    ['strict', Number.POSITIVE_INFINITY, false],
    ['resilient', TRUST_MS + 1, true],
    ['resilient', Number.POSITIVE_INFINITY, true],
    ['allow', Number.POSITIVE_INFINITY, true],
  ] as const)('%s, confirmed %d ms ago: trusts the cached allow %s', (mode, ago, trusted) => {
    expect(FAILURE_MODE_HANDLERS[mode].trusts(confirmedAgo(ago))).toBe(trusted);
  });

  it('strict never trusts an answer whose confirmation time is unknown or unreadable', () => {
    expect(FAILURE_MODE_HANDLERS.strict.trusts({ confirmedAt: 0, now: NOW, trustMs: TRUST_MS })).toBe(false);
    expect(
      FAILURE_MODE_HANDLERS.strict.trusts({ confirmedAt: Number.NaN, now: NOW, trustMs: TRUST_MS }),
    ).toBe(false);
  });

  it('only allow admits a call the cache does not decide while the platform is down', () => {
    expect(FAILURE_MODES.map((mode) => [mode, FAILURE_MODE_HANDLERS[mode].undecided])).toEqual([
      ['strict', 'refuse'],
      ['resilient', 'refuse'],
      ['allow', 'admit'],
    ]);
  });
});
