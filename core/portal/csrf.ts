/**
 * Cross-site request forgery, refused three ways (OWASP's CSRF cheat sheet): a state-changing request must
 * come from the portal's own origin (`Origin`, when the browser sends it), must not be a cross-site or
 * same-site fetch (`Sec-Fetch-Site`, when sent), and must carry the form's token: an HMAC of a random
 * cookie value (the session id once signed in), which another site can neither read nor forge. The
 * cookies are SameSite=Lax on top, and the portal answers no CORS preflight.
 */
import { cookieOf, originOf, type PortalRequest } from './http';
import { randomToken, sameSecret, signature } from './secrets';
import { cookieHeader, cookieName, SESSION_TTL_SECONDS } from './sessions';

export type CsrfVerdict = { readonly ok: true } | { readonly ok: false; readonly why: string };

/** The form field that carries the token. */
export const CSRF_FIELD = 'csrf';

/** The value the token binds to: this browser's random cookie, new when it has none (then set it). */
export function csrfBinding(request: PortalRequest): { readonly value: string; readonly setCookie?: string } {
  const existing = cookieOf(request, cookieName(request, 'csrf'));
  if (existing !== undefined && existing.length >= 32) return { value: existing };
  const value = randomToken();
  return { value, setCookie: cookieHeader(request, 'csrf', value, SESSION_TTL_SECONDS) };
}

export function csrfToken(signingKey: string, binding: string): string {
  return signature(signingKey, `csrf:${binding}`);
}

/** Whether a POST may go on. */
export function checkCsrf(
  request: PortalRequest,
  signingKey: string,
  token: string | undefined,
): CsrfVerdict {
  const origin = request.headers.origin;
  if (origin !== undefined && origin !== originOf(request)) {
    return { ok: false, why: 'the request comes from another origin' };
  }
  const site = request.headers['sec-fetch-site'];
  if (site !== undefined && site !== 'same-origin' && site !== 'none') {
    return { ok: false, why: `the request is ${site}` };
  }
  const binding = cookieOf(request, cookieName(request, 'csrf'));
  if (token === undefined || binding === undefined || !sameSecret(token, csrfToken(signingKey, binding))) {
    return { ok: false, why: 'the form token is missing or wrong: reload the page and try again' };
  }
  return { ok: true };
}
