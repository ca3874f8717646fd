import { describe, expect, it } from 'vitest';
import type { AccessDecision } from '../../../core/decision/decision';
import type { LogPort } from '../../../core/observability/observability';
import type { Usage } from '../../../core/platform/types';
import { GiveBacks } from '../../../plugin/give-backs';

const decision: AccessDecision = { effect: 'allow', credentialId: 'c', plan: 'basic', metrics: 'hits' };

function logger(): LogPort & { readonly warnings: string[] } {
  const warnings: string[] = [];
  return { warnings, debug() {}, info() {}, error() {}, warn: (message) => void warnings.push(message) };
}

describe('the give-backs of failed calls', () => {
  it('take back the usage of a 5xx or a throw, and of nothing else', async () => {
    const given: AccessDecision[] = [];
    const access = {
      giveBack: async (taken: AccessDecision): Promise<Usage> => {
        given.push(taken);
        return {};
      },
    };
    const giveBacks = new GiveBacks(logger());
    for (const end of [200, 404, 499] as const) await giveBacks.settleOf(access, decision)(end);
    expect(given).toEqual([]);
    await giveBacks.settleOf(access, decision)(500);
    await giveBacks.settleOf(access, decision)('threw');
    expect(given).toEqual([decision, decision]);
  });

  it('are waited for by done(), and one that fails is logged and leaves the usage counted', async () => {
    let finish: () => void = () => undefined;
    const access = {
      giveBack: () =>
        new Promise<Usage>((resolve) => {
          finish = () => resolve({});
        }),
    };
    const giveBacks = new GiveBacks(logger());
    const settled = giveBacks.settleOf(access, decision)(503);
    let done = false;
    const waiting = giveBacks.done().then(() => (done = true));
    await Promise.resolve();
    expect(done).toBe(false);
    finish();
    await Promise.all([settled, waiting]);
    expect(done).toBe(true);

    const log = logger();
    const failing = new GiveBacks(log);
    await failing.settleOf({ giveBack: () => Promise.reject(new Error('redis down')) }, decision)(500);
    await failing.done();
    expect(log.warnings).toEqual(['usage of a failed call not given back']);
  });
});
