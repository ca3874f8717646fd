/** POST /transactions.xml: accepted reports, the batch rule, timestamps, body encodings. */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type RunningPlatform, startPlatform } from '../../../local/platform';
import { CONFIG, post, TestClock, USER_KEY_SERVICE, WEDNESDAY } from './fixture';

const HOUR_MS = 3600_000;

function form(transactions: Record<string, string>[], auth = { provider_key: 'pk-demo' }): string {
  const params = new URLSearchParams({ ...auth, service_id: USER_KEY_SERVICE });
  transactions.forEach((transaction, i) => {
    for (const [name, value] of Object.entries(transaction)) params.set(`transactions[${i}]${name}`, value);
  });
  return params.toString();
}

describe('report', () => {
  let clock: TestClock;
  let platform: RunningPlatform;

  beforeEach(async () => {
    clock = new TestClock(WEDNESDAY);
    platform = await startPlatform({ config: CONFIG, now: clock.now });
  });

  afterEach(async () => {
    await platform.stop();
  });

  const hits = (app: string, period: 'hour' | 'day' | 'minute' = 'hour') =>
    platform.usage(USER_KEY_SERVICE, app, 'hits', period);

  it('answers 202 with an empty body and records every transaction of many applications', async () => {
    const answer = await post(
      platform,
      form([
        { '[user_key]': 'demo-key-1', '[usage][get_word]': '2' },
        { '[user_key]': 'demo-key-2', '[usage][hits]': '5' },
        { '[user_key]': 'demo-key-1', '[usage][hits]': '1', '[log][code]': '200' },
      ]),
    );
    expect(answer.status).toBe(202);
    expect(answer.body).toBe('');
    expect([hits('app-1'), hits('app-2')]).toEqual([3, 5]);
    expect(platform.usage(USER_KEY_SERVICE, 'app-1', 'get_word', 'hour')).toBe(2);
    expect(platform.stats()).toMatchObject({ report: 1, transactions: 3 });
    expect(platform.reportErrors()).toEqual([]);
  });

  it('records past limits and for suspended applications (reports are not authorized)', async () => {
    await post(
      platform,
      form([
        { '[user_key]': 'demo-key-1', '[usage][post_word]': '3' },
        { '[user_key]': 'suspended-key', '[usage][hits]': '1' },
      ]),
    );
    expect(platform.usage(USER_KEY_SERVICE, 'app-1', 'post_word', 'eternity')).toBe(3);
    expect(hits('app-suspended')).toBe(1);
  });

  it('authenticates with a service token too', async () => {
    const answer = await post(
      platform,
      form([{ '[user_key]': 'demo-key-1', '[usage][hits]': '1' }], { service_token: 'st-demo' } as never),
    );
    expect(answer.status).toBe(202);
    expect(hits('app-1')).toBe(1);
  });

  it.each([
    [
      'an unknown metric',
      { '[user_key]': 'demo-key-2', '[usage][nope]': '1' },
      'metric_invalid',
      'metric "nope" is invalid',
    ],
    [
      'an unknown user key',
      { '[user_key]': 'ghost', '[usage][hits]': '1' },
      'user_key_invalid',
      'user key "ghost" is invalid',
    ],
    [
      'a bad usage value',
      { '[user_key]': 'demo-key-2', '[usage][hits]': 'many' },
      'usage_value_invalid',
      'usage value "many" for metric "hits" is invalid',
    ],
    [
      'a timestamp older than 24 hours',
      { '[user_key]': 'demo-key-2', '[usage][hits]': '1', '[timestamp]': '2024-01-09 12:30:14 +0000' },
      'transaction_timestamp_too_old',
      'reporting transactions older than 86400 seconds is not allowed',
    ],
    [
      'a timestamp more than an hour ahead',
      { '[user_key]': 'demo-key-2', '[usage][hits]': '1', '[timestamp]': '2024-01-10 13:30:16 +0000' },
      'transaction_timestamp_too_new',
      'reporting transactions more than 3600 seconds in the future is not allowed',
    ],
  ])(
    'accepts a batch with %s but drops all of it, as the platform does',
    async (_name, bad, code, message) => {
      const answer = await post(platform, form([{ '[user_key]': 'demo-key-1', '[usage][hits]': '1' }, bad]));
      expect(answer.status).toBe(202);
      expect([hits('app-1'), hits('app-2')]).toEqual([0, 0]);
      expect(platform.reportErrors()).toEqual([{ code, message, at: WEDNESDAY }]);
      expect(platform.stats().transactions).toBe(2);
    },
  );

  it('records a timestamped transaction in the periods of its timestamp (UTC, offsets, Unix seconds)', async () => {
    await post(
      platform,
      form([
        { '[user_key]': 'demo-key-1', '[usage][hits]': '1', '[timestamp]': '2024-01-10 11:59:59' },
        { '[user_key]': 'demo-key-1', '[usage][hits]': '2', '[timestamp]': '2024-01-10 13:10:00 +02:00' },
        {
          '[user_key]': 'demo-key-1',
          '[usage][hits]': '4',
          '[timestamp]': String((WEDNESDAY - 24 * HOUR_MS) / 1000),
        },
        { '[user_key]': 'demo-key-1', '[usage][hits]': '8', '[timestamp]': '' },
      ]),
    );
    expect(platform.reportErrors()).toEqual([]);
    expect(hits('app-1', 'hour')).toBe(8);
    expect(hits('app-1', 'day')).toBe(11);
    clock.time = Date.UTC(2024, 0, 10, 11, 30);
    expect(hits('app-1', 'hour')).toBe(3);
    clock.time = WEDNESDAY - 24 * HOUR_MS;
    expect(hits('app-1', 'day')).toBe(4);
  });

  it('skips transactions whose usage is all zero, even with an unknown application', async () => {
    const answer = await post(
      platform,
      form([
        { '[user_key]': 'ghost', '[usage][hits]': '0' },
        { '[user_key]': 'demo-key-1', '[usage][hits]': '1' },
      ]),
    );
    expect(answer.status).toBe(202);
    expect(hits('app-1')).toBe(1);
    expect(platform.reportErrors()).toEqual([]);
  });

  it('reads multipart/form-data bodies and parameters in the query string', async () => {
    const body = new FormData();
    body.set('service_id', USER_KEY_SERVICE);
    body.set('transactions[0][user_key]', 'demo-key-1');
    body.set('transactions[0][usage][get_word]', '2');
    const response = await fetch(`${platform.url}/transactions.xml?provider_key=pk-demo`, {
      method: 'POST',
      body,
    });
    expect(response.status).toBe(202);
    expect(hits('app-1')).toBe(2);
  });

  it('takes a body without Content-Type as a form, and refuses a broken multipart body', async () => {
    const bare = await post(
      platform,
      new TextEncoder().encode(form([{ '[user_key]': 'demo-key-1', '[usage][hits]': '1' }])),
      {},
    );
    expect(bare.status).toBe(202);
    const broken = await post(platform, 'not multipart', {
      'content-type': 'multipart/form-data; boundary=x',
    });
    expect(broken.status).toBe(400);
    expect(broken.body).toContain('<error code="bad_request">');
    expect(hits('app-1')).toBe(1);
  });

  it('accepts exactly 1000 transactions', async () => {
    const answer = await post(
      platform,
      form(Array.from({ length: 1000 }, () => ({ '[user_key]': 'demo-key-1', '[usage][hits]': '1' }))),
    );
    expect(answer.status).toBe(202);
    expect(platform.usage(USER_KEY_SERVICE, 'app-1', 'hits', 'eternity')).toBe(1000);
  });

  it('refuses a body over 8 MiB with 413 and records nothing', async () => {
    const answer = await post(
      platform,
      `${form([{ '[user_key]': 'demo-key-1', '[usage][hits]': '1' }])}&pad=${'x'.repeat(8 * 1024 * 1024)}`,
    );
    expect([answer.status, answer.body]).toEqual([413, '']);
    expect(hits('app-1')).toBe(0);
  });
});
