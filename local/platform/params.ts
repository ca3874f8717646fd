/**
 * Request parameters as the platform (Rack) reads them: `a[b][c]=v` builds nested hashes, `a[]=v` arrays,
 * the last value of a repeated name wins, and a pair without `=` has no value.
 *
 * The decoding is done here on bytes rather than with URLSearchParams, because URLSearchParams silently
 * replaces invalid UTF-8 with U+FFFD and keeps malformed `%` escapes, while the platform answers those with
 * `not_valid_data` and `bad_request`.
 */

export type ParamValue = string | null | ParamHash | ParamValue[];
export interface ParamHash {
  [name: string]: ParamValue;
}

/** A request whose parameters cannot be read: the platform answers 400 `bad_request` with this message. */
export class MalformedParamsError extends Error {
  constructor(message = 'request contains syntax errors, should not be repeated without modification') {
    super(message);
  }
}

const INVALID_PERCENT_ENCODING = 'Invalid query parameters: invalid %-encoding';
const MAX_NESTING = 32;
const PLUS = 0x2b;
const PERCENT = 0x25;
const SPACE = 0x20;
const utf8 = new TextDecoder('utf-8', { fatal: true });
const lenientUtf8 = new TextDecoder('utf-8');

export interface Params {
  readonly values: ParamHash;
  /** False when some name or value is not valid UTF-8 (the platform answers `not_valid_data`). */
  readonly validUtf8: boolean;
}

export function emptyParamHash(): ParamHash {
  return Object.create(null) as ParamHash;
}

export function isParamHash(value: ParamValue | undefined): value is ParamHash {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function hexDigit(byte: number): number {
  if (byte >= 0x30 && byte <= 0x39) return byte - 0x30;
  const lower = byte | 0x20;
  if (lower >= 0x61 && lower <= 0x66) return lower - 0x61 + 10;
  return -1;
}

function percentDecode(bytes: Buffer): Buffer {
  const out = Buffer.allocUnsafe(bytes.length);
  let length = 0;
  for (let i = 0; i < bytes.length; i++) {
    const byte = bytes[i] as number;
    if (byte === PLUS) {
      out[length++] = SPACE;
    } else if (byte === PERCENT) {
      const high = hexDigit(bytes[i + 1] ?? -1);
      const low = hexDigit(bytes[i + 2] ?? -1);
      if (high < 0 || low < 0) throw new MalformedParamsError(INVALID_PERCENT_ENCODING);
      out[length++] = high * 16 + low;
      i += 2;
    } else {
      out[length++] = byte;
    }
  }
  return out.subarray(0, length);
}

class Decoder {
  validUtf8 = true;

  text(bytes: Uint8Array): string {
    try {
      return utf8.decode(bytes);
    } catch {
      this.validUtf8 = false;
      return lenientUtf8.decode(bytes);
    }
  }
}

/** `usage[hits]` -> ['usage', 'hits']; `a[]` -> ['a', '']; a name that is not of that shape is one plain key. */
function nameSegments(name: string): string[] {
  const open = name.indexOf('[');
  if (open <= 0) return [name];
  const rest = name.slice(open);
  if (!/^(\[[^[\]]*\])+$/.test(rest)) return [name];
  const segments = [
    name.slice(0, open),
    ...Array.from(rest.matchAll(/\[([^[\]]*)\]/g), (m) => m[1] as string),
  ];
  if (segments.length > MAX_NESTING) throw new MalformedParamsError();
  return segments;
}

function assign(target: ParamHash, segments: readonly string[], value: string | null): void {
  const [key, next, ...rest] = segments as [string, string | undefined, ...string[]];
  if (next === undefined) {
    target[key] = value;
    return;
  }
  if (next === '') {
    const existing = target[key] ?? [];
    if (!Array.isArray(existing)) throw new MalformedParamsError();
    target[key] = existing;
    appendToArray(existing, rest, value);
    return;
  }
  const existing = target[key] ?? emptyParamHash();
  if (!isParamHash(existing)) throw new MalformedParamsError();
  target[key] = existing;
  assign(existing, [next, ...rest], value);
}

/** `a[]=v` appends v; `a[][k]=v` sets k in the last hash unless it has k already, else starts a new hash. */
function appendToArray(array: ParamValue[], rest: readonly string[], value: string | null): void {
  const [key] = rest;
  if (key === undefined) {
    array.push(value);
    return;
  }
  if (key === '') throw new MalformedParamsError();
  const last = array[array.length - 1];
  const target = isParamHash(last) && !(key in last) ? last : emptyParamHash();
  if (target !== last) array.push(target);
  assign(target, rest, value);
}

/** Adds one decoded name/value pair (multipart fields arrive decoded) with the bracket rules. */
export function addParam(values: ParamHash, name: string, value: string | null): void {
  if (name === '') return;
  assign(values, nameSegments(name), value);
}

/** Reads an `application/x-www-form-urlencoded` string of bytes (query string or body) into `into`. */
export function parseUrlEncoded(raw: Buffer, into: ParamHash = emptyParamHash()): Params {
  const decoder = new Decoder();
  let start = 0;
  while (start <= raw.length) {
    let end = raw.indexOf(0x26, start);
    if (end < 0) end = raw.length;
    const pair = raw.subarray(start, end);
    start = end + 1;
    if (pair.length === 0) continue;
    const equals = pair.indexOf(0x3d);
    const name = decoder.text(percentDecode(equals < 0 ? pair : pair.subarray(0, equals)));
    const value = equals < 0 ? null : decoder.text(percentDecode(pair.subarray(equals + 1)));
    addParam(into, name, value);
  }
  return { values: into, validUtf8: decoder.validUtf8 };
}
