import '../core/aws-matchers';
import { GetSecretValueCommand, SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { mockClient } from 'aws-sdk-client-mock';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ENV, LOCAL_SECRET_ENV } from '../../../core/settings/config';
import { loadRuntime, oncePerContainer } from '../../../lambdas/runtime';

const secrets = mockClient(SecretsManagerClient);
const PLATFORM_SECRET = 'arn:aws:secretsmanager:us-east-1:123456789012:secret:platform';
const REDIS_SECRET = 'arn:aws:secretsmanager:us-east-1:123456789012:secret:redis';

beforeEach(() => {
  secrets.reset();
  secrets
    .on(GetSecretValueCommand, { SecretId: PLATFORM_SECRET })
    .resolves({ SecretString: 'pk-from-secret' });
  secrets.on(GetSecretValueCommand, { SecretId: REDIS_SECRET }).resolves({ SecretString: 'redis-token' });
});

const started: { redis?: { disconnect(): void }; platform: { close(): void } }[] = [];
afterEach(() => {
  for (const runtime of started.splice(0)) {
    runtime.redis?.disconnect();
    runtime.platform.close();
  }
});

describe('loadRuntime', () => {
  it('reads the provider key and the Redis AUTH token from Secrets Manager once each', async () => {
    const runtime = await loadRuntime('test', {
      [ENV.serviceId]: 's1',
      [ENV.platformCredentialSecretArn]: PLATFORM_SECRET,
      [ENV.redisHost]: '127.0.0.1',
      [ENV.redisAuthSecretArn]: REDIS_SECRET,
      [ENV.redisTls]: 'true',
      [ENV.topicArn]: 'arn:aws:sns:us-east-1:123456789012:t',
    });
    started.push(runtime);
    expect(runtime.config.platformCredential).toBe('pk-from-secret');
    expect(runtime.redis?.options).toMatchObject({
      password: 'redis-token',
      lazyConnect: true,
      tls: { servername: '127.0.0.1' },
    });
    expect(runtime.redis?.status).toBe('wait');
    expect(secrets).toHaveReceivedCommandTimes(GetSecretValueCommand, 2);
  });

  it('reads the admin token for the authorizer when its mapping rules come from the platform', async () => {
    const ADMIN_SECRET = 'arn:aws:secretsmanager:us-east-1:123456789012:secret:admin-AbCdEf';
    secrets.on(GetSecretValueCommand, { SecretId: ADMIN_SECRET }).resolves({ SecretString: 'admin-token' });
    const authorizer = await loadRuntime('test', {
      [ENV.serviceId]: 's1',
      [ENV.platformCredentialSecretArn]: PLATFORM_SECRET,
      [ENV.adminApiUrl]: 'https://acme-admin.3scale.net',
      [ENV.adminTokenSecretArn]: ADMIN_SECRET,
      [ENV.mappingRulesSource]: 'platform',
    });
    started.push(authorizer);
    expect(authorizer.config.adminAccessToken).toBe('admin-token');
    expect(secrets).toHaveReceivedCommandWith(GetSecretValueCommand, { SecretId: ADMIN_SECRET });
  });

  it('reads the admin token for the reporter only when the rules are given: the authorizer does not', async () => {
    const ADMIN_SECRET = 'arn:aws:secretsmanager:us-east-1:123456789012:secret:admin-AbCdEf';
    secrets.on(GetSecretValueCommand, { SecretId: ADMIN_SECRET }).resolves({ SecretString: 'admin-token' });
    const env = {
      [ENV.serviceId]: 's1',
      [ENV.platformCredentialSecretArn]: PLATFORM_SECRET,
      [ENV.adminApiUrl]: 'https://acme-admin.3scale.net',
      [ENV.adminTokenSecretArn]: ADMIN_SECRET,
    };
    const reporter = await loadRuntime('test', env, 'reporter');
    started.push(reporter);
    expect(reporter.config.adminAccessToken).toBe('admin-token');
    const authorizer = await loadRuntime('test', env);
    started.push(authorizer);
    expect(authorizer.config.adminAccessToken).toBeUndefined();
    expect(secrets).toHaveReceivedCommandWith(GetSecretValueCommand, { SecretId: ADMIN_SECRET });
    expect(secrets).toHaveReceivedCommandTimes(GetSecretValueCommand, 3);
  });

  it('takes the provider key from the environment for local runs, without Secrets Manager', async () => {
    const runtime = await loadRuntime('test', {
      [ENV.serviceId]: 's1',
      [LOCAL_SECRET_ENV.providerKey]: 'pk-local',
    });
    started.push(runtime);
    expect(runtime.config.platformCredential).toBe('pk-local');
    expect(runtime.redis).toBeUndefined();
    expect(secrets).toHaveReceivedCommandTimes(GetSecretValueCommand, 0);
  });

  it('takes a service token when the auth kind says so', async () => {
    const runtime = await loadRuntime('test', {
      [ENV.serviceId]: 's1',
      [ENV.platformAuthKind]: 'service_token',
      [LOCAL_SECRET_ENV.providerKey]: 'pk-local',
      [LOCAL_SECRET_ENV.serviceToken]: 'st-local',
    });
    started.push(runtime);
    expect(runtime.config.platformCredential).toBe('st-local');
  });

  it('stops with a message naming the setting when no credential is given', async () => {
    await expect(loadRuntime('test', { [ENV.serviceId]: 's1' })).rejects.toThrow(/platformCredential/);
    await expect(loadRuntime('test', {})).rejects.toThrow(/serviceId/);
  });

  it('refuses a secret without a string value', async () => {
    secrets.on(GetSecretValueCommand, { SecretId: PLATFORM_SECRET }).resolves({});
    await expect(
      loadRuntime('test', { [ENV.serviceId]: 's1', [ENV.platformCredentialSecretArn]: PLATFORM_SECRET }),
    ).rejects.toThrow(ENV.platformCredentialSecretArn);
  });
});

describe('oncePerContainer', () => {
  it('builds once, and builds again after a failed build', async () => {
    let builds = 0;
    const get = oncePerContainer(async () => {
      builds += 1;
      if (builds === 1) throw new Error('secret unreadable');
      return builds;
    });
    await expect(get()).rejects.toThrow('secret unreadable');
    expect(await get()).toBe(2);
    expect(await get()).toBe(2);
    expect(builds).toBe(2);
  });
});
