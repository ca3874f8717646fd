/**
 * Reading one credential value from a request: its header (or query parameter) found case-insensitively,
 * exactly one value, and only what a platform could have issued. Every credential scheme reads its parts
 * through here, so "malformed" means the same thing in every mode (invariant 6: refused with 401 before
 * any Redis, platform or SNS call).
 */

import type { GatewayRequest } from '../decision/request';
import type { CredentialLocation } from '../settings/config';

/** Longest credential value accepted, in bytes; longer values are refused as malformed. */
export const MAX_CREDENTIAL_BYTES = 256;

/**
 * Printable ASCII without the space (0x21-0x7E). A space is refused: HTTP already strips the
 * whitespace around a header value, so a space inside one is a pasted `Bearer x`, a merged header
 * or a typo, never a key the platform issued.
 */
const PRINTABLE_ASCII = /^[\x21-\x7e]+$/;

/** A header map of one value per name, as an integration event or a browser request carries it. */
export type HeaderMap = Readonly<Record<string, string | undefined>> | null | undefined;

export type MalformedReason =
  | 'missing'
  | 'empty'
  | 'too_long'
  | 'bad_characters'
  | 'several_values'
  /** An access token that is not a JWT the configured issuer signed for this audience, or has expired. */
  | 'invalid_token';

/** What is wrong with a value refused for each reason, said after its name: "client_id is too long". */
export const MALFORMED_PROBLEM: Readonly<Record<MalformedReason, string>> = {
  missing: 'is missing',
  empty: 'is empty',
  too_long: 'is too long',
  bad_characters: 'may hold printable ASCII characters only',
  several_values: 'holds several values',
  invalid_token: 'is not a valid access token',
};

/** The parts of a request a credential can travel in, whatever gateway format carried them. */
export type CredentialRequest = Pick<GatewayRequest, 'headers' | 'query'>;

export type ValueRead =
  | { readonly ok: true; readonly value: string | undefined }
  | { readonly ok: false; readonly reason: MalformedReason };

/**
 * A credential value as a platform issues it: the checks every scheme applies to every part, wherever
 * it travels (a header, a SOAP header element): not empty, at most `maxBytes`, one value, printable ASCII.
 */
export function checkedValue(value: string | undefined, maxBytes = MAX_CREDENTIAL_BYTES): ValueRead {
  if (value === undefined) return { ok: true, value: undefined };
  if (value === '') return { ok: false, reason: 'empty' };
  if (value.length > maxBytes || Buffer.byteLength(value, 'utf8') > maxBytes) {
    return { ok: false, reason: 'too_long' };
  }
  if (value.includes(',')) return { ok: false, reason: 'several_values' };
  if (!PRINTABLE_ASCII.test(value)) return { ok: false, reason: 'bad_characters' };
  return { ok: true, value };
}

/** The checks a value passes once found: `checkedValue` unless a scheme's values look otherwise. */
export type ValueCheck = (value: string | undefined) => ValueRead;

/** One value, or why there is not exactly one: several values in any form are refused. */
function singleOf(values: readonly string[] | undefined, check: ValueCheck): ValueRead {
  if (values === undefined || values.length === 0) return check(undefined);
  if (values.length > 1) return { ok: false, reason: 'several_values' };
  return check(values[0]);
}

/**
 * The single value of a header, its name matched case-insensitively. Several values in any form are
 * refused: a repeated header, the same header under two spellings, or values a proxy or the gateway
 * joined with commas.
 */
export function singleHeaderValue(
  name: string,
  request: CredentialRequest,
  check: ValueCheck = checkedValue,
): ValueRead {
  const wanted = name.toLowerCase();
  let spelling: string | undefined;
  for (const key of Object.keys(request.headers)) {
    if (key.length !== wanted.length || key.toLowerCase() !== wanted) continue;
    if (spelling !== undefined) return { ok: false, reason: 'several_values' };
    spelling = key;
  }
  return singleOf(spelling === undefined ? undefined : request.headers[spelling], check);
}

/**
 * The single value of a query-string parameter, its name matched exactly (query names are case
 * sensitive, unlike header names). A repeated parameter is refused as several values.
 */
export function singleQueryValue(
  name: string,
  request: CredentialRequest,
  check: ValueCheck = checkedValue,
): ValueRead {
  return singleOf(Object.hasOwn(request.query, name) ? request.query[name] : undefined, check);
}

/** The single value of a credential part where the configuration says it travels. */
export function singleValue(
  location: CredentialLocation,
  name: string,
  request: CredentialRequest,
): ValueRead {
  return location === 'header' ? singleHeaderValue(name, request) : singleQueryValue(name, request);
}
