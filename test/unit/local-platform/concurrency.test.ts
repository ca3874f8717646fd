/** Concurrent calls: a check and its increment never interleave, so no call is counted twice or past a limit. */
import { afterEach, describe, expect, it } from 'vitest';
import { type RunningPlatform, startPlatform } from '../../../local/platform';
import { get, post } from './fixture';

const started: RunningPlatform[] = [];

afterEach(async () => {
  await Promise.all(started.splice(0).map((platform) => platform.stop()));
});

async function platformWithHourlyLimit(limit: number): Promise<RunningPlatform> {
  const platform = await startPlatform({
    config: {
      services: [
        {
          id: 'svc',
          providerKey: 'pk',
          authentication: 'user_key',
          metrics: [{ name: 'hits', children: [{ name: 'get_word' }] }],
          plans: [{ name: 'P', limits: [{ metric: 'hits', period: 'hour', value: limit }] }],
          applications: [{ id: 'app', userKey: 'key', plan: 'P' }],
        },
      ],
    },
  });
  started.push(platform);
  return platform;
}

describe('concurrent requests', () => {
  it('200 parallel authreps against a limit of 50: exactly 50 authorized, counter 50', async () => {
    const platform = await platformWithHourlyLimit(50);
    const answers = await Promise.all(
      Array.from({ length: 200 }, () =>
        get(
          platform,
          '/transactions/authrep.xml?provider_key=pk&service_id=svc&user_key=key&usage%5Bget_word%5D=1',
        ),
      ),
    );
    const statuses = answers.map((answer) => answer.status);
    expect(statuses.filter((status) => status === 200)).toHaveLength(50);
    expect(statuses.filter((status) => status === 409)).toHaveLength(150);
    expect(platform.usage('svc', 'app', 'hits', 'hour')).toBe(50);
    expect(platform.usage('svc', 'app', 'get_word', 'hour')).toBe(50);
    expect(platform.stats().authrep).toBe(200);
    const currents = answers
      .filter((answer) => answer.status === 200)
      .map((answer) => Number(/<current_value>(\d+)<\/current_value>/.exec(answer.body)?.[1]))
      .sort((a, b) => a - b);
    expect(currents).toEqual(Array.from({ length: 50 }, (_, i) => i + 1));
  });

  it('parallel reports and authreps add up exactly', async () => {
    const platform = await platformWithHourlyLimit(1_000_000);
    const reports = Array.from({ length: 100 }, () =>
      post(
        platform,
        'provider_key=pk&service_id=svc&transactions%5B0%5D%5Buser_key%5D=key&transactions%5B0%5D%5Busage%5D%5Bhits%5D=3',
      ),
    );
    const authreps = Array.from({ length: 100 }, () =>
      get(
        platform,
        '/transactions/authrep.xml?provider_key=pk&service_id=svc&user_key=key&usage%5Bhits%5D=2',
      ),
    );
    const answers = await Promise.all([...reports, ...authreps]);
    expect(answers.map((answer) => answer.status).sort()).toEqual([
      ...Array<number>(100).fill(200),
      ...Array<number>(100).fill(202),
    ]);
    expect(platform.usage('svc', 'app', 'hits', 'hour')).toBe(100 * 3 + 100 * 2);
  });
});
