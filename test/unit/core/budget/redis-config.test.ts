import { describe, expect, it } from 'vitest';
import {
  ConfigError,
  configFromEnv,
  configToEnv,
  ENV,
  hostPort,
  parseConfig,
} from '../../../../core/settings/config';

const BASE = { serviceId: 's1' };

describe('redis settings', () => {
  it('default to standalone mode', () => {
    expect(parseConfig({ ...BASE, redis: { host: 'primary.example' } }).redis).toEqual({
      mode: 'standalone',
      host: 'primary.example',
      port: 6379,
      tls: false,
    });
  });

  it('take cluster mode with seed nodes, and refuse seeds or a mode that do not fit', () => {
    const config = parseConfig({
      ...BASE,
      redis: { mode: 'cluster', host: '127.0.0.1', port: 7000, seeds: [{ host: '127.0.0.1', port: 7001 }] },
    });
    expect(config.redis).toMatchObject({ mode: 'cluster', seeds: [{ host: '127.0.0.1', port: 7001 }] });
    expect(() => parseConfig({ ...BASE, redis: { host: 'h', seeds: [{ host: 'h', port: 1 }] } })).toThrow(
      'redis.seeds are for redis.mode cluster only',
    );
    expect(() => parseConfig({ ...BASE, redis: { host: 'h', mode: 'sharded' as 'cluster' } })).toThrow(
      /redis.mode must be one of standalone, cluster/,
    );
    expect(() =>
      parseConfig({ ...BASE, redis: { host: 'h', mode: 'cluster', seeds: [{ host: 'h', port: 0 }] } }),
    ).toThrow(/redis.seeds\[0\].port/);
  });

  it('travel through the Lambda environment and back', () => {
    const config = parseConfig({
      ...BASE,
      platformCredential: 'pk',
      redis: {
        mode: 'cluster',
        host: 'clustercfg.example',
        tls: true,
        seeds: [
          { host: '10.0.0.1', port: 6379 },
          { host: '10.0.0.2', port: 6380 },
        ],
      },
    });
    const env = configToEnv(config);
    expect(env).toMatchObject({
      [ENV.redisMode]: 'cluster',
      [ENV.redisHost]: 'clustercfg.example',
      [ENV.redisTls]: 'true',
      [ENV.redisSeeds]: '10.0.0.1:6379,10.0.0.2:6380',
    });
    expect(configFromEnv(env).redis).toEqual(config.redis);
    expect(configToEnv(parseConfig({ ...BASE, redis: { host: 'h' } }))).toMatchObject({
      [ENV.redisMode]: 'standalone',
    });
    expect(configToEnv(parseConfig({ ...BASE, redis: { host: 'h' } }))).not.toHaveProperty(ENV.redisSeeds);
  });

  it('carry an ACL user name through the Lambda environment, its password only as a secret ARN', () => {
    const config = parseConfig({
      ...BASE,
      redis: {
        mode: 'cluster',
        host: 'clustercfg.memorydb.example',
        tls: true,
        username: 'access-management',
        authSecretArn: 'arn:aws:secretsmanager:us-east-1:111122223333:secret:cache-user',
      },
    });
    const env = configToEnv(config);
    expect(env).toMatchObject({
      [ENV.redisUsername]: 'access-management',
      [ENV.redisAuthSecretArn]: 'arn:aws:secretsmanager:us-east-1:111122223333:secret:cache-user',
    });
    expect(configFromEnv(env).redis).toEqual(config.redis);
    expect(configToEnv(parseConfig({ ...BASE, redis: { host: 'h' } }))).not.toHaveProperty(ENV.redisUsername);
    expect(() => parseConfig({ ...BASE, redis: { host: 'h', username: '' } })).toThrow(/redis.username/);
  });

  it('name the variable of a malformed seed list', () => {
    const env = { [ENV.serviceId]: 's1', [ENV.redisHost]: 'h', [ENV.redisMode]: 'cluster' };
    expect(() => configFromEnv({ ...env, [ENV.redisSeeds]: '10.0.0.1' })).toThrow(
      new ConfigError(ENV.redisSeeds, 'must be host:port (got "10.0.0.1")'),
    );
    expect(() => configFromEnv({ ...env, [ENV.redisMode]: 'sharded' })).toThrow(/redis.mode/);
  });

  it('read host:port, IPv6 in brackets too', () => {
    expect(hostPort('s', '127.0.0.1:7000')).toEqual({ host: '127.0.0.1', port: 7000 });
    expect(hostPort('s', '[::1]:7000')).toEqual({ host: '::1', port: 7000 });
    expect(() => hostPort('s', 'node:99999')).toThrow(/s must be an integer from 1 to 65535/);
  });
});
