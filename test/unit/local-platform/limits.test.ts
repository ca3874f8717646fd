/** Limit semantics: ancestors, limit 0, eternity, period rollover by the injected clock, headers. */
import { afterEach, describe, expect, it } from 'vitest';
import { type RunningPlatform, startPlatform } from '../../../local/platform';
import { ALL_OPTIONS, get, limitHeaders, TestClock, WEDNESDAY } from './fixture';

const SERVICE = 'svc';
const started: RunningPlatform[] = [];

afterEach(async () => {
  await Promise.all(started.splice(0).map((platform) => platform.stop()));
});

type Limit = { metric: string; period: string; value: number };

async function platformWith(limits: Limit[], clock = new TestClock(WEDNESDAY)): Promise<RunningPlatform> {
  const platform = await startPlatform({
    now: clock.now,
    config: {
      services: [
        {
          id: SERVICE,
          providerKey: 'pk',
          authentication: 'user_key',
          metrics: [{ name: 'hits', children: [{ name: 'get_word' }, { name: 'post_word' }] }],
          plans: [{ name: 'P', limits }, { name: 'Free' }],
          applications: [
            { id: 'app-1', userKey: 'k1', plan: 'P' },
            { id: 'app-2', userKey: 'k2', plan: 'P' },
          ],
        },
      ],
    },
  });
  started.push(platform);
  return platform;
}

function call(
  platform: RunningPlatform,
  endpoint: 'authrep' | 'authorize',
  usage: Record<string, number | string>,
  key = 'k1',
) {
  const params = new URLSearchParams({ provider_key: 'pk', service_id: SERVICE, user_key: key });
  for (const [metric, value] of Object.entries(usage)) params.set(`usage[${metric}]`, String(value));
  return get(platform, `/transactions/${endpoint}.xml?${params}`, ALL_OPTIONS);
}

describe('usage propagation to ancestors', () => {
  it('adds a method usage to the method and to hits', async () => {
    const platform = await platformWith([{ metric: 'hits', period: 'hour', value: 100 }]);
    expect((await call(platform, 'authrep', { get_word: 1 })).status).toBe(200);
    expect(platform.usage(SERVICE, 'app-1', 'get_word', 'hour')).toBe(1);
    expect(platform.usage(SERVICE, 'app-1', 'hits', 'hour')).toBe(1);
    expect(platform.usage(SERVICE, 'app-1', 'post_word', 'hour')).toBe(0);
  });

  it('adds both when hits and a method are sent together (hits=1, get_word=1 -> hits 2)', async () => {
    const platform = await platformWith([{ metric: 'hits', period: 'hour', value: 100 }]);
    await call(platform, 'authrep', { hits: 1, get_word: 1 });
    expect(platform.usage(SERVICE, 'app-1', 'hits', 'hour')).toBe(2);
    expect(platform.usage(SERVICE, 'app-1', 'get_word', 'hour')).toBe(1);
  });

  it('checks the limit of an ancestor against a method usage', async () => {
    const platform = await platformWith([{ metric: 'hits', period: 'hour', value: 3 }]);
    const statuses = [];
    for (let i = 0; i < 4; i++) statuses.push((await call(platform, 'authrep', { get_word: 1 })).status);
    expect(statuses).toEqual([200, 200, 200, 409]);
    expect(platform.usage(SERVICE, 'app-1', 'hits', 'hour')).toBe(3);
    expect(platform.usage(SERVICE, 'app-1', 'get_word', 'hour')).toBe(3);
  });

  it('checks current + requested <= max, not only current < max', async () => {
    const platform = await platformWith([{ metric: 'hits', period: 'hour', value: 10 }]);
    await call(platform, 'authrep', { hits: 8 });
    const tooMuch = await call(platform, 'authrep', { get_word: 3 });
    const exact = await call(platform, 'authrep', { get_word: 2 });
    expect([tooMuch.status, exact.status]).toEqual([409, 200]);
    expect(platform.usage(SERVICE, 'app-1', 'hits', 'hour')).toBe(10);
  });

  it('keeps the counters of each application apart', async () => {
    const platform = await platformWith([{ metric: 'hits', period: 'hour', value: 1 }]);
    expect((await call(platform, 'authrep', { hits: 1 }, 'k1')).status).toBe(200);
    expect((await call(platform, 'authrep', { hits: 1 }, 'k2')).status).toBe(200);
    expect((await call(platform, 'authrep', { hits: 1 }, 'k1')).status).toBe(409);
  });
});

describe('limit 0 (a disabled metric)', () => {
  it('rejects any positive usage of the metric and nothing else', async () => {
    const platform = await platformWith([
      { metric: 'hits', period: 'hour', value: 100 },
      { metric: 'post_word', period: 'eternity', value: 0 },
    ]);
    const disabled = await call(platform, 'authrep', { post_word: 1 });
    const zero = await call(platform, 'authrep', { post_word: 0 });
    const other = await call(platform, 'authrep', { get_word: 1 });
    const noUsage = await call(platform, 'authorize', {});
    expect([disabled.status, zero.status, other.status, noUsage.status]).toEqual([409, 200, 200, 200]);
    expect(disabled.headers.get('3scale-rejection-reason')).toBe('limits_exceeded');
    expect(platform.usage(SERVICE, 'app-1', 'post_word', 'eternity')).toBe(0);
    expect(platform.usage(SERVICE, 'app-1', 'hits', 'hour')).toBe(1);
  });
});

describe('authorize, authrep and the reported values', () => {
  it('authorize checks predicted usage and records nothing', async () => {
    const platform = await platformWith([{ metric: 'hits', period: 'hour', value: 2 }]);
    const fits = await call(platform, 'authorize', { hits: 2 });
    const tooMuch = await call(platform, 'authorize', { hits: 3 });
    expect([fits.status, tooMuch.status]).toEqual([200, 409]);
    expect(fits.body).toContain('<current_value>0</current_value>');
    expect(platform.usage(SERVICE, 'app-1', 'hits', 'hour')).toBe(0);
  });

  it('authrep shows current_value including this request; a denied authrep records nothing', async () => {
    const platform = await platformWith([{ metric: 'hits', period: 'hour', value: 5 }]);
    const first = await call(platform, 'authrep', { get_word: 2 });
    expect(first.body).toContain('<max_value>5</max_value><current_value>2</current_value>');
    const denied = await call(platform, 'authrep', { get_word: 4 });
    expect(denied.status).toBe(409);
    expect(denied.body).toContain('<max_value>5</max_value><current_value>2</current_value>');
    expect(platform.usage(SERVICE, 'app-1', 'hits', 'hour')).toBe(2);
  });

  it('marks exceeded="true" only when current > max', async () => {
    const platform = await platformWith([{ metric: 'hits', period: 'hour', value: 2 }]);
    await call(platform, 'authrep', { hits: 2 });
    const atMax = await call(platform, 'authorize', {});
    expect(atMax.status).toBe(200);
    expect(atMax.body).not.toContain('exceeded');
    const report = await fetch(`${platform.url}/transactions.xml`, {
      method: 'POST',
      body: new URLSearchParams({
        provider_key: 'pk',
        service_id: SERVICE,
        'transactions[0][user_key]': 'k1',
        'transactions[0][usage][hits]': '1',
      }),
    });
    expect(report.status).toBe(202);
    const over = await call(platform, 'authorize', {});
    expect(over.status).toBe(409);
    expect(over.body).toContain('<usage_report metric="hits" period="hour" exceeded="true">');
    expect(over.body).toContain('<current_value>3</current_value>');
  });

  it('adds the hierarchy with hierarchy=1: each limited metric and its children', async () => {
    const platform = await platformWith([
      { metric: 'hits', period: 'day', value: 10 },
      { metric: 'hits', period: 'hour', value: 5 },
      { metric: 'get_word', period: 'minute', value: 2 },
    ]);
    const answer = await call(platform, 'authorize', {});
    expect(answer.body).toMatch(
      /<\/usage_reports><hierarchy><metric name="hits" children="get_word post_word"\/><metric name="hits" children="get_word post_word"\/><metric name="get_word" children=""\/><\/hierarchy><\/status>$/,
    );
    const without = await get(
      platform,
      `/transactions/authorize.xml?provider_key=pk&service_id=${SERVICE}&user_key=k1`,
    );
    expect(without.body).not.toContain('hierarchy');
  });
});

describe('periods by the injected clock', () => {
  it('eternity never rolls over and has no period_start/period_end', async () => {
    const clock = new TestClock(WEDNESDAY);
    const platform = await platformWith([{ metric: 'hits', period: 'eternity', value: 2 }], clock);
    await call(platform, 'authrep', { hits: 2 });
    clock.time += 400 * 24 * 3600 * 1000;
    const later = await call(platform, 'authrep', { hits: 1 });
    expect(later.status).toBe(409);
    expect(later.body).toContain(
      '<usage_report metric="hits" period="eternity"><max_value>2</max_value><current_value>2</current_value></usage_report>',
    );
    expect(limitHeaders(later)).toEqual({ remaining: '0', reset: '-1', max: '2' });
  });

  it('an hourly limit starts again at the top of the next hour', async () => {
    const clock = new TestClock(Date.UTC(2024, 0, 10, 12, 59, 59));
    const platform = await platformWith([{ metric: 'hits', period: 'hour', value: 2 }], clock);
    await call(platform, 'authrep', { hits: 1 });
    await call(platform, 'authrep', { hits: 1 });
    const full = await call(platform, 'authrep', { hits: 1 });
    expect(full.status).toBe(409);
    expect(limitHeaders(full)).toEqual({ remaining: '0', reset: '1', max: '2' });
    clock.time = Date.UTC(2024, 0, 10, 13, 0, 0);
    const next = await call(platform, 'authrep', { hits: 1 });
    expect(next.status).toBe(200);
    expect(next.body).toContain(
      '<period_start>2024-01-10 13:00:00 +0000</period_start><period_end>2024-01-10 14:00:00 +0000</period_end>' +
        '<max_value>2</max_value><current_value>1</current_value>',
    );
    expect(platform.usage(SERVICE, 'app-1', 'hits', 'hour')).toBe(1);
    expect(platform.usage(SERVICE, 'app-1', 'hits', 'day')).toBe(3);
  });

  it('a weekly limit runs Monday 00:00 to Monday 00:00 UTC', async () => {
    const clock = new TestClock(Date.UTC(2024, 0, 14, 23, 59, 59));
    const platform = await platformWith([{ metric: 'hits', period: 'week', value: 1 }], clock);
    const sunday = await call(platform, 'authrep', { hits: 1 });
    expect(sunday.body).toContain(
      '<period_start>2024-01-08 00:00:00 +0000</period_start><period_end>2024-01-15 00:00:00 +0000</period_end>',
    );
    expect((await call(platform, 'authrep', { hits: 1 })).status).toBe(409);
    clock.time = Date.UTC(2024, 0, 15, 0, 0, 0);
    const monday = await call(platform, 'authrep', { hits: 1 });
    expect(monday.status).toBe(200);
    expect(monday.body).toContain(
      '<period_start>2024-01-15 00:00:00 +0000</period_start><period_end>2024-01-22 00:00:00 +0000</period_end>',
    );
  });
});

describe('limit headers', () => {
  it('come from the most constrained report among the used metric and its ancestors', async () => {
    const platform = await platformWith([
      { metric: 'hits', period: 'hour', value: 100 },
      { metric: 'get_word', period: 'minute', value: 5 },
      { metric: 'post_word', period: 'minute', value: 1 },
    ]);
    const answer = await call(platform, 'authrep', { get_word: 2 });
    // get_word per minute: (5 - 2) / 2 = 1 identical call left, 45 s to the end of the minute.
    expect(limitHeaders(answer)).toEqual({ remaining: '1', reset: '45', max: '5' });
    const hitsOnly = await call(platform, 'authrep', { hits: 1 });
    expect(limitHeaders(hitsOnly)).toEqual({ remaining: '97', reset: '1785', max: '100' });
  });

  it('count predicted usage on authorize without adding it to current', async () => {
    const platform = await platformWith([{ metric: 'hits', period: 'hour', value: 10 }]);
    const answer = await call(platform, 'authorize', { hits: 3 });
    expect(limitHeaders(answer)).toEqual({ remaining: '3', reset: '1785', max: '10' });
  });

  it('prefer the longer period when two reports leave as many calls', async () => {
    const platform = await platformWith([
      { metric: 'hits', period: 'hour', value: 10 },
      { metric: 'hits', period: 'day', value: 10 },
    ]);
    const answer = await call(platform, 'authrep', { hits: 1 });
    expect(limitHeaders(answer)).toEqual({
      remaining: '9',
      reset: String(11 * 3600 + 29 * 60 + 45),
      max: '10',
    });
  });

  it('are -1 without a binding limit and absent on other denials', async () => {
    const platform = await platformWith([{ metric: 'hits', period: 'hour', value: 10 }]);
    platform.setApplicationPlan(SERVICE, 'app-2', 'Free');
    const unlimited = await call(platform, 'authrep', { hits: 1 }, 'k2');
    expect(limitHeaders(unlimited)).toEqual({ remaining: '-1', reset: '-1', max: null });
    const noUsage = await call(platform, 'authorize', {});
    expect(limitHeaders(noUsage)).toEqual({ remaining: '-1', reset: '-1', max: null });
    platform.setApplicationState(SERVICE, 'app-1', 'suspended');
    const suspended = await call(platform, 'authrep', { hits: 1 });
    expect(suspended.status).toBe(409);
    expect(limitHeaders(suspended)).toEqual({ remaining: null, reset: null, max: null });
  });
});

describe('run-time changes apply at once', () => {
  it('suspending and reactivating an application', async () => {
    const platform = await platformWith([]);
    platform.setApplicationState(SERVICE, 'app-1', 'suspended');
    const suspended = await call(platform, 'authrep', { hits: 1 });
    expect(suspended.status).toBe(409);
    expect(suspended.headers.get('3scale-rejection-reason')).toBe('application_not_active');
    platform.setApplicationState(SERVICE, 'app-1', 'active');
    expect((await call(platform, 'authrep', { hits: 1 })).status).toBe(200);
    expect(platform.usage(SERVICE, 'app-1', 'hits', 'minute')).toBe(1);
  });

  it('setting, lowering and removing a limit; changing the plan', async () => {
    const platform = await platformWith([]);
    await call(platform, 'authrep', { hits: 3 });
    platform.setLimit(SERVICE, 'P', 'hits', 'day', 3);
    expect((await call(platform, 'authrep', { hits: 1 })).status).toBe(409);
    platform.setLimit(SERVICE, 'P', 'hits', 'day', undefined);
    expect((await call(platform, 'authrep', { hits: 1 })).status).toBe(200);
    platform.setLimit(SERVICE, 'Free', 'get_word', 'month', 0);
    platform.setApplicationPlan(SERVICE, 'app-1', 'Free');
    const denied = await call(platform, 'authrep', { get_word: 1 });
    expect(denied.status).toBe(409);
    expect(denied.body).toContain('<plan>Free</plan>');
  });

  it('mutators refuse unknown names and bad values', async () => {
    const platform = await platformWith([]);
    expect(() => platform.setLimit(SERVICE, 'Gold', 'hits', 'day', 1)).toThrow('has no plan "Gold"');
    expect(() => platform.setLimit(SERVICE, 'P', 'nope', 'day', 1)).toThrow('has no metric "nope"');
    expect(() => platform.setLimit(SERVICE, 'P', 'hits', 'fortnight' as 'day', 1)).toThrow('unknown period');
    expect(() => platform.setLimit(SERVICE, 'P', 'hits', 'day', -1)).toThrow('non-negative integer');
    expect(() => platform.setApplicationState(SERVICE, 'ghost', 'active')).toThrow(
      'has no application "ghost"',
    );
    expect(() => platform.usage('nope', 'app-1', 'hits', 'day')).toThrow('no service "nope"');
  });
});

describe('validator order: app key, referrer, application state, service state, limits', () => {
  it('answers the first failing validator', async () => {
    const platform = await startPlatform({
      config: {
        services: [
          {
            id: 'ordered',
            providerKey: 'pk',
            authentication: 'app_id',
            state: 'suspended',
            plans: [{ name: 'Zero', limits: [{ metric: 'hits', period: 'minute', value: 0 }] }],
            applications: [
              {
                id: 'a',
                appKeys: ['secret'],
                plan: 'Zero',
                state: 'suspended',
                referrerFilters: ['ok.example'],
              },
            ],
          },
        ],
      },
    });
    started.push(platform);
    const ask = async (query: string) => {
      const answer = await get(
        platform,
        `/transactions/authrep.xml?provider_key=pk&service_id=ordered&app_id=a&usage%5Bhits%5D=1${query}`,
        ALL_OPTIONS,
      );
      return answer.headers.get('3scale-rejection-reason');
    };
    expect(await ask('&app_key=wrong&referrer=bad.example')).toBe('application_key_invalid');
    expect(await ask('&app_key=secret&referrer=bad.example')).toBe('referrer_not_allowed');
    expect(await ask('&app_key=secret&referrer=ok.example')).toBe('application_not_active');
    platform.setApplicationState('ordered', 'a', 'active');
    expect(await ask('&app_key=secret&referrer=ok.example')).toBe('service_not_active');
    platform.setServiceState('ordered', 'active');
    expect(await ask('&app_key=secret&referrer=ok.example')).toBe('limits_exceeded');
    // Usage is read by the limits validator, so an earlier denial wins over an unknown metric.
    platform.setApplicationState('ordered', 'a', 'suspended');
    const early = await get(
      platform,
      '/transactions/authrep.xml?provider_key=pk&service_id=ordered&app_id=a&app_key=secret&referrer=ok.example&usage%5Bnope%5D=1',
    );
    expect(early.status).toBe(409);
  });
});
