/**
 * The service's mapping rules as the platform's gateway reads them: the proxy configuration of one
 * environment, `GET /admin/api/services/{id}/proxy/configs/{environment}/latest.json?access_token=...`
 * (porta's `Admin::Api::Services::Proxy::ConfigsController#latest`; APIcast's
 * `configuration_loader/remote_v2.lua` reads the same). porta answers:
 * - 200 `{"proxy_config": {"id", "version", "environment", "content": {..., "proxy": {..., "proxy_rules":
 *   [...]}}}}`, each rule a proxy rule row as JSON (`Apicast::ProxyRulesSource`): `http_method`, `pattern`,
 *   `metric_system_name`, `delta`, `last`, with `metric_id`, `position`, `owner_type`, ... beside them;
 * - 404 when the environment has no configuration yet (never deployed or promoted there);
 * - 400 `{"error": "invalid environment"}` for an environment it does not know (it takes `staging` as
 *   its `sandbox`), 403 for a token that may not read the service.
 *
 * A rule is read as APIcast's `mapping_rule.from_proxy_rule` reads it (`metric_system_name`, a missing
 * `delta` adding 0, `last` stopping the rules after it), then checked as given rules are
 * (validateMappingRules). A proxy configuration's content is at most 2 MB on porta (`MAX_CONTENT_LENGTH`);
 * the answer is read up to MAX_PROXY_CONFIG_BYTES and parsed once (JSON.parse, linear).
 */
import type http from 'node:http';
import {
  ConfigError,
  type MappingRule,
  type ProxyEnvironment,
  validateMappingRules,
} from '../settings/config';
import { exchange, keepAliveAgent } from './http';
import { REDACTED } from './redact';

/** porta's 2 MB content bound, with room for the envelope and JSON escapes. */
export const MAX_PROXY_CONFIG_BYTES = 3 * 1024 * 1024;
/** Rules beyond this are refused: every call is matched against each one. */
export const MAX_PLATFORM_RULES = 2_000;
/** Deadline of one read of the proxy configuration. */
export const PROXY_CONFIG_TIMEOUT_MS = 2_000;

/** What a proxy configuration gives the gateway: its version and mapping rules. */
export interface ProxyRules {
  readonly version: number;
  readonly rules: readonly MappingRule[];
}

export type ProxyConfigRead =
  | ({ readonly ok: true } & ProxyRules)
  | {
      readonly ok: false;
      /**
       * `missing`: no configuration in the environment (404); `refused`: the token or the environment
       * (400, 401, 403); `invalid`: an answer that is not a proxy configuration or whose rules fail their
       * checks; `unavailable`: no answer, or a 5xx.
       */
      readonly kind: 'missing' | 'refused' | 'invalid' | 'unavailable';
      readonly message: string;
      readonly status?: number;
    };

const invalid = (message: string): ProxyConfigRead => ({ ok: false, kind: 'invalid', message });

function objectAt(value: unknown): Record<string, unknown> | undefined {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : undefined;
}

/** One porta proxy rule as a mapping rule, fields as APIcast reads them; the checks come after. */
function ruleOf(value: unknown, at: string): Record<string, unknown> {
  const rule = objectAt(value);
  if (rule === undefined) throw new ConfigError(at, 'must be an object');
  if (typeof rule.metric_system_name !== 'string') {
    // APIcast refuses such a rule too ('missing metric name of rule'); a metric_id alone names nothing here.
    throw new ConfigError(`${at}.metric_system_name`, 'is required (the metric the rule counts on)');
  }
  return {
    method: rule.http_method,
    pattern: rule.pattern,
    metric: rule.metric_system_name,
    delta: rule.delta ?? 0,
    ...(rule.last === true && { last: true }),
  };
}

/** The version and mapping rules of a `latest.json` answer's body. */
export function parseProxyConfig(body: string): ProxyConfigRead {
  if (body.length > MAX_PROXY_CONFIG_BYTES) return invalid('the proxy configuration is too large');
  let document: unknown;
  try {
    document = JSON.parse(body);
  } catch {
    return invalid('the answer is not JSON');
  }
  const proxyConfig = objectAt(objectAt(document)?.proxy_config);
  if (proxyConfig === undefined) return invalid('the answer has no proxy_config');
  const version = proxyConfig.version;
  if (typeof version !== 'number' || !Number.isSafeInteger(version)) {
    return invalid('proxy_config.version is not an integer');
  }
  const rules = objectAt(objectAt(proxyConfig.content)?.proxy)?.proxy_rules;
  if (!Array.isArray(rules)) return invalid('proxy_config.content.proxy.proxy_rules is not a list');
  if (rules.length > MAX_PLATFORM_RULES) {
    return invalid(
      `the proxy configuration has ${rules.length} mapping rules, more than ${MAX_PLATFORM_RULES}`,
    );
  }
  const at = 'proxy_config.content.proxy.proxy_rules';
  try {
    const mapped = rules.map((rule, i) => ruleOf(rule, `${at}[${i}]`));
    return { ok: true, version, rules: validateMappingRules(mapped, at) };
  } catch (error) {
    if (error instanceof ConfigError) return invalid(`${error.setting} ${error.problem}`);
    throw error;
  }
}

export interface ProxyConfigSource {
  /** The admin portal's origin, e.g. `https://acme-admin.3scale.net`. */
  readonly adminApiUrl: string;
  readonly accessToken: string;
  readonly serviceId: string;
  readonly environment: ProxyEnvironment;
  /** @default PROXY_CONFIG_TIMEOUT_MS */
  readonly timeoutMs?: number;
  /** @default a keep-alive agent for the admin URL's protocol */
  readonly agent?: http.Agent;
}

/** Reads the latest proxy configuration of one service and environment; never throws, never logs the token. */
export class ProxyConfigReader {
  private readonly url: URL;
  private readonly agent: http.Agent;

  constructor(private readonly source: ProxyConfigSource) {
    const path = `/admin/api/services/${encodeURIComponent(source.serviceId)}/proxy/configs/${source.environment}/latest.json`;
    this.url = new URL(path, source.adminApiUrl);
    this.agent = source.agent ?? keepAliveAgent(this.url.protocol);
  }

  async read(): Promise<ProxyConfigRead> {
    const url = new URL(this.url);
    url.searchParams.set('access_token', this.source.accessToken);
    const result = await exchange(
      { method: 'GET', url, headers: { accept: 'application/json' } },
      this.agent,
      this.source.timeoutMs ?? PROXY_CONFIG_TIMEOUT_MS,
      MAX_PROXY_CONFIG_BYTES,
    );
    if (!result.ok) {
      const message = result.failure.message.split(this.source.accessToken).join(REDACTED);
      return { ok: false, kind: 'unavailable', message };
    }
    const { status, body } = result.answer;
    if (status === 200) return parseProxyConfig(body);
    const failure = { ok: false, status, message: `the platform answered HTTP ${status}` } as const;
    if (status === 404) return { ...failure, kind: 'missing' };
    if (status === 400 || status === 401 || status === 403) return { ...failure, kind: 'refused' };
    return { ...failure, kind: status >= 500 ? 'unavailable' : 'invalid' };
  }
}
