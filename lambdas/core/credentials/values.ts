/**
 * Reading one credential value from a request: its header (or query parameter) found case-insensitively,
 * exactly one value, and only what a platform could have issued. Every credential scheme reads its parts
 * through here, so "malformed" means the same thing in every mode (invariant 6: refused with 401 before
 * any Redis, platform or SNS call).
 */

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

/** The parts of a request a credential can travel in, as API Gateway hands them to the authorizer. */
export interface CredentialRequest {
  readonly headers: HeaderMap;
  readonly multiValueHeaders: MultiValueHeaderMap;
}

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
  if (Buffer.byteLength(value, 'utf8') > maxBytes) return { ok: false, reason: 'too_long' };
  if (value.includes(',')) return { ok: false, reason: 'several_values' };
  if (!PRINTABLE_ASCII.test(value)) return { ok: false, reason: 'bad_characters' };
  return { ok: true, value };
}

/**
 * The single value of a header, its name matched case-insensitively in both `headers` and
 * `multiValueHeaders` (API Gateway fills both). Several values in any form are refused: a repeated
 * header, the same header under two spellings, or values a proxy joined with commas.
 */
export function singleHeaderValue(name: string, request: CredentialRequest): ValueRead {
  const { headers, multiValueHeaders } = request;
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
