/**
 * Where the authorizer's mapping rules come from, as a typed choice (the settings `mappingRules`,
 * `mappingRulesSource`, `mappingRulesEnvironment` and `mappingRulesRefreshSeconds` of the table).
 */
import { Duration } from 'aws-cdk-lib';
import {
  type AccessConfigInput,
  ConfigError,
  DEFAULT_PROXY_ENVIRONMENT,
  DEFAULT_RULES_REFRESH_SECONDS,
  type MappingRule,
  type ProxyEnvironment,
} from '../core/settings/config';

export interface PlatformMappingRulesOptions {
  /**
   * The proxy configuration read: `staging` or `production`, as APIcast's THREESCALE_DEPLOYMENT_ENV.
   * @default 'production'
   */
  readonly environment?: ProxyEnvironment;
  /**
   * How old the rules may get before one authorizer instance reads them again: a promotion takes effect
   * within it (and a second), for one platform read per period per service, whatever the instances.
   * @default Duration.minutes(5)
   */
  readonly refresh?: Duration;
}

/** The settings a source stands for. */
export type MappingRulesSettings = Pick<
  AccessConfigInput,
  'mappingRules' | 'mappingRulesSource' | 'mappingRulesEnvironment' | 'mappingRulesRefreshSeconds'
>;

export abstract class MappingRulesSource {
  /** The rules given here, fixed at deploy time. */
  static given(rules: readonly MappingRule[]): MappingRulesSource {
    return new FixedSource({ mappingRulesSource: 'given', mappingRules: rules });
  }

  /**
   * The service's proxy configuration on the platform, read with the admin access token
   * (`adminApiUrl` and `adminTokenSecretArn`), kept in Redis and refreshed: a promotion on the platform
   * takes effect without a deploy (docs/deploy.md).
   */
  static platform(options: PlatformMappingRulesOptions = {}): MappingRulesSource {
    const refresh = options.refresh ?? Duration.seconds(DEFAULT_RULES_REFRESH_SECONDS);
    let seconds: number;
    try {
      seconds = refresh.toSeconds();
    } catch {
      throw new ConfigError(
        'mappingRulesSource.refresh',
        `must be a whole number of seconds (got ${refresh.toHumanString()})`,
      );
    }
    return new FixedSource({
      mappingRulesSource: 'platform',
      mappingRulesEnvironment: options.environment ?? DEFAULT_PROXY_ENVIRONMENT,
      mappingRulesRefreshSeconds: seconds,
    });
  }

  /** The settings this source stands for. */
  abstract readonly settings: MappingRulesSettings;
}

class FixedSource extends MappingRulesSource {
  constructor(readonly settings: MappingRulesSettings) {
    super();
  }
}
