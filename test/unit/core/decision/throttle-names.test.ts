/**
 * Throttles whose plan or metric names the platform spells otherwise never apply, silently: the
 * authorizer says so at start (a throttle metric no mapping rule names but one in another case) and on
 * the first answer that names the plan (a throttle plan the platform spells otherwise), with a log line
 * and the PlatformMisconfigured metric, once each.
 */
import { describe, expect, it } from 'vitest';
import { ThrottleNames } from '../../../../core/decision/throttle-names';
import { CapturingLogger, CapturingMetrics } from '../fakes';

const RULES = [{ method: 'GET', pattern: '/v1/words', metric: 'get_word', delta: 1 }];

function check(throttles: object) {
  const logger = new CapturingLogger();
  const metrics = new CapturingMetrics();
  const names = new ThrottleNames({ throttles, mappingRules: RULES } as never, logger, metrics);
  return { names, logger, metrics };
}

describe('ThrottleNames', () => {
  it('warns at start of a throttle metric that a mapping rule names in another case', () => {
    const { logger, metrics } = check({ Basic: { metrics: { Get_Word: { rate: 1, burst: 2 } } } });
    expect(JSON.stringify(logger.lines)).toMatch(/Get_Word.*get_word/);
    expect(metrics.counts.PlatformMisconfigured).toBe(1);
  });

  it('warns once on the first answer naming a plan the throttles spell otherwise', () => {
    const { names, logger, metrics } = check({ basic: { rate: 1, burst: 3 } });
    expect(metrics.counts.PlatformMisconfigured).toBeUndefined();
    names.onAnswerNaming('Basic');
    names.onAnswerNaming('Basic');
    expect(metrics.counts.PlatformMisconfigured).toBe(1);
    expect(JSON.stringify(logger.lines)).toMatch(/basic.*Basic/);
  });

  it('says nothing of names that match, or of plans no throttle names', () => {
    const { names, metrics } = check({
      Basic: { rate: 1, burst: 3, metrics: { get_word: { rate: 1, burst: 1 } } },
    });
    names.onAnswerNaming('Basic');
    names.onAnswerNaming('Pro');
    expect(metrics.counts.PlatformMisconfigured).toBeUndefined();
  });
});
