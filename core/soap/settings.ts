/**
 * Settings of the SOAP access proxy, validated once at start-up like the rest of the configuration
 * (`../config.ts`): a bad value throws a ConfigError that names the setting.
 */
import { ConfigError, envInteger, httpUrl, integer, nonEmpty } from '../settings/config';
import { SOAP_VERSIONS, XML_NAMESPACE, XMLNS_NAMESPACE } from './namespaces';

export interface SoapSettings {
  /** Namespace URI of the header elements that carry the credential and the method. */
  readonly soapNamespace: string;
  /** Where allowed calls go: the provider's SOAP endpoint, called exactly as given. */
  readonly soapBackendUrl: string;
  /** Deadline of one backend call, answer included. */
  readonly soapBackendTimeoutMs: number;
  /** Largest request body read, in bytes; checked before any parsing. */
  readonly soapMaxBodyBytes: number;
  /** Levels of nested elements in the envelope, the Envelope being level 1. */
  readonly soapMaxDepth: number;
  /** Attributes on one element of the envelope, namespace declarations included. */
  readonly soapMaxAttributes: number;
  /** Namespace declarations in scope at any element: its own and its ancestors'. */
  readonly soapMaxNamespaces: number;
}

/** The SOAP route's path when none is set (`soapPath`). */
export const DEFAULT_SOAP_PATH = '/soap';

export type SoapSettingsInput = Partial<SoapSettings> & { readonly soapBackendUrl: string };

/** API Gateway's integration timeout is 29 s; a longer backend deadline could never be answered. */
export const MAX_SOAP_BACKEND_TIMEOUT_MS = 28_000;
/** A Lambda's synchronous event is at most 6 MB, and a base64 body takes a third more room. */
export const MAX_SOAP_BODY_BYTES = 4 * 1024 * 1024;

type SoapIntegerSetting =
  | 'soapBackendTimeoutMs'
  | 'soapMaxBodyBytes'
  | 'soapMaxDepth'
  | 'soapMaxAttributes'
  | 'soapMaxNamespaces';

interface IntegerRange {
  readonly default: number;
  readonly min: number;
  readonly max: number;
}

/** The whole-number settings: default and bounds of each (docs/soap.md, "Settings"). */
export const SOAP_INTEGER_SETTINGS: Readonly<Record<SoapIntegerSetting, IntegerRange>> = {
  /** Under API Gateway's 29 s integration timeout, so the consumer gets our Fault, not the gateway's 504. */
  soapBackendTimeoutMs: { default: 10_000, min: 100, max: MAX_SOAP_BACKEND_TIMEOUT_MS },
  soapMaxBodyBytes: { default: 1024 * 1024, min: 1024, max: MAX_SOAP_BODY_BYTES },
  /** Envelope, Body and operation take three levels; the payload gets the rest. */
  soapMaxDepth: { default: 64, min: 4, max: 1000 },
  soapMaxAttributes: { default: 256, min: 1, max: 10_000 },
  soapMaxNamespaces: { default: 256, min: 1, max: 10_000 },
};

/** Every structural bound at its largest: for a reader behind the proxy (the demo echo) and the bench. */
export const SOAP_LARGEST_BOUNDS = {
  soapMaxDepth: SOAP_INTEGER_SETTINGS.soapMaxDepth.max,
  soapMaxAttributes: SOAP_INTEGER_SETTINGS.soapMaxAttributes.max,
  soapMaxNamespaces: SOAP_INTEGER_SETTINGS.soapMaxNamespaces.max,
} as const;

const INTEGER_SETTING_NAMES = Object.keys(SOAP_INTEGER_SETTINGS) as SoapIntegerSetting[];

/** The settings that tune the route once `soapBackendUrl` adds it. */
export const SOAP_TUNING_SETTINGS = ['soapNamespace', ...INTEGER_SETTING_NAMES] as const;

export const SOAP_DEFAULTS = {
  soapNamespace: 'urn:apigw-access-management:soap',
  ...(Object.fromEntries(
    INTEGER_SETTING_NAMES.map((name) => [name, SOAP_INTEGER_SETTINGS[name].default]),
  ) as Record<SoapIntegerSetting, number>),
} as const;

const RESERVED_NAMESPACES: readonly string[] = [
  ...Object.values(SOAP_VERSIONS).map((version) => version.namespace),
  XML_NAMESPACE,
  XMLNS_NAMESPACE,
];

function extensionNamespace(value: unknown): string {
  const namespace = nonEmpty('soapNamespace', value);
  if (!URL.canParse(namespace) || /\s/.test(namespace)) {
    throw new ConfigError(
      'soapNamespace',
      `must be an absolute URI such as urn:example:soap (got ${namespace})`,
    );
  }
  if (RESERVED_NAMESPACES.includes(namespace)) {
    throw new ConfigError('soapNamespace', `must not be a SOAP or XML namespace (got ${namespace})`);
  }
  return namespace;
}

export function parseSoapSettings(input: SoapSettingsInput): SoapSettings {
  const integers = Object.fromEntries(
    INTEGER_SETTING_NAMES.map((name) => {
      const { default: fallback, min, max } = SOAP_INTEGER_SETTINGS[name];
      return [name, integer(name, input[name] ?? fallback, min, max)];
    }),
  ) as Record<SoapIntegerSetting, number>;
  return {
    soapNamespace: extensionNamespace(input.soapNamespace ?? SOAP_DEFAULTS.soapNamespace),
    soapBackendUrl: httpUrl('soapBackendUrl', input.soapBackendUrl).href,
    ...integers,
  };
}

/** Environment variable names: the CDK writes them, the proxy Lambda reads them. */
export const SOAP_ENV = {
  soapNamespace: 'SOAP_NAMESPACE',
  soapBackendUrl: 'SOAP_BACKEND_URL',
  soapBackendTimeoutMs: 'SOAP_BACKEND_TIMEOUT_MS',
  soapMaxBodyBytes: 'SOAP_MAX_BODY_BYTES',
  soapMaxDepth: 'SOAP_MAX_DEPTH',
  soapMaxAttributes: 'SOAP_MAX_ATTRIBUTES',
  soapMaxNamespaces: 'SOAP_MAX_NAMESPACES',
} as const satisfies Record<keyof SoapSettings, string>;

export function soapSettingsFromEnv(
  env: Readonly<Record<string, string | undefined>> = process.env,
): SoapSettings {
  const namespace = env[SOAP_ENV.soapNamespace] || undefined;
  const integers = INTEGER_SETTING_NAMES.flatMap((name) => {
    const value = envInteger(env, SOAP_ENV[name]);
    return value === undefined ? [] : [[name, value] as const];
  });
  return parseSoapSettings({
    soapBackendUrl: env[SOAP_ENV.soapBackendUrl] ?? '',
    ...(namespace !== undefined && { soapNamespace: namespace }),
    ...Object.fromEntries(integers),
  });
}

export function soapSettingsToEnv(settings: SoapSettings): Record<string, string> {
  return Object.fromEntries(
    (Object.keys(SOAP_ENV) as (keyof SoapSettings)[]).map((name) => [SOAP_ENV[name], String(settings[name])]),
  );
}
