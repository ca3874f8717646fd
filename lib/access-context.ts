import { Duration } from 'aws-cdk-lib';
import type { Construct } from 'constructs';
import { ConfigError } from '../core/settings/config';
import { SETTINGS, type SettingNameIn, settingNamesIn } from '../core/settings/settings';
import { SOAP_TUNING_SETTINGS } from '../core/soap/settings';
import type { AccessManagementStackProps } from './access-stack';
import { type ApiAccessAuthorizerProps, DURATION_PROPS } from './api-access-authorizer-props';
import { MappingRulesSource } from './mapping-rules-source';
import type { SoapRouteSettings } from './parts/soap';

/** How a context value is read: `-c` gives text, cdk.json gives JSON values; both are accepted. */
type ContextKind = 'text' | 'wholeNumber' | 'flag' | 'object';

/**
 * The stack's own props (its resources) that are context keys too, under the same name, and how each is
 * read; the table's `cdk` settings are context keys as well. An object prop takes JSON from `-c`.
 */
const STACK_CONTEXT = {
  providerKeySecretArn: 'text',
  providerKeySecretKmsKeyArn: 'text',
  multiAz: 'flag',
  natGateways: 'wholeNumber',
  cacheNodeType: 'text',
  cacheEngine: 'text',
  redisShards: 'wholeNumber',
  replicasPerShard: 'wholeNumber',
  redisServerless: 'flag',
  serverlessLimits: 'object',
  tracing: 'flag',
  docs: 'flag',
  webhooks: 'flag',
  portal: 'object',
  dashboard: 'flag',
  alarmEmail: 'text',
  throttlingRateLimit: 'wholeNumber',
  throttlingBurstLimit: 'wholeNumber',
  apiType: 'text',
} as const satisfies { readonly [K in keyof AccessManagementStackProps]?: ContextKind };

/** Context keys of the stack alone (its resources). */
type StackContextKey = keyof typeof STACK_CONTEXT | SoapContextKey | MappingRulesContextKey;

/** Context keys of the mapping rules' source: `platform` reads them from the platform (MappingRulesSource). */
type MappingRulesContextKey = 'mappingRulesSource' | 'mappingRulesEnvironment' | 'mappingRulesRefreshSeconds';

/** Context keys of the SOAP route: `soapBackendUrl` adds it, the others tune it. */
type SoapContextKey = 'soapBackendUrl' | 'soapPath' | (typeof SOAP_TUNING_SETTINGS)[number];

/** Context keys (`npx cdk deploy -c key=value`) read into the stack's props. */
export type ContextKey = SettingNameIn<'cdk'> | StackContextKey;

/** A missing or unreadable context value; the message names the key and says how to set it. */
export class ContextError extends Error {
  constructor(
    readonly key: ContextKey,
    message: string,
  ) {
    super(message);
    this.name = 'ContextError';
  }
}

const DEPLOY_HINT = 'npx cdk deploy -c serviceId=<id> --parameters ProviderKey=<key>';

function invalid(key: ContextKey, problem: string, value: unknown): ContextError {
  return new ContextError(key, `Invalid context ${key}: ${problem} (got ${JSON.stringify(value)})`);
}

/**
 * Reads the stack's settings from CDK context. Context from `-c` arrives as strings and from cdk.json as
 * JSON values; both are accepted. Values are only converted here: the stack and construct validate them.
 */
export function accessStackPropsFromContext(scope: Construct): AccessManagementStackProps {
  const read = (key: ContextKey): unknown => scope.node.tryGetContext(key);

  const text = (key: ContextKey): string | undefined => {
    const value = read(key);
    if (value === undefined) return undefined;
    if (typeof value !== 'string') throw invalid(key, 'must be a string', value);
    return value;
  };
  const wholeNumber = (key: ContextKey): number | undefined => {
    const value = read(key);
    if (value === undefined) return undefined;
    const number = typeof value === 'string' && /^\d+$/.test(value.trim()) ? Number(value) : value;
    if (typeof number !== 'number' || !Number.isInteger(number) || number < 0) {
      throw invalid(key, 'must be a whole number', value);
    }
    return number;
  };
  const seconds = (key: ContextKey): Duration | undefined => {
    const value = wholeNumber(key);
    return value === undefined ? undefined : Duration.seconds(value);
  };
  const flag = (key: ContextKey): boolean | undefined => {
    const value = read(key);
    if (value === undefined || typeof value === 'boolean') return value;
    if (value === 'true' || value === 'false') return value === 'true';
    throw invalid(key, 'must be true or false', value);
  };
  /** A table setting: text from `-c` is read as its environment variable would be; parseConfig checks it. */
  const setting = (key: SettingNameIn<'cdk'>): unknown => {
    const value = read(key);
    if (typeof value !== 'string') return value;
    try {
      return SETTINGS[key].fromText(key, value);
    } catch (error) {
      if (error instanceof ConfigError)
        throw new ContextError(key, `Invalid context ${key}: ${error.problem}`);
      throw error;
    }
  };
  const settings = Object.fromEntries(
    settingNamesIn('cdk').map((key) => {
      const value = setting(key);
      return key in DURATION_PROPS
        ? [DURATION_PROPS[key as keyof typeof DURATION_PROPS], value === undefined ? undefined : seconds(key)]
        : [key, value];
    }),
  );

  const object = (key: ContextKey): object | undefined => {
    const value = read(key);
    let parsed: unknown = value;
    if (typeof value === 'string') {
      try {
        parsed = JSON.parse(value);
      } catch {
        throw invalid(key, 'must be a JSON object', value);
      }
    }
    if (parsed === undefined) return undefined;
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
      throw invalid(key, 'must be a JSON object', value);
    }
    return parsed;
  };
  const readers = { text, wholeNumber, flag, object } satisfies Record<
    ContextKind,
    (key: ContextKey) => unknown
  >;
  const stackProps = Object.fromEntries(
    Object.entries(STACK_CONTEXT).map(([key, kind]) => [key, readers[kind](key as ContextKey)]),
  );

  /** The SOAP route when `soapBackendUrl` is given; its other keys alone are refused, not ignored. */
  const soapRoute = (): SoapRouteSettings | undefined => {
    const soapBackendUrl = text('soapBackendUrl');
    const tuning = (['soapPath', ...SOAP_TUNING_SETTINGS] as const).filter((key) => read(key) !== undefined);
    if (soapBackendUrl === undefined) {
      if (tuning.length === 0) return undefined;
      throw new ContextError(
        'soapBackendUrl',
        `Missing context soapBackendUrl: ${tuning.join(', ')} tune the SOAP route, which -c soapBackendUrl=https://... adds`,
      );
    }
    const soapPath = text('soapPath');
    const soapNamespace = text('soapNamespace');
    const integers = SOAP_TUNING_SETTINGS.flatMap((key) => {
      if (key === 'soapNamespace') return [];
      const value = wholeNumber(key);
      return value === undefined ? [] : [[key, value] as const];
    });
    return {
      soapBackendUrl,
      ...(soapPath !== undefined && { soapPath }),
      ...(soapNamespace !== undefined && { soapNamespace }),
      ...Object.fromEntries(integers),
    };
  };

  /** `-c mappingRulesSource=platform` and its tuning; the tuning without it is refused, not ignored. */
  const mappingRulesSource = (): MappingRulesSource | undefined => {
    const source = text('mappingRulesSource');
    const environment = text('mappingRulesEnvironment');
    const refresh = seconds('mappingRulesRefreshSeconds');
    if (source === undefined || source === 'given') {
      const tuning = environment !== undefined ? 'mappingRulesEnvironment' : 'mappingRulesRefreshSeconds';
      if (environment === undefined && refresh === undefined) return undefined;
      throw new ContextError(
        tuning,
        `Invalid context ${tuning}: applies to -c mappingRulesSource=platform only`,
      );
    }
    if (source !== 'platform') throw invalid('mappingRulesSource', 'must be given or platform', source);
    if (environment !== undefined && environment !== 'staging' && environment !== 'production') {
      throw invalid('mappingRulesEnvironment', 'must be staging or production', environment);
    }
    return MappingRulesSource.platform({
      ...(environment !== undefined && { environment }),
      ...(refresh !== undefined && { refresh }),
    });
  };

  const serviceId = text('serviceId');
  if (serviceId === undefined || serviceId.trim() === '') {
    throw new ContextError('serviceId', `Missing context serviceId: run ${DEPLOY_HINT}`);
  }
  return {
    ...(settings as Partial<ApiAccessAuthorizerProps>),
    ...(stackProps as Partial<AccessManagementStackProps>),
    serviceId,
    soap: soapRoute(),
    mappingRulesSource: mappingRulesSource(),
  };
}
