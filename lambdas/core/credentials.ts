/**
 * Consumer credentials taken from the request headers, and the credential id that stands for them
 * everywhere but in the request to the platform (invariant 5).
 */
import { createHash } from 'node:crypto';
import type { AccessConfig } from './config';
import type { Credential } from './platform/types';

/** Longest credential value accepted, in bytes; longer values are refused as malformed. */
export const MAX_CREDENTIAL_BYTES = 256;

/**
 * Printable ASCII without the space (0x21-0x7E). A space is refused: HTTP already strips the
 * whitespace around a header value, so a space inside one is a pasted `Bearer x`, a merged header
 * or a typo, never a key the platform issued.
 */
const PRINTABLE_ASCII = /^[\x21-\x7e]+$/;

export type HeaderMap = Readonly<Record<string, string | undefined>> | null | undefined;
export type MultiValueHeaderMap = Readonly<Record<string, readonly string[] | undefined>> | null | undefined;

export type MalformedReason = 'missing' | 'empty' | 'too_long' | 'bad_characters' | 'several_values';

export type CredentialExtraction =
  | { readonly ok: true; readonly credential: Credential }
  | { readonly ok: false; readonly header: string; readonly reason: MalformedReason };

type HeaderValue =
  | { readonly ok: true; readonly value: string | undefined }
  | { readonly ok: false; readonly reason: MalformedReason };

/**
 * The single value of a header, its name matched case-insensitively in both `headers` and
 * `multiValueHeaders` (API Gateway fills both). Several values in any form are refused: a repeated
 * header, the same header under two spellings, or values a proxy joined with commas.
 */
function singleHeaderValue(
  name: string,
  headers: HeaderMap,
  multiValueHeaders: MultiValueHeaderMap,
): HeaderValue {
  const wanted = name.toLowerCase();
  const spellings = new Set<string>();
  for (const map of [headers, multiValueHeaders]) {
    for (const key of Object.keys(map ?? {})) if (key.toLowerCase() === wanted) spellings.add(key);
  }
  if (spellings.size === 0) return { ok: true, value: undefined };
  if (spellings.size > 1) return { ok: false, reason: 'several_values' };
  const [spelling] = spellings;
  const multi = multiValueHeaders?.[spelling];
  const single = headers?.[spelling];
  if (multi !== undefined) {
    if (multi.length > 1) return { ok: false, reason: 'several_values' };
    if (single !== undefined && single !== multi[0]) return { ok: false, reason: 'several_values' };
    return checkedValue(multi[0]);
  }
  return checkedValue(single);
}

/**
 * The checks every credential value passes wherever it travels (a header here, a SOAP header element
 * in `core/soap`): not empty, at most `maxBytes`, one value, printable ASCII.
 */
export function checkedValue(value: string | undefined, maxBytes = MAX_CREDENTIAL_BYTES): HeaderValue {
  if (value === undefined) return { ok: true, value: undefined };
  if (value === '') return { ok: false, reason: 'empty' };
  if (Buffer.byteLength(value, 'utf8') > maxBytes) return { ok: false, reason: 'too_long' };
  if (value.includes(',')) return { ok: false, reason: 'several_values' };
  if (!PRINTABLE_ASCII.test(value)) return { ok: false, reason: 'bad_characters' };
  return { ok: true, value };
}

type CredentialHeaders = Pick<
  AccessConfig,
  'credentialMode' | 'credentialHeader' | 'appIdHeader' | 'appKeyHeader'
>;

/**
 * The headers API Gateway must see on a call before it invokes the authorizer (its identity sources):
 * the key header, or both the app id and app key headers. A call missing one is refused with 401 and
 * never reaches the authorizer or its cache.
 */
export function identitySourceHeaders(config: CredentialHeaders): string[] {
  return config.credentialMode === 'app_id'
    ? [config.appIdHeader, config.appKeyHeader]
    : [config.credentialHeader];
}

/**
 * The request's credential. In user_key mode the key header is required. In app_id mode the app id
 * header is required and the app key header is optional, as on the platform (an application may have
 * no keys; the platform answers "application key is missing" when it has some).
 */
export function extractCredential(
  config: CredentialHeaders,
  headers: HeaderMap,
  multiValueHeaders: MultiValueHeaderMap,
): CredentialExtraction {
  if (config.credentialMode === 'user_key') {
    const userKey = singleHeaderValue(config.credentialHeader, headers, multiValueHeaders);
    if (!userKey.ok) return { ok: false, header: config.credentialHeader, reason: userKey.reason };
    if (userKey.value === undefined) return { ok: false, header: config.credentialHeader, reason: 'missing' };
    return { ok: true, credential: { kind: 'user_key', userKey: userKey.value } };
  }
  const appId = singleHeaderValue(config.appIdHeader, headers, multiValueHeaders);
  if (!appId.ok) return { ok: false, header: config.appIdHeader, reason: appId.reason };
  if (appId.value === undefined) return { ok: false, header: config.appIdHeader, reason: 'missing' };
  const appKey = singleHeaderValue(config.appKeyHeader, headers, multiValueHeaders);
  if (!appKey.ok) return { ok: false, header: config.appKeyHeader, reason: appKey.reason };
  return {
    ok: true,
    credential: {
      kind: 'app_id',
      appId: appId.value,
      ...(appKey.value !== undefined && { appKey: appKey.value }),
    },
  };
}

/** Each field prefixed with its byte length, so no two field lists encode alike whatever they contain. */
function lengthPrefixed(fields: readonly string[]): string {
  return fields.map((field) => `${Buffer.byteLength(field, 'utf8')}:${field}`).join('');
}

/**
 * The input hashed into a credential id: service id, credential kind and the credential's fields,
 * length-prefixed. A key containing `:` or any separator cannot pose as another key, an (app_id,
 * app_key) pair cannot pose as another pair, and an app id without a key differs from one with an
 * empty key.
 */
export function credentialIdInput(serviceId: string, credential: Credential): string {
  const fields =
    credential.kind === 'user_key'
      ? [serviceId, credential.kind, credential.userKey]
      : [
          serviceId,
          credential.kind,
          credential.appId,
          ...(credential.appKey === undefined ? [] : [credential.appKey]),
        ];
  return lengthPrefixed(fields);
}

/** SHA-256 hex of the service id and the credential: the only name the credential has in cache, logs and messages. */
export function credentialIdOf(serviceId: string, credential: Credential): string {
  return createHash('sha256').update(credentialIdInput(serviceId, credential), 'utf8').digest('hex');
}

/** What logs may show of a credential id. */
export function credentialIdPrefix(credentialId: string): string {
  return credentialId.slice(0, 12);
}
