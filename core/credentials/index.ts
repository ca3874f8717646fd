/**
 * Consumer credentials: the scheme of each credential mode (how a request carries it), the platform's
 * kinds of credential (how the platform is asked about it), and the credential id that stands for a
 * credential everywhere but in the request to the platform (invariant 5).
 */
import { hash } from 'node:crypto';
import type { CredentialPrompt } from '../../contract/gateway-responses';
import type { Credential } from '../platform/types';
import type { CredentialMode } from '../settings/config';
import { appIdPlatformCredential, appIdScheme } from './app-id';
import { oauthScheme } from './oauth';
import type {
  CredentialReader,
  CredentialScheme,
  CredentialSettings,
  IdentitySource,
  PlatformCredential,
  PlatformCredentials,
  ReaderPorts,
} from './scheme';
import { userKeyPlatformCredential, userKeyScheme } from './user-key';
import type { CredentialRequest } from './values';

export type {
  CredentialExample,
  CredentialExtraction,
  CredentialReader,
  CredentialScheme,
  CredentialSettings,
  ExampleApplication,
  IdentitySource,
  ParameterPair,
  ReaderPorts,
} from './scheme';
export type { CredentialRequest, HeaderMap, MalformedReason } from './values';
export { checkedValue, MALFORMED_PROBLEM, MAX_CREDENTIAL_BYTES } from './values';

/** Every credential mode's scheme: a new mode is one module, and the compiler names what it lacks. */
export const CREDENTIAL_SCHEMES: Readonly<Record<CredentialMode, CredentialScheme>> = {
  user_key: userKeyScheme,
  app_id: appIdScheme,
  oauth: oauthScheme,
};

const PLATFORM_CREDENTIALS: PlatformCredentials = {
  user_key: userKeyPlatformCredential,
  app_id: appIdPlatformCredential,
};

/** How the platform knows this credential's kind. */
export function platformCredentialOf(credential: Credential): PlatformCredential<Credential['kind']> {
  return PLATFORM_CREDENTIALS[credential.kind] as PlatformCredential<Credential['kind']>;
}

/** A credential read back from its sealed JSON form, or undefined when the value is not one. */
export function parseCredential(value: unknown): Credential | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const fields = value as Readonly<Record<string, unknown>>;
  const kind = fields.kind;
  if (kind !== 'user_key' && kind !== 'app_id') return undefined;
  return PLATFORM_CREDENTIALS[kind].parse(fields);
}

type ModeSettings = CredentialSettings & { readonly credentialMode: CredentialMode };

/** What API Gateway must see on a call before it invokes the authorizer (its identity sources). */
export function identitySourcesOf(config: ModeSettings): IdentitySource[] {
  return CREDENTIAL_SCHEMES[config.credentialMode].identitySources(config);
}

/** The request headers a credential travels in (a browser must be allowed to send them). */
export function credentialHeaderNames(config: ModeSettings): string[] {
  return CREDENTIAL_SCHEMES[config.credentialMode].example(config).headers.map(([name]) => name);
}

/** The configured mode's credential reader: built once per container, then called for each request. */
export function credentialReaderOf(config: ModeSettings, ports?: ReaderPorts): CredentialReader {
  return CREDENTIAL_SCHEMES[config.credentialMode].reader(config, ports);
}

/** The request's credential in the configured mode, or why it is malformed (a reader built for one call). */
export function extractCredential(
  config: ModeSettings,
  request: CredentialRequest,
): ReturnType<CredentialReader> {
  return credentialReaderOf(config)(request);
}

/** Each field prefixed with its byte length, so no two field lists encode alike whatever they contain. */
function lengthPrefixed(fields: readonly string[]): string {
  return fields.map((field) => `${Buffer.byteLength(field, 'utf8')}:${field}`).join('');
}

/**
 * The input hashed into a credential id: service id, credential kind and the fields that name the
 * budget (the user key; the app id, whatever key comes with it), length-prefixed, so a key containing
 * `:` or any separator cannot pose as another.
 */
export function credentialIdInput(serviceId: string, credential: Credential): string {
  return lengthPrefixed([
    serviceId,
    credential.kind,
    ...platformCredentialOf(credential).idFields(credential),
  ]);
}

/**
 * SHA-256 hex of the input, in one call without a `Hash` object (node:crypto's `hash`). No id is kept by
 * what it hashes: that would hold raw credentials in the process for as long as they stay recent.
 */
function sha256Hex(input: string): string {
  return hash('sha256', input, 'hex');
}

/**
 * SHA-256 hex of the service id and the budget's fields: the only name the budget has in cache, logs and
 * messages. Every key (and token) of one application has the same credential id.
 */
export function credentialIdOf(serviceId: string, credential: Credential): string {
  return sha256Hex(credentialIdInput(serviceId, credential));
}

/**
 * SHA-256 hex naming the key an application presented (an app key, or none), under its budget; '' for
 * a credential with no key to check. An (app_id, app_key) pair cannot pose as another pair, and an app
 * id without a key differs from one with any key.
 */
export function keyIdOf(serviceId: string, credential: Credential): string {
  const fields = platformCredentialOf(credential).keyFields(credential);
  return fields === undefined ? '' : sha256Hex(lengthPrefixed([serviceId, 'key', ...fields]));
}

/** What logs may show of a credential id. */
export function credentialIdPrefix(credentialId: string): string {
  return credentialId.slice(0, 12);
}

/** What a 401 tells the consumer about the configured credential (contract/gateway-responses.ts). */
export function credentialPromptOf(
  settings: CredentialSettings & { readonly credentialMode: CredentialMode },
): CredentialPrompt {
  const scheme = CREDENTIAL_SCHEMES[settings.credentialMode];
  const challenge = scheme.challenge?.(settings);
  return { hint: scheme.hint(settings), ...(challenge !== undefined && { challenge }) };
}
