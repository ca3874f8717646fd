import { describe, expect, it } from 'vitest';
import {
  type AccessConfig,
  ConfigError,
  configFromEnv,
  configToEnv,
  ENV,
  parseConfig,
} from '../../../../core/settings/config';
import { defaultOf, SETTING_NAMES, SETTINGS, settingNamesIn } from '../../../../core/settings/settings';
import { parseStackFile } from '../../../../local/stack-file';

const EVERY_SETTING_GIVEN: AccessConfig = {
  serviceId: 'svc-1',
  platformUrl: 'https://platform.example.com',
  platformAuthKind: 'service_token',
  platformCredentialSecretArn: 'arn:aws:secretsmanager:eu-west-1:123456789012:secret:platform',
  credentialMode: 'app_id',
  credentialHeader: 'x-api-key',
  appIdHeader: 'x-app-id',
  appKeyHeader: 'x-app-key',
  credentialLocation: 'query',
  oidcIssuer: 'https://issuer.example.com',
  oidcJwksUrl: 'https://keys.example.com/jwks.json',
  oidcAudience: 'api://words',
  oidcAlgorithms: ['RS256', 'ES256'],
  oidcClientIdClaim: 'azp',
  tokenTtlSeconds: 900,
  tokenSigningKeyId: 'alias/tokens',
  tokenGuessWindowSeconds: 600,
  tokenGuessesPerAddress: 5,
  tokenGuessesPerClient: 50,
  mappingRules: [
    { method: 'GET', pattern: '/v1/words/{word}.json', metric: 'get_word', delta: 2, last: true },
  ],
  mappingRulesSource: 'given',
  failureMode: 'resilient',
  strictTrustSeconds: 45,
  limitMode: 'soft',
  reportWindowSeconds: 30,
  negativeCacheTtlSeconds: 120,
  platformTimeoutMs: 800,
  refusalMemoryMs: 250,
  metricsFlushSeconds: 30,
  unseenCredentialCallsPerSecond: 40,
  reportTimeoutMs: 9000,
  topicArn: 'arn:aws:sns:eu-west-1:123456789012:usage',
  throttles: { Pro: { rate: 10, burst: 20, metrics: { search: { rate: 0.5, burst: 2 } } } },
  alertLevels: [50, 90, 100],
  alertEmails: ['ops@example.com', 'sales@example.com'],
  alertsTopicArn: 'arn:aws:sns:eu-west-1:123456789012:alerts',
  redis: {
    mode: 'cluster',
    host: 'redis.internal',
    port: 6380,
    seeds: [{ host: 'redis-2.internal', port: 6380 }],
    tls: true,
    authSecretArn: 'arn:aws:secretsmanager:x',
  },
};

describe('the settings table', () => {
  it('gives each setting its own environment variable', () => {
    const variables = SETTING_NAMES.map((name) => SETTINGS[name].env);
    expect(new Set(variables).size).toBe(variables.length);
    expect(variables).not.toContain(ENV.redisHost);
  });

  it('carries every setting through the Lambda environment unchanged (the CDK writes, the handler reads)', () => {
    expect(configFromEnv(configToEnv(EVERY_SETTING_GIVEN))).toEqual(EVERY_SETTING_GIVEN);
  });

  it('fills every setting nobody gave with its default', () => {
    const config = parseConfig({ serviceId: 'svc-1' });
    expect(config).toMatchObject({
      platformUrl: defaultOf('platformUrl'),
      credentialMode: 'user_key',
      credentialHeader: 'apikey',
      reportWindowSeconds: 10,
      platformTimeoutMs: 1000,
      reportTimeoutMs: 5000,
      mappingRules: [],
    });
    expect(config).not.toHaveProperty('topicArn');
  });

  it('names the setting and its environment variable text when a value is bad', () => {
    expect(() => configFromEnv({ SERVICE_ID: 's', REPORT_WINDOW_SECONDS: 'ten' })).toThrow(
      /REPORT_WINDOW_SECONDS must be a number/,
    );
    expect(() => configFromEnv({ SERVICE_ID: 's', MAPPING_RULES: '[' })).toThrow(
      /MAPPING_RULES must be valid JSON/,
    );
    expect(() => parseConfig({ serviceId: 's', reportWindowSeconds: 901 })).toThrow(
      new ConfigError('reportWindowSeconds', 'must be an integer from 0 to 900 (got 901)'),
    );
    expect(() => configFromEnv({})).toThrow(/serviceId is required/);
  });

  it('carries the platform source of mapping rules through the Lambda environment, defaults left out', () => {
    const platform = {
      serviceId: 'svc-1',
      mappingRulesSource: 'platform',
      adminApiUrl: 'https://acme-admin.example.com',
      adminTokenSecretArn: 'arn:aws:secretsmanager:eu-west-1:123456789012:secret:admin',
    } as const;
    const config = parseConfig(platform);
    expect(config).not.toHaveProperty('mappingRulesEnvironment');
    expect(configFromEnv(configToEnv(config))).toEqual(config);
    const staging = parseConfig({
      ...platform,
      mappingRulesEnvironment: 'staging',
      mappingRulesRefreshSeconds: 30,
    });
    expect(configFromEnv(configToEnv(staging))).toEqual(staging);
  });

  it('refuses, naming it, a setting the mapping rules source makes useless or lacks', () => {
    const platform = {
      serviceId: 's',
      mappingRulesSource: 'platform',
      adminApiUrl: 'https://acme-admin.example.com',
      adminAccessToken: 'token',
    } as const;
    expect(() =>
      parseConfig({ ...platform, mappingRules: [{ method: 'GET', pattern: '/', metric: 'hits', delta: 1 }] }),
    ).toThrow(/mappingRules cannot be given with mappingRulesSource platform/);
    expect(() => parseConfig({ ...platform, adminAccessToken: undefined })).toThrow(
      /adminTokenSecretArn is required with mappingRulesSource platform/,
    );
    expect(() => parseConfig({ ...platform, adminApiUrl: undefined })).toThrow(
      /adminApiUrl is required with mappingRulesSource platform/,
    );
    expect(() => parseConfig({ serviceId: 's', mappingRulesEnvironment: 'staging' })).toThrow(
      new ConfigError('mappingRulesEnvironment', 'applies to mappingRulesSource platform only'),
    );
    expect(() => parseConfig({ serviceId: 's', mappingRulesRefreshSeconds: 60 })).toThrow(
      new ConfigError('mappingRulesRefreshSeconds', 'applies to mappingRulesSource platform only'),
    );
    expect(() => parseConfig({ ...platform, mappingRulesEnvironment: 'sandbox' as never })).toThrow(
      /mappingRulesEnvironment must be one of staging, production/,
    );
    expect(() => parseConfig({ ...platform, mappingRulesRefreshSeconds: 0 })).toThrow(
      /mappingRulesRefreshSeconds must be an integer from 1 to 86400/,
    );
    expect(parseConfig(platform).mappingRulesSource).toBe('platform');
  });

  it('reads alertEmails as a comma list, none by default, and names the address that is not one', () => {
    expect(parseConfig({ serviceId: 's' }).alertEmails).toEqual([]);
    expect(configToEnv(parseConfig({ serviceId: 's' }))).not.toHaveProperty(ENV.alertEmails);
    expect(
      configFromEnv({ SERVICE_ID: 's', ALERT_EMAILS: 'a@example.com, b@example.com,a@example.com' })
        .alertEmails,
    ).toEqual(['a@example.com', 'b@example.com']);
    expect(() =>
      parseConfig({ serviceId: 's', alertEmails: ['ops@example.com', 'ops.example.com'] }),
    ).toThrow(
      new ConfigError(
        'alertEmails[1]',
        'must be an email address such as ops@example.com (got "ops.example.com")',
      ),
    );
    expect(() => parseConfig({ serviceId: 's', alertEmails: 'ops@example.com' as never })).toThrow(
      /alertEmails must be a list of email addresses/,
    );
    expect(settingNamesIn('cdk')).toContain('alertEmails');
    expect(settingNamesIn('stackFile')).not.toContain('alertEmails');
  });

  it('lets the stack file set every setting the table offers it, and no other', () => {
    const gateway = (extra: Record<string, unknown>) => ({
      gateway: {
        serviceId: 'svc-1',
        platformUrl: 'http://127.0.0.1:1',
        providerKey: 'pk',
        routes: ['GET /v1/words/{word}.json'],
        ...extra,
      },
    });
    const given = { platformTimeoutMs: 700, credentialHeader: 'x-key', limitMode: 'soft' };
    expect(settingNamesIn('stackFile')).toEqual(expect.arrayContaining(Object.keys(given)));
    expect(parseStackFile(gateway(given)).gateways[0]?.configInput).toMatchObject(given);
    expect(settingNamesIn('stackFile')).not.toContain('topicArn');
    expect(() => parseStackFile(gateway({ topicArn: 'arn:x' }))).toThrow(
      /gateway.topicArn is not a known setting/,
    );
  });
});
