/**
 * The platform's mapping rules without Redis (each instance reads for itself), with a scripted reader of
 * the proxy configuration: when a read happens, what a failed or refused read leaves, the checks rules read
 * get, and the settings platformMappingRulesOf needs. Over HTTP and a real Redis:
 * test/integration/platform-mapping-rules.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { checkThrottlesAgainstRules } from '../../../../core/budget/throttles';
import {
  PlatformMappingRules,
  platformMappingRulesOf,
} from '../../../../core/decision/platform-mapping-rules';
import type { ProxyConfigRead } from '../../../../core/platform/proxy-config';
import { type MappingRule, parseConfig } from '../../../../core/settings/config';
import { CapturingLogger } from '../fakes';

const WORDS: MappingRule = { method: 'GET', pattern: '/v1/words', metric: 'get_word', delta: 1 };
const HEAVY: MappingRule = { method: 'GET', pattern: '/v1/words', metric: 'get_word', delta: 5 };
const REFRESH_MS = 60_000;
const T0 = 1_000_000;

function scripted(answers: ProxyConfigRead[]) {
  let reads = 0;
  return {
    reader: {
      read: async () => {
        const answer = answers[Math.min(reads, answers.length - 1)] as ProxyConfigRead;
        reads += 1;
        return answer;
      },
    },
    reads: () => reads,
  };
}

const ok = (version: number, rules: MappingRule[]): ProxyConfigRead => ({ ok: true, version, rules });
const down: ProxyConfigRead = { ok: false, kind: 'unavailable', message: 'platform refused the connection' };
const request = { method: 'GET', path: '/v1/words', query: {} };

function rulesWith(answers: ProxyConfigRead[], check?: (rules: readonly MappingRule[]) => void) {
  const script = scripted(answers);
  const logger = new CapturingLogger();
  const rules = new PlatformMappingRules({
    serviceId: 's',
    reader: script.reader,
    refreshMs: REFRESH_MS,
    logger,
    ...(check && { check }),
  });
  return { rules, logger, reads: script.reads };
}

describe('PlatformMappingRules without Redis', () => {
  it('reads once, then again only once the rules are older than the bound', async () => {
    const { rules, reads } = rulesWith([ok(1, [WORDS]), ok(2, [HEAVY])]);
    expect((await rules.mapperAt(T0))?.usageOf(request)).toEqual({ get_word: 1 });
    await Promise.all([rules.mapperAt(T0 + 1), rules.mapperAt(T0 + REFRESH_MS - 1)]);
    expect(reads()).toBe(1);
    expect((await rules.mapperAt(T0 + REFRESH_MS))?.usageOf(request)).toEqual({ get_word: 5 });
    expect(reads()).toBe(2);
  });

  it('reads once for calls that find the rules stale together', async () => {
    const { rules, reads } = rulesWith([ok(1, [WORDS])]);
    await Promise.all([rules.mapperAt(T0), rules.mapperAt(T0), rules.mapperAt(T0)]);
    expect(reads()).toBe(1);
  });

  it('has no rules while no read succeeded, and does not read again before the retry interval', async () => {
    const { rules, reads, logger } = rulesWith([down, ok(1, [WORDS])]);
    expect(await rules.mapperAt(T0)).toBeUndefined();
    expect(await rules.mapperAt(T0 + 5_000)).toBeUndefined();
    expect(reads()).toBe(1);
    expect(logger.lines).toContainEqual(
      expect.objectContaining({
        level: 'error',
        attributes: expect.objectContaining({ kind: 'unavailable' }),
      }),
    );
    expect((await rules.mapperAt(T0 + 30_000))?.usageOf(request)).toEqual({ get_word: 1 });
    expect(reads()).toBe(2);
  });

  it('refuses rules that fail the checks of given ones, keeping the last good ones', async () => {
    const throttles = { Basic: { metrics: { get_word: { rate: 1, burst: 2 } } } };
    const { rules, logger } = rulesWith([ok(1, [WORDS]), ok(2, [HEAVY])], (read) =>
      checkThrottlesAgainstRules(throttles, read),
    );
    expect((await rules.mapperAt(T0))?.usageOf(request)).toEqual({ get_word: 1 });
    expect((await rules.mapperAt(T0 + REFRESH_MS))?.usageOf(request)).toEqual({ get_word: 1 });
    expect(logger.lines).toContainEqual(
      expect.objectContaining({
        level: 'warn',
        attributes: expect.objectContaining({
          kind: 'invalid',
          problem: expect.stringMatching(/throttles.Basic.metrics.get_word.burst is 2, below the delta 5/),
          version: 1,
        }),
      }),
    );
  });
});

describe('platformMappingRulesOf', () => {
  const platform = {
    serviceId: 's',
    mappingRulesSource: 'platform',
    adminApiUrl: 'https://acme-admin.example.com',
    adminTokenSecretArn: 'arn:aws:secretsmanager:eu-west-1:123456789012:secret:admin',
  } as const;

  it('needs the admin token read from its secret, naming the secret setting', () => {
    expect(() => platformMappingRulesOf(parseConfig(platform), { logger: new CapturingLogger() })).toThrow(
      /adminTokenSecretArn is required with mappingRulesSource platform: the admin access token was not read/,
    );
  });
});
