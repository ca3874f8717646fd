/**
 * A service's proxy configurations, as porta keeps them (app/models/proxy_config.rb): per environment
 * (`sandbox`, which the API also calls `staging`, and `production`) a list of numbered versions, each the
 * gateway's whole configuration as JSON. Deploying writes a new sandbox version when the rules changed
 * (app/services/apicast_v2_deployment_service.rb); promoting copies a version, number and content, to
 * another environment (`ProxyConfig::EnvironmentClone`), so a version already there cannot be promoted
 * again. The content carries the proxy rules as porta serializes them (app/lib/apicast/proxy_rules_source.rb:
 * every column of the rule, `metric_system_name` from its metric, and `parameters` and
 * `querystring_parameters` from its pattern).
 */
import type { MappingRule } from '../../core/settings/config';

/** porta's `ProxyConfig::ENVIRONMENTS`. */
export const STORED_ENVIRONMENTS = ['sandbox', 'production'] as const;
export type StoredEnvironment = (typeof STORED_ENVIRONMENTS)[number];

export interface ProxyConfigVersion {
  readonly id: number;
  readonly version: number;
  readonly environment: StoredEnvironment;
  /** The gateway configuration, as JSON text (porta's `content` column). */
  readonly content: string;
}

/** An environment as a URL names it: porta's `VALID_ENVIRONMENTS` takes `staging` for `sandbox`. */
export function storedEnvironment(name: string): StoredEnvironment | undefined {
  if (name === 'staging') return 'sandbox';
  return (STORED_ENVIRONMENTS as readonly string[]).includes(name) ? (name as StoredEnvironment) : undefined;
}

let nextConfigId = 1;

function parametersOf(pattern: string): { parameters: string[]; querystring_parameters: object } {
  const [path = '', query] = pattern.split('?', 2);
  const parameters = [...path.matchAll(/\{([^}]+)\}/g)].map((match) => match[1] as string);
  const pairs = (query ?? '').split('&').filter((pair) => pair !== '');
  const querystring = Object.fromEntries(
    pairs.map((pair) => {
      const at = pair.indexOf('=');
      return at < 0 ? [pair, null] : [pair.slice(0, at), pair.slice(at + 1)];
    }),
  );
  return { parameters, querystring_parameters: querystring };
}

/** The proxy rules of a configuration's content, each as porta's `ProxyRule#as_json` writes it. */
function proxyRulesOf(serviceId: string, rules: readonly MappingRule[]): object[] {
  return rules.map((rule, i) => ({
    id: i + 1,
    proxy_id: Number(serviceId) || serviceId,
    http_method: rule.method,
    pattern: rule.pattern,
    metric_id: rule.metric,
    metric_system_name: rule.metric,
    delta: rule.delta,
    tenant_id: null,
    redirect_url: null,
    position: i + 1,
    last: rule.last === true,
    owner_id: Number(serviceId) || serviceId,
    owner_type: 'Proxy',
    ...parametersOf(rule.pattern),
  }));
}

function contentOf(serviceId: string, rules: readonly MappingRule[]): string {
  return JSON.stringify({
    id: Number(serviceId) || serviceId,
    backend_version: '1',
    proxy: {
      service_id: Number(serviceId) || serviceId,
      api_test_path: '/',
      proxy_rules: proxyRulesOf(serviceId, rules),
    },
  });
}

export type PromoteResult =
  | { readonly ok: true; readonly config: ProxyConfigVersion }
  | { readonly ok: false; readonly field: 'environment' | 'version'; readonly message: string };

export class ProxyConfigs {
  private readonly versions = new Map<StoredEnvironment, ProxyConfigVersion[]>(
    STORED_ENVIRONMENTS.map((environment) => [environment, []]),
  );

  constructor(private readonly serviceId: string) {}

  /** Writes a new sandbox version of these rules, unless the latest one has them already. */
  deploy(rules: readonly MappingRule[]): ProxyConfigVersion {
    const content = contentOf(this.serviceId, rules);
    const latest = this.latest('sandbox');
    if (latest !== undefined && latest.content === content) return latest;
    return this.add('sandbox', (latest?.version ?? 0) + 1, content);
  }

  latest(environment: StoredEnvironment): ProxyConfigVersion | undefined {
    return this.versions.get(environment)?.at(-1);
  }

  find(environment: StoredEnvironment, version: number): ProxyConfigVersion | undefined {
    return this.versions.get(environment)?.find((config) => config.version === version);
  }

  /** Copies the version to `to`, as porta's promote does; a failure is its validation error. */
  promote(config: ProxyConfigVersion, to: string): PromoteResult {
    if (!(STORED_ENVIRONMENTS as readonly string[]).includes(to)) {
      return { ok: false, field: 'environment', message: 'is not included in the list' };
    }
    const environment = to as StoredEnvironment;
    if (this.find(environment, config.version) !== undefined) {
      return { ok: false, field: 'version', message: 'has already been taken' };
    }
    return { ok: true, config: this.add(environment, config.version, config.content) };
  }

  private add(environment: StoredEnvironment, version: number, content: string): ProxyConfigVersion {
    const config = { id: nextConfigId++, version, environment, content };
    const list = this.versions.get(environment) as ProxyConfigVersion[];
    list.push(config);
    list.sort((a, b) => a.version - b.version);
    return config;
  }
}
