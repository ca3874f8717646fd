/**
 * The `platform` section of the local stack file: services, their metric tree, plans with limits, and
 * applications. Validated once at start-up; a bad value throws a ConfigError that names the setting.
 */

import { PERIODS } from '../../core/budget/periods';
import { checkedValue } from '../../core/credentials/values';
import type { Period } from '../../core/platform/types';
import {
  ConfigError,
  type CredentialMode,
  httpUrl,
  integer,
  knownFields,
  type MappingRule,
  nonEmpty,
  oneOf,
  optionalNonEmpty,
  validateMappingRules,
} from '../../core/settings/config';
import { type AdminConfig, adminConfig, flag } from './admin-config';

/** `pending`: created on a plan that requires approval, refused until accepted (porta's Contract states). */
export type ApplicationState = 'active' | 'suspended' | 'pending';
export type ServiceState = 'active' | 'suspended';

export interface MetricConfig {
  readonly name: string;
  readonly children: readonly MetricConfig[];
}

export interface LimitConfig {
  readonly metric: string;
  readonly period: Period;
  readonly value: number;
}

export interface PlanConfig {
  readonly name: string;
  readonly limits: readonly LimitConfig[];
  /** porta's plan `state`: `published` (true, the default) or `hidden`. */
  readonly published?: boolean;
  /** Applications on this plan start `pending` until accepted (`accept.xml`). Default false. */
  readonly approvalRequired?: boolean;
  /** The service's default application plan: sign-up (`signup.xml`) subscribes to it. At most one per service. */
  readonly default?: boolean;
}

export interface ApplicationConfig {
  readonly id: string;
  /** user_key services: the application's key. */
  readonly userKey?: string;
  /** app_id services: the keys one of which must come with the app id; none means no key is asked. */
  readonly appKeys: readonly string[];
  readonly plan: string;
  readonly state: ApplicationState;
  /** Referrer patterns (`*` a wildcard); none means any referrer. */
  readonly referrerFilters: readonly string[];
}

/**
 * How a service's applications authenticate: a user key, an app id (with keys when it has some), or
 * OpenID Connect (apisonator's backend_version "oauth"): an app id whose key, the client secret, is
 * checked only when one is given.
 */
export type PlatformAuthentication = 'user_key' | 'app_id' | 'oidc';

/** The gateway credential mode that serves each platform authentication. */
export const CREDENTIAL_MODE_OF: Readonly<Record<PlatformAuthentication, CredentialMode>> = {
  user_key: 'user_key',
  app_id: 'app_id',
  oidc: 'oauth',
};

export interface ServiceConfig {
  readonly id: string;
  readonly providerKey?: string;
  readonly serviceToken?: string;
  readonly authentication: PlatformAuthentication;
  readonly state: ServiceState;
  /** Roots of the metric tree; `hits` is one of them. */
  readonly metrics: readonly MetricConfig[];
  readonly plans: readonly PlanConfig[];
  readonly applications: readonly ApplicationConfig[];
  /**
   * The mapping rules of the service's proxy configuration (proxy-configs.ts): `production`'s are
   * deployed to staging and promoted (version 1 in both); `staging`'s, when they differ, are deployed after
   * (staging version 2, waiting for a promotion). None: no configuration, the endpoints answer 404.
   */
  readonly proxyConfig?: ProxyConfigRules;
}

export interface ProxyConfigRules {
  readonly production: readonly MappingRule[];
  readonly staging?: readonly MappingRule[];
}

export interface PlatformConfig {
  readonly services: readonly ServiceConfig[];
  /** URLs the platform POSTs its webhooks to (3scale's webhook events, the XML in a form field `xml`). */
  readonly webhooks?: readonly string[];
  /** The Account Management API's provider settings, access tokens and webhook switch (admin-config.ts). */
  readonly admin?: AdminConfig;
}

export const TOP_METRIC = 'hits';
export const MAX_LIMIT_VALUE = Number.MAX_SAFE_INTEGER;
const STATES = ['active', 'suspended'] as const;
const APPLICATION_STATES = ['active', 'suspended', 'pending'] as const;
/** Metric names travel in `usage[name]` parameters and XML attributes, so brackets, quotes and spaces are out. */
const METRIC_NAME = /^[A-Za-z0-9_.-]+$/;

function list(setting: string, value: unknown): unknown[] {
  if (!Array.isArray(value)) throw new ConfigError(setting, 'must be an array');
  return value;
}

function unique(setting: string, seen: Set<string>, value: string, what: string): void {
  if (seen.has(value)) throw new ConfigError(setting, `repeats the ${what} ${JSON.stringify(value)}`);
  seen.add(value);
}

function metricTree(setting: string, value: unknown, names: Set<string>): MetricConfig[] {
  return list(setting, value).map((entry, i) => {
    const at = `${setting}[${i}]`;
    const fields = knownFields(at, entry, ['name', 'children']);
    const name = nonEmpty(`${at}.name`, fields.name);
    if (!METRIC_NAME.test(name)) {
      throw new ConfigError(
        `${at}.name`,
        `must use only letters, digits, _ . - (got ${JSON.stringify(name)})`,
      );
    }
    unique(`${at}.name`, names, name, 'metric');
    return { name, children: metricTree(`${at}.children`, fields.children ?? [], names) };
  });
}

function plan(setting: string, value: unknown, metrics: ReadonlySet<string>): PlanConfig {
  const fields = knownFields(setting, value, ['name', 'limits', 'published', 'approvalRequired', 'default']);
  const name = nonEmpty(`${setting}.name`, fields.name);
  const limited = new Set<string>();
  const limits = list(`${setting}.limits`, fields.limits ?? []).map((entry, i) => {
    const at = `${setting}.limits[${i}]`;
    const limit = knownFields(at, entry, ['metric', 'period', 'value']);
    const metric = nonEmpty(`${at}.metric`, limit.metric);
    if (!metrics.has(metric)) {
      throw new ConfigError(`${at}.metric`, `names an unknown metric ${JSON.stringify(metric)}`);
    }
    const period = oneOf(`${at}.period`, limit.period, PERIODS);
    unique(at, limited, `${metric} per ${period}`, 'limit');
    return { metric, period, value: integer(`${at}.value`, limit.value, 0, MAX_LIMIT_VALUE) };
  });
  return {
    name,
    limits,
    published: flag(`${setting}.published`, fields.published, true),
    approvalRequired: flag(`${setting}.approvalRequired`, fields.approvalRequired, false),
    default: flag(`${setting}.default`, fields.default, false),
  };
}

function keyList(setting: string, value: unknown, check: (setting: string, key: string) => void): string[] {
  const seen = new Set<string>();
  return list(setting, value).map((entry, i) => {
    const key = nonEmpty(`${setting}[${i}]`, entry);
    check(`${setting}[${i}]`, key);
    unique(`${setting}[${i}]`, seen, key, 'value');
    return key;
  });
}

/** A key no consumer could ever send: the gateway refuses it as malformed before it asks the platform. */
function consumerKey(setting: string, key: string): void {
  const checked = checkedValue(key);
  if (!checked.ok) throw new ConfigError(setting, `is a key the gateway always refuses (${checked.reason})`);
}

const anyValue = () => undefined;

function application(
  setting: string,
  value: unknown,
  authentication: PlatformAuthentication,
  plans: ReadonlySet<string>,
): ApplicationConfig {
  const fields = knownFields(setting, value, [
    'id',
    'userKey',
    'appKeys',
    'plan',
    'state',
    'referrerFilters',
  ]);
  const id = nonEmpty(`${setting}.id`, fields.id);
  const planName = nonEmpty(`${setting}.plan`, fields.plan);
  if (!plans.has(planName)) {
    throw new ConfigError(`${setting}.plan`, `names an unknown plan ${JSON.stringify(planName)}`);
  }
  const userKey = optionalNonEmpty(`${setting}.userKey`, fields.userKey);
  if (userKey !== undefined) consumerKey(`${setting}.userKey`, userKey);
  if (authentication === 'user_key' && userKey === undefined) {
    throw new ConfigError(`${setting}.userKey`, 'is required in a user_key service');
  }
  if (authentication !== 'user_key' && userKey !== undefined) {
    throw new ConfigError(
      `${setting}.userKey`,
      `does not apply to an ${authentication} service (use appKeys)`,
    );
  }
  const appKeys = keyList(`${setting}.appKeys`, fields.appKeys ?? [], consumerKey);
  if (authentication === 'user_key' && appKeys.length > 0) {
    throw new ConfigError(`${setting}.appKeys`, 'does not apply to a user_key service (use userKey)');
  }
  return {
    id,
    ...(userKey !== undefined && { userKey }),
    appKeys,
    plan: planName,
    state: oneOf(`${setting}.state`, fields.state ?? 'active', APPLICATION_STATES),
    referrerFilters: keyList(`${setting}.referrerFilters`, fields.referrerFilters ?? [], anyValue),
  };
}

/** Rules of the proxy configuration, each on a metric of the service. */
function proxyRules(setting: string, value: unknown, metrics: ReadonlySet<string>): MappingRule[] {
  const rules = validateMappingRules(value, setting);
  rules.forEach((rule, i) => {
    if (!metrics.has(rule.metric)) {
      throw new ConfigError(
        `${setting}[${i}].metric`,
        `names an unknown metric ${JSON.stringify(rule.metric)}`,
      );
    }
  });
  return rules;
}

function proxyConfig(setting: string, value: unknown, metrics: ReadonlySet<string>): ProxyConfigRules {
  const fields = knownFields(setting, value, ['production', 'staging']);
  const production = proxyRules(`${setting}.production`, fields.production, metrics);
  return {
    production,
    ...(fields.staging !== undefined && {
      staging: proxyRules(`${setting}.staging`, fields.staging, metrics),
    }),
  };
}

function service(setting: string, value: unknown): ServiceConfig {
  const fields = knownFields(setting, value, [
    'id',
    'providerKey',
    'serviceToken',
    'authentication',
    'state',
    'metrics',
    'plans',
    'applications',
    'proxyConfig',
  ]);
  const id = nonEmpty(`${setting}.id`, fields.id);
  const providerKey = optionalNonEmpty(`${setting}.providerKey`, fields.providerKey);
  const serviceToken = optionalNonEmpty(`${setting}.serviceToken`, fields.serviceToken);
  if (providerKey === undefined && serviceToken === undefined) {
    throw new ConfigError(setting, 'needs a providerKey or a serviceToken (or both)');
  }
  const authentication = oneOf<PlatformAuthentication>(`${setting}.authentication`, fields.authentication, [
    'user_key',
    'app_id',
    'oidc',
  ]);
  const metricNames = new Set<string>();
  const metrics = metricTree(`${setting}.metrics`, fields.metrics ?? [{ name: TOP_METRIC }], metricNames);
  if (!metrics.some((metric) => metric.name === TOP_METRIC)) {
    throw new ConfigError(`${setting}.metrics`, `must have the top metric "${TOP_METRIC}" at its root`);
  }
  const planNames = new Set<string>();
  const plans = list(`${setting}.plans`, fields.plans).map((entry, i) => {
    const parsed = plan(`${setting}.plans[${i}]`, entry, metricNames);
    unique(`${setting}.plans[${i}].name`, planNames, parsed.name, 'plan');
    return parsed;
  });
  if (plans.filter((candidate) => candidate.default).length > 1) {
    throw new ConfigError(`${setting}.plans`, 'may mark at most one plan as default');
  }
  const appIds = new Set<string>();
  const userKeys = new Set<string>();
  const applications = list(`${setting}.applications`, fields.applications ?? []).map((entry, i) => {
    const at = `${setting}.applications[${i}]`;
    const parsed = application(at, entry, authentication, planNames);
    unique(`${at}.id`, appIds, parsed.id, 'application id');
    if (parsed.userKey !== undefined) unique(`${at}.userKey`, userKeys, parsed.userKey, 'user key');
    return parsed;
  });
  return {
    id,
    ...(providerKey !== undefined && { providerKey }),
    ...(serviceToken !== undefined && { serviceToken }),
    authentication,
    state: oneOf(`${setting}.state`, fields.state ?? 'active', STATES),
    metrics,
    plans,
    applications,
    ...(fields.proxyConfig !== undefined && {
      proxyConfig: proxyConfig(`${setting}.proxyConfig`, fields.proxyConfig, metricNames),
    }),
  };
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new ConfigError('platform', `is not valid JSON: ${(error as Error).message}`);
  }
}

/**
 * Validates the platform section and applies defaults. Takes the whole local stack file or just its
 * `platform` section, parsed or as JSON text.
 */
export function loadPlatformConfig(input: unknown): PlatformConfig {
  const value = typeof input === 'string' ? parseJson(input) : input;
  const section =
    typeof value === 'object' && value !== null && 'platform' in value
      ? (value as { platform: unknown }).platform
      : value;
  const fields = knownFields('platform', section, ['services', 'webhooks', 'admin']);
  const ids = new Set<string>();
  const services = list('platform.services', fields.services).map((entry, i) => {
    const parsed = service(`platform.services[${i}]`, entry);
    unique(`platform.services[${i}].id`, ids, parsed.id, 'service id');
    return parsed;
  });
  if (services.length === 0) throw new ConfigError('platform.services', 'must list at least one service');
  const webhooks = list('platform.webhooks', fields.webhooks ?? []).map((entry, i) =>
    httpUrl(`platform.webhooks[${i}]`, entry).toString(),
  );
  const providerKeys = new Set(services.flatMap((entry) => entry.providerKey ?? []));
  const admin = adminConfig('platform.admin', fields.admin ?? {}, providerKeys);
  return { services, ...(webhooks.length > 0 && { webhooks }), admin };
}
