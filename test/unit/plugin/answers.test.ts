/** The plugin's answers: each refusal as HTTP means it, problem+json with the reason, RateLimit fields. */
import { describe, expect, it } from 'vitest';
import type { AccessDecision, DenyReason } from '../../../core/decision/decision';
import { parseConfig } from '../../../core/settings/config';
import { answerOfRefusal, refusalAnswer } from '../../../plugin/answers';

const NOW = 1_700_000_000_000;
const config = parseConfig({ serviceId: 's1' });

function deny(reason: DenyReason, extra: object = {}): AccessDecision {
  return { effect: 'deny', credentialId: 'c'.repeat(64), plan: 'Basic', metrics: 'hits', reason, ...extra };
}

describe('answerOfRefusal', () => {
  it('answers an unknown credential 401 with a WWW-Authenticate challenge naming where the key goes', () => {
    const answer = answerOfRefusal({ effect: 'unauthorized' }, config, NOW);
    expect(answer.status).toBe(401);
    expect(answer.headers['www-authenticate']).toBe(
      'ApiKey realm="api", error_description="send your key in the apikey header"',
    );
    expect(answer.headers['content-type']).toBe('application/problem+json');
    expect(JSON.parse(answer.body)).toMatchObject({ status: 401, reason: 'invalid_credential' });
  });

  it('answers with the Bearer challenge of RFC 6750 in oauth mode', () => {
    const oauth = parseConfig({
      serviceId: 's1',
      credentialMode: 'oauth',
      oidcIssuer: 'https://id.example.com',
    });
    expect(answerOfRefusal({ effect: 'unauthorized' }, oauth, NOW).headers['www-authenticate']).toMatch(
      /^Bearer /,
    );
  });

  it('answers a limit 429 with Retry-After at the end of its period and the RateLimit fields', () => {
    const limit = { metric: 'hits', period: 'hour', max: 5, resetAt: NOW + 90_500 } as const;
    const answer = answerOfRefusal(deny('limits_exceeded', { limit, retryAfterSeconds: 91 }), config, NOW);
    expect(answer.status).toBe(429);
    expect(answer.headers['retry-after']).toBe('91');
    expect(answer.headers['RateLimit-Policy']).toBe('"default";q=5;w=3600');
    expect(answer.headers.RateLimit).toBe('"default";r=0;t=91');
    expect(JSON.parse(answer.body)).toMatchObject({
      reason: 'limits_exceeded',
      limit: 5,
      remaining: 0,
      reset: 91,
      limitMetric: 'hits',
      limitPeriod: 'hour',
    });
  });

  it('answers a limit of 0 (the plan disables the metric) 403: no wait lets the call through', () => {
    const limit = { metric: 'premium', period: 'eternity', max: 0 } as const;
    const answer = answerOfRefusal(deny('limits_exceeded', { limit }), config, NOW);
    expect(answer.status).toBe(403);
    expect(answer.headers['retry-after']).toBeUndefined();
    expect(JSON.parse(answer.body).reason).toBe('metric_disabled');
  });

  it('answers a throttle 429 with Retry-After when the call would pass', () => {
    const throttle = { rate: 10, burst: 20, retryInMs: 1_200 };
    const answer = answerOfRefusal(deny('rate_limited', { throttle, retryAfterSeconds: 2 }), config, NOW);
    expect(answer.status).toBe(429);
    expect(answer.headers['retry-after']).toBe('2');
  });

  it.each([
    ['platform_unavailable', 5],
    ['platform_busy', 1],
  ] as const)('answers %s 503 with the Retry-After the core gives', (reason, seconds) => {
    const answer = answerOfRefusal(deny(reason, { retryAfterSeconds: seconds }), config, NOW);
    expect(answer.status).toBe(503);
    expect(answer.headers['retry-after']).toBe(String(seconds));
  });

  it.each([
    ['application_not_active', 403],
    ['no_mapping_rule', 403],
    ['service_not_active', 403],
    ['platform_misconfigured', 500],
  ] as const)('answers %s with %i and no Retry-After', (reason, status) => {
    const answer = answerOfRefusal(deny(reason), config, NOW);
    expect(answer.status).toBe(status);
    expect(answer.headers['retry-after']).toBeUndefined();
    expect(JSON.parse(answer.body).reason).toBe(reason);
  });

  it('answers an application key the platform refuses 401 with the challenge', () => {
    const answer = answerOfRefusal(deny('application_key_invalid'), config, NOW);
    expect(answer.status).toBe(401);
    expect(answer.headers['www-authenticate']).toBeDefined();
  });
});

describe('refusalAnswer', () => {
  it.each([
    ['path_too_long', 414],
    ['query_too_long', 414],
    ['headers_too_large', 431],
    ['unreadable_path', 400],
    ['access_check_unavailable', 500],
  ] as const)('answers %s with %i', (reason, status) => {
    const answer = refusalAnswer(reason);
    expect(answer.status).toBe(status);
    expect(JSON.parse(answer.body)).toEqual({
      type: 'about:blank',
      title: expect.any(String),
      status,
      reason,
    });
  });
});
