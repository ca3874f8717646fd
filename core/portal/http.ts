/**
 * The portal's requests and answers on neutral types: the Lambda handler and the local gateway map their
 * events to these. Forms are `application/x-www-form-urlencoded`, bounded; cookies are read by name.
 */

export interface PortalRequest {
  readonly method: string;
  /** The portal's own path as the browser sees it (stage and base path included), e.g. `/prod/portal`. */
  readonly base: string;
  /** The path under the portal, `''` for `/portal` itself, else `/signup`, `/app`, ... */
  readonly path: string;
  readonly query: Readonly<Record<string, string>>;
  /** Header names in lower case. */
  readonly headers: Readonly<Record<string, string>>;
  readonly body: string;
  readonly sourceAddress: string;
}

export interface PortalResponse {
  readonly status: number;
  readonly headers: Readonly<Record<string, string>>;
  /** Set-Cookie values, one each. */
  readonly cookies: readonly string[];
  readonly body: string;
}

/** A form body is a few short fields; anything larger is refused before it is parsed. */
export const MAX_FORM_BYTES = 8 * 1024;

export class FormTooLargeError extends Error {
  constructor() {
    super(`the form is larger than ${MAX_FORM_BYTES} bytes`);
    this.name = 'FormTooLargeError';
  }
}

/** The fields of a form body, the first value of each name. */
export function formOf(request: PortalRequest): Readonly<Record<string, string>> {
  if (Buffer.byteLength(request.body) > MAX_FORM_BYTES) throw new FormTooLargeError();
  const fields: Record<string, string> = {};
  for (const [name, value] of new URLSearchParams(request.body)) {
    if (!Object.hasOwn(fields, name)) fields[name] = value;
  }
  return fields;
}

/** The value of one cookie of the request, if sent. */
export function cookieOf(request: PortalRequest, name: string): string | undefined {
  for (const part of (request.headers.cookie ?? '').split(';')) {
    const at = part.indexOf('=');
    if (at > 0 && part.slice(0, at).trim() === name) return part.slice(at + 1).trim();
  }
  return undefined;
}

/** `https` unless the gateway in front says the call came over plain http (the local gateway). */
export function schemeOf(request: PortalRequest): 'https' | 'http' {
  return request.headers['x-forwarded-proto']?.split(',', 1)[0]?.trim() === 'http' ? 'http' : 'https';
}

/** The origin the portal is served from, as the browser names it in `Origin`. */
export function originOf(request: PortalRequest): string {
  return `${schemeOf(request)}://${request.headers.host ?? ''}`;
}

export function escapeHtml(text: string): string {
  return text.replace(
    /[&<>"']/g,
    (char) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[char] as string,
  );
}
