import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../../core/settings/config';
import { loadPlatformConfig, startPlatform } from '../../../local/platform';

function service(overrides: Record<string, unknown> = {}) {
  return {
    id: 's1',
    providerKey: 'pk',
    authentication: 'user_key',
    metrics: [{ name: 'hits', children: [{ name: 'get_word' }] }],
    plans: [{ name: 'Basic', limits: [{ metric: 'hits', period: 'hour', value: 10 }] }],
    applications: [
      { id: 'a0', userKey: 'k0', plan: 'Basic' },
      { id: 'a1', userKey: 'k1', plan: 'Basic' },
      { id: 'a2', userKey: 'k2', plan: 'Basic' },
    ],
    ...overrides,
  };
}

const platform = (...services: unknown[]) => ({ platform: { services } });

function withApp(index: number, app: Record<string, unknown>) {
  const base = service();
  return platform({
    ...base,
    applications: base.applications.map((a, i) => (i === index ? { ...a, ...app } : a)),
  });
}

function message(input: unknown): string {
  try {
    loadPlatformConfig(input);
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return (error as Error).message;
  }
  throw new Error('the config was accepted');
}

describe('platform config validation', () => {
  it.each([
    [
      'an unknown plan',
      withApp(2, { plan: 'Gold' }),
      'platform.services[0].applications[2].plan names an unknown plan "Gold"',
    ],
    [
      'a duplicate app id',
      withApp(1, { id: 'a0' }),
      'platform.services[0].applications[1].id repeats the application id "a0"',
    ],
    [
      'a duplicate user key',
      withApp(2, { userKey: 'k0' }),
      'platform.services[0].applications[2].userKey repeats the user key "k0"',
    ],
    [
      'an unknown metric in a limit',
      platform(
        service({ plans: [{ name: 'Basic', limits: [{ metric: 'nope', period: 'hour', value: 1 }] }] }),
      ),
      'platform.services[0].plans[0].limits[0].metric names an unknown metric "nope"',
    ],
    [
      'a bad period',
      platform(
        service({ plans: [{ name: 'Basic', limits: [{ metric: 'hits', period: 'fortnight', value: 1 }] }] }),
      ),
      'platform.services[0].plans[0].limits[0].period must be one of eternity, year, month, week, day, hour, minute (got "fortnight")',
    ],
    [
      'a negative limit',
      platform(
        service({ plans: [{ name: 'Basic', limits: [{ metric: 'hits', period: 'day', value: -1 }] }] }),
      ),
      'platform.services[0].plans[0].limits[0].value must be an integer from 0 to',
    ],
    [
      'the same limit twice',
      platform(
        service({
          plans: [
            {
              name: 'Basic',
              limits: [
                { metric: 'hits', period: 'day', value: 1 },
                { metric: 'hits', period: 'day', value: 2 },
              ],
            },
          ],
        }),
      ),
      'platform.services[0].plans[0].limits[1] repeats the limit "hits per day"',
    ],
    [
      'a duplicate plan',
      platform(service({ plans: [{ name: 'Basic' }, { name: 'Basic' }], applications: [] })),
      'platform.services[0].plans[1].name repeats the plan "Basic"',
    ],
    [
      'a duplicate metric',
      platform(service({ metrics: [{ name: 'hits', children: [{ name: 'hits' }] }] })),
      'platform.services[0].metrics[0].children[0].name repeats the metric "hits"',
    ],
    [
      'no hits metric',
      platform(service({ metrics: [{ name: 'calls' }] })),
      'platform.services[0].metrics must have the top metric "hits"',
    ],
    [
      'a metric name with brackets',
      platform(service({ metrics: [{ name: 'hits', children: [{ name: 'a[b]' }] }] })),
      'platform.services[0].metrics[0].children[0].name must use only letters, digits',
    ],
    [
      'a duplicate service',
      platform(service(), service()),
      'platform.services[1].id repeats the service id "s1"',
    ],
    [
      'no provider key nor service token',
      platform(service({ providerKey: undefined })),
      'platform.services[0] needs a providerKey or a serviceToken',
    ],
    [
      'a bad authentication',
      platform(service({ authentication: 'oauth' })),
      'platform.services[0].authentication must be one of user_key, app_id, oidc (got "oauth")',
    ],
    [
      'a bad application state',
      withApp(0, { state: 'deleted' }),
      'platform.services[0].applications[0].state must be one of active, suspended',
    ],
    [
      'a user_key app without key',
      withApp(1, { userKey: undefined }),
      'platform.services[0].applications[1].userKey is required in a user_key service',
    ],
    [
      'app keys in a user_key service',
      withApp(1, { appKeys: ['x'] }),
      'platform.services[0].applications[1].appKeys does not apply to a user_key service',
    ],
    [
      'a user key in an app_id service',
      platform(
        service({ authentication: 'app_id', applications: [{ id: 'a', userKey: 'k', plan: 'Basic' }] }),
      ),
      'platform.services[0].applications[0].userKey does not apply to an app_id service',
    ],
    [
      'a duplicate app key',
      platform(
        service({
          authentication: 'app_id',
          applications: [{ id: 'a', appKeys: ['x', 'x'], plan: 'Basic' }],
        }),
      ),
      'platform.services[0].applications[0].appKeys[1] repeats the value "x"',
    ],
    [
      'a misspelt setting',
      withApp(0, { userkey: 'k' }),
      'platform.services[0].applications[0].userkey is not a known setting',
    ],
    ['no services', platform(), 'platform.services must list at least one service'],
    ['no platform object', { platform: 'yes' }, 'platform must be an object'],
    ['invalid JSON text', '{"platform":', 'platform is not valid JSON'],
  ])('stops on %s', (_name, input, expected) => {
    expect(message(input)).toContain(`Invalid configuration: ${expected}`);
  });

  it('accepts the whole stack file, its platform section, or JSON text, with defaults', () => {
    const file = {
      platform: {
        services: [
          {
            id: 's',
            serviceToken: 't',
            authentication: 'app_id',
            plans: [{ name: 'P' }],
            applications: [{ id: 'a', plan: 'P' }],
          },
        ],
      },
      gateway: { serviceId: 's' },
    };
    const expected = {
      services: [
        {
          id: 's',
          serviceToken: 't',
          authentication: 'app_id',
          state: 'active',
          metrics: [{ name: 'hits', children: [] }],
          plans: [{ name: 'P', limits: [], published: true, approvalRequired: false, default: false }],
          applications: [{ id: 'a', appKeys: [], plan: 'P', state: 'active', referrerFilters: [] }],
        },
      ],
      admin: {
        settings: { accountApprovalRequired: false, signupsEnabled: true },
        webhookProviderActions: true,
        accessTokens: [],
      },
    };
    expect(loadPlatformConfig(file)).toEqual(expected);
    expect(loadPlatformConfig(file.platform)).toEqual(expected);
    expect(loadPlatformConfig(JSON.stringify(file))).toEqual(expected);
    expect(loadPlatformConfig(loadPlatformConfig(file))).toEqual(expected);
  });

  it('stops startPlatform before it listens', async () => {
    await expect(startPlatform({ config: withApp(2, { plan: 'Gold' }) })).rejects.toThrow(
      'platform.services[0].applications[2].plan names an unknown plan "Gold"',
    );
  });
});
