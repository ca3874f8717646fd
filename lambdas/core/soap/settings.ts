/**
 * Settings of the SOAP access proxy, validated once at start-up like the rest of the configuration
 * (`../config.ts`): a bad value throws a ConfigError that names the setting.
 */
import { ConfigError, envInteger, httpUrl, integer, nonEmpty } from '../config';
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
}

/** The SOAP route's path when none is set (`soapPath`). */
export const DEFAULT_SOAP_PATH = '/soap';

export type SoapSettingsInput = Partial<SoapSettings> & { readonly soapBackendUrl: string };

export const SOAP_DEFAULTS = {
  soapNamespace: 'urn:apigw-access-management:soap',
  /** Under API Gateway's 29 s integration timeout, so the consumer gets our Fault, not the gateway's 504. */
  soapBackendTimeoutMs: 10_000,
  soapMaxBodyBytes: 1024 * 1024,
} as const;

/** API Gateway's integration timeout is 29 s; a longer backend deadline could never be answered. */
export const MAX_SOAP_BACKEND_TIMEOUT_MS = 28_000;
/** A Lambda's synchronous event is at most 6 MB, and a base64 body takes a third more room. */
export const MAX_SOAP_BODY_BYTES = 4 * 1024 * 1024;

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
  return {
    soapNamespace: extensionNamespace(input.soapNamespace ?? SOAP_DEFAULTS.soapNamespace),
    soapBackendUrl: httpUrl('soapBackendUrl', input.soapBackendUrl).href,
    soapBackendTimeoutMs: integer(
      'soapBackendTimeoutMs',
      input.soapBackendTimeoutMs ?? SOAP_DEFAULTS.soapBackendTimeoutMs,
      100,
      MAX_SOAP_BACKEND_TIMEOUT_MS,
    ),
    soapMaxBodyBytes: integer(
      'soapMaxBodyBytes',
      input.soapMaxBodyBytes ?? SOAP_DEFAULTS.soapMaxBodyBytes,
      1024,
      MAX_SOAP_BODY_BYTES,
    ),
  };
}

/** Environment variable names: the CDK writes them, the proxy Lambda reads them. */
export const SOAP_ENV = {
  soapNamespace: 'SOAP_NAMESPACE',
  soapBackendUrl: 'SOAP_BACKEND_URL',
  soapBackendTimeoutMs: 'SOAP_BACKEND_TIMEOUT_MS',
  soapMaxBodyBytes: 'SOAP_MAX_BODY_BYTES',
} as const satisfies Record<keyof SoapSettings, string>;

export function soapSettingsFromEnv(
  env: Readonly<Record<string, string | undefined>> = process.env,
): SoapSettings {
  const namespace = env[SOAP_ENV.soapNamespace] || undefined;
  const timeout = envInteger(env, SOAP_ENV.soapBackendTimeoutMs);
  const maxBody = envInteger(env, SOAP_ENV.soapMaxBodyBytes);
  return parseSoapSettings({
    soapBackendUrl: env[SOAP_ENV.soapBackendUrl] ?? '',
    ...(namespace !== undefined && { soapNamespace: namespace }),
    ...(timeout !== undefined && { soapBackendTimeoutMs: timeout }),
    ...(maxBody !== undefined && { soapMaxBodyBytes: maxBody }),
  });
}

export function soapSettingsToEnv(settings: SoapSettings): Record<string, string> {
  return {
    [SOAP_ENV.soapNamespace]: settings.soapNamespace,
    [SOAP_ENV.soapBackendUrl]: settings.soapBackendUrl,
    [SOAP_ENV.soapBackendTimeoutMs]: String(settings.soapBackendTimeoutMs),
    [SOAP_ENV.soapMaxBodyBytes]: String(settings.soapMaxBodyBytes),
  };
}
