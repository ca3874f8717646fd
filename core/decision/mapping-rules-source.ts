/**
 * Where the authorizer's mapping rules come from (the setting `mappingRulesSource`): the rules given in
 * the configuration, compiled once, or the platform's proxy configuration (platform-mapping-rules.ts),
 * read and refreshed while the authorizer runs.
 */

import type { RedisConnection } from '../budget/redis-client';
import type { LogPort } from '../observability/observability';
import { type AccessConfig, ConfigError, type MappingRule } from '../settings/config';
import { compileMappingRules, type UsageMapper } from './mapping';

export interface MappingRulesPort {
  /**
   * The rules in effect at `now` (epoch ms); undefined when none could ever be read. Rules at hand come
   * back as they are, without a promise (the hot path decides without waiting a turn for them).
   */
  mapperAt(now: number): UsageMapper | undefined | Promise<UsageMapper | undefined>;
}

/** Rules given in the configuration: compiled once, never changing. */
export function givenMappingRules(rules: readonly MappingRule[]): MappingRulesPort {
  const mapper = compileMappingRules(rules);
  return { mapperAt: () => mapper };
}

/** What reading the platform's rules needs: the admin API and its token. */
export interface PlatformRulesAccess {
  readonly adminApiUrl: string;
  readonly accessToken: string;
}

/** The admin API and token of a configuration with mappingRulesSource platform; a ConfigError names what is missing. */
export function platformRulesAccessOf(config: AccessConfig): PlatformRulesAccess {
  if (config.adminApiUrl === undefined) {
    throw new ConfigError('adminApiUrl', 'is required with mappingRulesSource platform');
  }
  if (config.adminAccessToken === undefined) {
    throw new ConfigError(
      'adminTokenSecretArn',
      'is required with mappingRulesSource platform: the admin access token was not read',
    );
  }
  return { adminApiUrl: config.adminApiUrl, accessToken: config.adminAccessToken };
}

/**
 * The platform's rules (platform-mapping-rules.ts). The configuration is checked now; the module that
 * reads the rules is loaded on the first call, so the Lambda bundle keeps it out of what every cold start
 * reads: most deployments give their rules.
 */
export function platformMappingRules(
  config: AccessConfig,
  deps: { readonly redis?: RedisConnection; readonly logger: LogPort },
): MappingRulesPort {
  platformRulesAccessOf(config);
  let port: Promise<MappingRulesPort> | undefined;
  const loaded = () =>
    import('./platform-mapping-rules').then(({ platformMappingRulesOf }) =>
      platformMappingRulesOf(config, deps),
    );
  return {
    mapperAt: async (now) => {
      port ??= loaded().catch((error: unknown) => {
        port = undefined;
        throw error;
      });
      return (await port).mapperAt(now);
    },
  };
}
