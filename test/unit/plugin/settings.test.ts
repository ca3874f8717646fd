/** The plugin's settings: the table's checks and defaults, its own, the environment; a wrong one is named. */
import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../../core/settings/config';
import { pluginConfigOf, settingsFromEnv } from '../../../plugin/settings';

const BASE = { serviceId: 's1', platformCredential: 'pk' };

function problemOf(build: () => unknown): { setting: string } | undefined {
  try {
    build();
    return undefined;
  } catch (error) {
    if (error instanceof ConfigError) return { setting: error.setting };
    throw error;
  }
}

describe('pluginConfigOf', () => {
  it('applies the table defaults and the plugin defaults', () => {
    const config = pluginConfigOf(BASE, {});
    expect(config.access).toMatchObject({
      serviceId: 's1',
      failureMode: 'strict',
      credentialHeader: 'apikey',
    });
    expect(config).toMatchObject({
      redis: undefined,
      reporting: 'in-process',
      sweepIntervalMs: config.access.reportWindowSeconds * 1000,
      countFailedResponses: true,
      tracing: false,
    });
  });

  it('reports through SNS when a topic is given, and refuses sns without one', () => {
    expect(pluginConfigOf({ ...BASE, topicArn: 'arn:aws:sns:us-east-1:1:t' }, {}).reporting).toBe('sns');
    expect(problemOf(() => pluginConfigOf({ ...BASE, reporting: 'sns' }, {}))).toEqual({
      setting: 'topicArn',
    });
  });

  it.each([
    [{ failureMode: 'sometimes' }, 'failureMode'],
    [
      { mappingRules: [{ method: 'GET', pattern: 'no-slash', metric: 'hits', delta: 1 }] },
      'mappingRules[0].pattern',
    ],
    [{ reporting: 'carrier-pigeon' }, 'reporting'],
    [{ countFailedResponses: 'no' }, 'countFailedResponses'],
    [{ sweepIntervalMs: -1 }, 'sweepIntervalMs'],
    [{ redis: 'http://localhost:6379' }, 'redis'],
    [{ serviceId: '' }, 'serviceId'],
    [{ unprotectedMethods: ['FETCH /x'] }, 'unprotectedMethods[0]'],
  ])('names the wrong setting %j', (wrong, setting) => {
    expect(problemOf(() => pluginConfigOf({ ...BASE, ...wrong } as never, {}))).toEqual({ setting });
  });

  it('takes the provider key from the environment, and refuses to start without any', () => {
    expect(
      pluginConfigOf({ serviceId: 's1' }, { THREESCALE_PROVIDER_KEY: 'from-env' }).access.platformCredential,
    ).toBe('from-env');
    expect(problemOf(() => pluginConfigOf({ serviceId: 's1' }, {}))).toEqual({
      setting: 'platformCredential',
    });
  });
});

describe('settingsFromEnv', () => {
  it('reads the table variables, REDIS_URL and the plugin variables', () => {
    const settings = settingsFromEnv({
      SERVICE_ID: 's1',
      FAILURE_MODE: 'resilient',
      REDIS_URL: 'rediss://:secret@cache.example.com:6380',
      ACCESS_COUNT_FAILED_RESPONSES: 'false',
      ACCESS_TRACING: 'true',
      THREESCALE_PROVIDER_KEY: 'pk',
    });
    expect(settings).toMatchObject({
      serviceId: 's1',
      failureMode: 'resilient',
      redis: 'rediss://:secret@cache.example.com:6380',
      countFailedResponses: false,
      tracing: true,
      platformCredential: 'pk',
    });
    expect(pluginConfigOf(settings, {}).redis).toEqual({
      kind: 'settings',
      settings: { mode: 'standalone', host: 'cache.example.com', port: 6380, tls: true, password: 'secret' },
    });
  });

  it('takes an ACL user name from REDIS_URL (MemoryDB), percent-decoded as the password is', () => {
    expect(
      pluginConfigOf(
        { serviceId: 's1', redis: 'rediss://access%2Dmgmt:p%40ss@cache.example.com' },
        {
          THREESCALE_PROVIDER_KEY: 'pk',
        },
      ).redis,
    ).toEqual({
      kind: 'settings',
      settings: {
        mode: 'standalone',
        host: 'cache.example.com',
        port: 6379,
        tls: true,
        username: 'access-mgmt',
        password: 'p@ss',
      },
    });
  });

  it('names a variable that is not a boolean', () => {
    expect(problemOf(() => settingsFromEnv({ SERVICE_ID: 's1', ACCESS_TRACING: 'maybe' }))).toEqual({
      setting: 'ACCESS_TRACING',
    });
  });
});
