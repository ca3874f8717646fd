/**
 * The plugin end to end: the local stack's platform and redis-server, a plugin built from the gateway's
 * own settings, calls decided through `decide` and through an Express app over HTTP, and the usage the
 * plugin allowed reported to the platform by its in-process flusher on close().
 */
import type { AddressInfo } from 'node:net';
import { SNSClient } from '@aws-sdk/client-sns';
import express from 'express';
import { afterEach, describe, expect, it } from 'vitest';
import { SNS_CLIENT_SETTINGS } from '../../adapters/sns/client';
import { METRIC } from '../../core/observability/observability';
import { LOCAL_AWS_CREDENTIALS, LOCAL_REGION } from '../../local/sns-endpoint';
import { type LocalStack, startLocalStack } from '../../local/stack';
import { type AccessControl, type AccessControlSettings, createAccessControl } from '../../plugin';
import { CapturingMetrics } from '../unit/core/fakes';
import {
  clockFromStartOfHour,
  HOURLY_LIMIT,
  IN_PROCESS_COMMAND_TIMEOUT_MS,
  PROVIDER_KEY,
  platformCurrentValue,
  STACK_FILE,
  USER_SERVICE,
} from './fixtures';

const stacks: LocalStack[] = [];
const controls: AccessControl[] = [];
const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  await Promise.all(closers.splice(0).map((close) => close()));
  await Promise.all(controls.splice(0).map((control) => control.close()));
  await Promise.all(stacks.splice(0).map((stack) => stack.stop()));
});

async function stackAndPlugin(
  now = clockFromStartOfHour(),
  reporting: (stack: LocalStack) => Partial<AccessControlSettings> = () => ({ reporting: 'in-process' }),
) {
  const stack = await startLocalStack({
    stack: STACK_FILE,
    redis: 'auto',
    sweepIntervalMs: 0,
    redisCommandTimeoutMs: IN_PROCESS_COMMAND_TIMEOUT_MS,
    now,
  });
  stacks.push(stack);
  const gateway = stack.gateways[0];
  if (!gateway?.config.redis) throw new Error('the stack has no Redis');
  const control = createAccessControl({
    ...gateway.config,
    redis: gateway.config.redis,
    now,
    ...reporting(stack),
  });
  controls.push(control);
  return { stack, control };
}

function request(path: string, headers: Record<string, string> = {}) {
  return {
    method: 'GET',
    path,
    query: {},
    headers: Object.fromEntries(Object.entries(headers).map(([k, v]) => [k, [v]])),
  };
}

describe('decide', () => {
  it('allows within the limit, refuses over it with 429, and reports every allowed call on close', async () => {
    const { stack, control } = await stackAndPlugin();
    const outcomes = [];
    for (let i = 0; i < HOURLY_LIMIT + 2; i++) {
      outcomes.push(await control.decide(request('/v1/words/hello.json', { apikey: 'key-limited' })));
    }
    expect(outcomes.filter((outcome) => outcome.allowed)).toHaveLength(HOURLY_LIMIT);
    const refused = outcomes.filter((outcome) => !outcome.allowed);
    expect(refused.map((outcome) => !outcome.allowed && outcome.answer.status)).toEqual([429, 429]);
    await control.close();
    const platformUrl = stack.platform?.url ?? '';
    expect(
      await platformCurrentValue(
        platformUrl,
        { provider_key: PROVIDER_KEY, service_id: USER_SERVICE, user_key: 'key-limited' },
        'hits',
        'hour',
      ),
    ).toBe(HOURLY_LIMIT);
  });
});

describe('express', () => {
  it('answers 401 with a challenge, and lets an allowed call reach its handler with the grant', async () => {
    const { control } = await stackAndPlugin();
    const app = express();
    app.use(control.express());
    app.get('/v1/words/:word', (req, res) => {
      res.json({ plan: req.access?.plan });
    });
    const server = app.listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    closers.push(() => new Promise((resolve) => server.close(() => resolve())));
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const missing = await fetch(`${base}/v1/words/hi.json`);
    expect(missing.status).toBe(401);
    expect(missing.headers.get('www-authenticate')).toMatch(/^ApiKey/);
    expect(missing.headers.get('content-type')).toBe('application/problem+json');
    const first = await fetch(`${base}/v1/words/hi.json`, { headers: { apikey: 'key-roomy' } });
    expect(first.status).toBe(200);
    const allowed = await fetch(`${base}/v1/words/hi.json`, { headers: { apikey: 'key-roomy' } });
    expect(allowed.status).toBe(200);
    expect(await allowed.json()).toEqual({ plan: 'Roomy' });
    expect(allowed.headers.get('ratelimit-policy')).toBe('"default";q=1000;w=3600');
  });
});

/** The platform's hourly hits of the limited application (authorize records nothing). */
function limitedHits(stack: LocalStack): Promise<number | undefined> {
  return platformCurrentValue(
    stack.platform?.url ?? '',
    { provider_key: PROVIDER_KEY, service_id: USER_SERVICE, user_key: 'key-limited' },
    'hits',
    'hour',
  );
}

const REPORTING_PATHS = {
  'in-process': () => ({ reporting: 'in-process' as const }),
  'sns (the stack reporter reports)': (stack: LocalStack) => {
    const snsClient = new SNSClient({
      ...SNS_CLIENT_SETTINGS,
      endpoint: stack.sns.url,
      region: LOCAL_REGION,
      credentials: LOCAL_AWS_CREDENTIALS,
    });
    closers.push(async () => snsClient.destroy());
    return { reporting: 'sns' as const, snsClient };
  },
};

describe.each(Object.entries(REPORTING_PATHS))(
  'one budget with the authorizer, reporting %s',
  (_name, reporting) => {
    it('holds the hard limit exactly across the gateway and the plugin and reports every allowed call once', async () => {
      const metrics = new CapturingMetrics();
      const { stack, control } = await stackAndPlugin(clockFromStartOfHour(), (started) => ({
        ...reporting(started),
        metrics,
      }));
      const statuses: { path: string; status: number }[] = [];
      for (let i = 0; i < 2 * HOURLY_LIMIT; i++) {
        if (i % 2 === 0) {
          const answer = await fetch(`${stack.gatewayUrl}/v1/words/w.json`, {
            headers: { apikey: 'key-limited' },
            signal: AbortSignal.timeout(10_000),
          });
          statuses.push({ path: 'gateway', status: answer.status });
        } else {
          const outcome = await control.decide(request('/v1/words/w.json', { apikey: 'key-limited' }));
          statuses.push({ path: 'plugin', status: outcome.allowed ? 200 : outcome.answer.status });
        }
      }
      expect(statuses.filter(({ status }) => status === 200)).toHaveLength(HOURLY_LIMIT);
      expect(new Set(statuses.filter(({ status }) => status === 200).map(({ path }) => path))).toEqual(
        new Set(['gateway', 'plugin']),
      );
      // The plugin's report messages went out on the chosen path, and none failed.
      expect(metrics.counts[METRIC.reportPublished]).toBeGreaterThan(0);
      expect(metrics.counts[METRIC.reportPublishFailed]).toBeUndefined();
      await control.close();
      await stack.flush();
      expect(await limitedHits(stack)).toBe(HOURLY_LIMIT);
    });
  },
);
