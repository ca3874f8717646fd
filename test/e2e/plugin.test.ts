/**
 * The plugin end to end: the local stack's platform and redis-server, a plugin built from the gateway's
 * own settings, calls decided through `decide` and through an Express app over HTTP, and the usage the
 * plugin allowed reported to the platform by its in-process flusher on close().
 */
import type { AddressInfo } from 'node:net';
import express from 'express';
import { afterEach, describe, expect, it } from 'vitest';
import { type LocalStack, startLocalStack } from '../../local/stack';
import { type AccessControl, createAccessControl } from '../../plugin';
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

async function stackAndPlugin(now = clockFromStartOfHour()) {
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
    reporting: 'in-process',
    now,
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
      res.json({ plan: (req as { access?: { plan: string } }).access?.plan });
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
