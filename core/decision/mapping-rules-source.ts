/**
 * Where the authorizer's mapping rules come from (the setting `mappingRulesSource`): the rules given in
 * the configuration, compiled once, or the platform's proxy configuration (platform-mapping-rules.ts),
 * read and refreshed while the authorizer runs.
 */

import type { MappingRule } from '../settings/config';
import { compileMappingRules, type UsageMapper } from './mapping';

export interface MappingRulesPort {
  /** The rules in effect at `now` (epoch ms); undefined when none could ever be read. */
  mapperAt(now: number): Promise<UsageMapper | undefined>;
}

/** Rules given in the configuration: compiled once, never changing. */
export function givenMappingRules(rules: readonly MappingRule[]): MappingRulesPort {
  const mapper = compileMappingRules(rules);
  return { mapperAt: async () => mapper };
}
