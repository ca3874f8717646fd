import { describe, expect, it } from 'vitest';
import {
  ALERT_LEVELS,
  ConfigError,
  configFromEnv,
  configToEnv,
  ENV,
  parseConfig,
} from '../../../../core/settings/config';

describe('alertLevels setting', () => {
  it('defaults to 80 and 100 percent', () => {
    expect(parseConfig({ serviceId: 's' }).alertLevels).toEqual([80, 100]);
  });

  it('takes any of the platform levels, sorted, each once; empty turns alerts off', () => {
    expect(parseConfig({ serviceId: 's', alertLevels: [300, 50, 90, 50] }).alertLevels).toEqual([
      50, 90, 300,
    ]);
    expect(parseConfig({ serviceId: 's', alertLevels: [...ALERT_LEVELS] }).alertLevels).toEqual([
      50, 80, 90, 100, 120, 150, 200, 300,
    ]);
    expect(parseConfig({ serviceId: 's', alertLevels: [] }).alertLevels).toEqual([]);
  });

  it.each([[[75]], [[0]], [['80']], [[80.5]], [[100, 400]]])('refuses %j naming the setting', (levels) => {
    expect(() => parseConfig({ serviceId: 's', alertLevels: levels as never })).toThrow(ConfigError);
    expect(() => parseConfig({ serviceId: 's', alertLevels: levels as never })).toThrow(
      /alertLevels\[\d\] must be one of 50, 80, 90, 100, 120, 150, 200, 300/,
    );
  });

  it('refuses a value that is not a list', () => {
    expect(() => parseConfig({ serviceId: 's', alertLevels: 80 as never })).toThrow(
      /alertLevels must be an array/,
    );
  });

  it('travels through the Lambda environment with the alerts topic', () => {
    const config = parseConfig({
      serviceId: 's',
      alertLevels: [50, 100],
      alertsTopicArn: 'arn:aws:sns:us-east-1:123456789012:alerts',
    });
    const env = configToEnv(config);
    expect(env[ENV.alertLevels]).toBe('[50,100]');
    const read = configFromEnv(env);
    expect(read.alertLevels).toEqual([50, 100]);
    expect(read.alertsTopicArn).toBe('arn:aws:sns:us-east-1:123456789012:alerts');
    expect(configFromEnv({ ...env, [ENV.alertLevels]: '[]' }).alertLevels).toEqual([]);
    expect(() => configFromEnv({ ...env, [ENV.alertLevels]: '[70]' })).toThrow(/alertLevels\[0\]/);
  });
});
