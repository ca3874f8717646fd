/**
 * apigw-access-management: the constructs that put a 3scale-compatible API-management platform in front of
 * API Gateway REST and HTTP APIs. `ApiAccessAuthorizer` is the construct; its parts can be composed on
 * their own.
 */

export { DEFAULT_UNPROTECTED_METHODS } from '../contract/gateway-responses';
export type { PlanThrottle, Throttle, Throttles } from '../core/budget/throttles';
export {
  type AlertLevel,
  ConfigError,
  type CredentialMode,
  DEFAULT_PLATFORM_URL,
  type FailureMode,
  type LimitMode,
  type MappingRule,
  type PlatformAuthKind,
  type ProxyEnvironment,
} from '../core/settings/config';
export { accessStackPropsFromContext } from './access-context';
export {
  ACCESS_LOG_FORMAT as REST_ACCESS_LOG_FORMAT,
  AccessManagementStack,
  type AccessManagementStackProps,
} from './access-stack';
export { ApiAccessAuthorizer, type ApiAccessAuthorizerProps } from './api-access-authorizer';
export { HTTP_ACCESS_LOG_FORMAT } from './demo-http-api';
export {
  type MappingRulesSettings,
  MappingRulesSource,
  type PlatformMappingRulesOptions,
} from './mapping-rules-source';
export { AccessAlarms, type AccessAlarmsProps } from './parts/alarms';
export { AuthorizerFunction, type AuthorizerFunctionProps } from './parts/authorizer-function';
export {
  AccessBindings,
  type AccessBindingsProps,
  type FunctionBindings,
  type RedisEndpoint,
} from './parts/bindings';
export {
  type AccessCache,
  CACHE_ENGINES,
  type CacheEngine,
  ExistingRedisCache,
  type ExistingRedisEndpoint,
  ReplicationGroupCache,
  type ReplicationGroupCacheProps,
  type ServerlessCacheLimits,
  type ServerlessCacheProps,
  ServerlessRedisCache,
  type ShardLayout,
} from './parts/cache';
export { AccessDocs, type AccessDocsProps } from './parts/docs';
export {
  HttpApiProtection,
  type HttpApiProtectionProps,
  type HttpProtectOptions,
} from './parts/http-api-protection';
export { AccessNetwork, type AccessNetworkProps } from './parts/network';
export type { AccessPart, AlarmSpec } from './parts/part';
export type { FunctionPartProps } from './parts/part-function';
export {
  type PortalMailSettings,
  PortalPart,
  type PortalPartProps,
  type PortalSettings,
} from './parts/portal';
export type { ApiKeyRequiredChoice } from './parts/protect-methods';
export { ApiProtection, type ProtectOptions, SECURITY_SCHEME_NAME } from './parts/protection';
export type { SoapRouteSettings } from './parts/soap';
export { UsagePipeline, type UsagePipelineProps } from './parts/usage-pipeline';
export { WebhooksPart, type WebhooksPartProps } from './parts/webhooks';
