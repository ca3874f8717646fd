/**
 * The portal's pages: plain HTML forms that work without script. Every page carries a fresh CSP nonce;
 * the only scripts are the docs page's Swagger UI start and the creating answer's hand-over of a secret
 * to this tab's sessionStorage (never localStorage), both with that nonce.
 */
import type { Plan } from './admin-xml';
import { escapeHtml } from './http';

export interface PageContext {
  readonly base: string;
  readonly nonce: string;
  readonly csrf: string;
  readonly signedIn: boolean;
}

const STYLE = `body{font-family:system-ui,sans-serif;max-width:44rem;margin:2rem auto;padding:0 1rem;line-height:1.5}
form{margin:1rem 0}label{display:block;margin:.5rem 0}input,select{font:inherit;padding:.3rem}
button{font:inherit;padding:.3rem 1rem}code,.secret{font-family:ui-monospace,monospace;background:#f4f4f4;padding:.1rem .3rem}
.secret{display:block;padding:.6rem;word-break:break-all;font-size:1.1rem}.note{color:#555}
table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:.2rem .6rem;text-align:left}nav form{display:inline}`;

export function contentSecurityPolicy(nonce: string, connect = "'self'"): string {
  return [
    "default-src 'none'",
    `script-src 'self' 'nonce-${nonce}'`,
    `style-src 'self' 'nonce-${nonce}'`,
    "img-src 'self' data:",
    `connect-src ${connect}`,
    "frame-ancestors 'none'",
    "base-uri 'none'",
    "form-action 'self'",
  ].join('; ');
}

export function csrfField(context: PageContext): string {
  return `<input type="hidden" name="csrf" value="${escapeHtml(context.csrf)}">`;
}

export function postForm(context: PageContext, action: string, label: string, fields = ''): string {
  return `<form method="post" action="${escapeHtml(`${context.base}${action}`)}">${csrfField(context)}${fields}<button type="submit">${escapeHtml(label)}</button></form>`;
}

export function layout(context: PageContext, title: string, body: string, script = ''): string {
  const nav = context.signedIn
    ? `<nav><a href="${context.base}/app">Your application</a> · <a href="${context.base}/docs">Documentation</a> · ${postForm(context, '/signout', 'Sign out')}</nav>`
    : `<nav><a href="${context.base}">Sign up or sign in</a> · <a href="${context.base}/docs">Documentation</a></nav>`;
  return `<!DOCTYPE html>
<html lang="en">
<head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)}</title><style nonce="${context.nonce}">${STYLE}</style></head>
<body>${nav}<h1>${escapeHtml(title)}</h1>
${body}${script && `<script nonce="${context.nonce}">${script}</script>`}
</body></html>
`;
}

export function plansTable(plans: readonly Plan[]): string {
  if (plans.length === 0) return '<p>No plan is published yet.</p>';
  const rows = plans
    .map(
      (plan) =>
        `<tr><td>${escapeHtml(plan.name)}</td><td>${plan.approvalRequired ? 'needs the provider’s approval' : 'at once'}</td></tr>`,
    )
    .join('');
  return `<table id="plans"><tr><th>Plan</th><th>Application</th></tr>${rows}</table>`;
}

export function planSelect(plans: readonly Plan[]): string {
  if (plans.length <= 1) return '';
  const options = plans
    .map(
      (plan) =>
        `<option value="${escapeHtml(plan.id)}"${plan.isDefault ? ' selected' : ''}>${escapeHtml(plan.name)}</option>`,
    )
    .join('');
  return `<label>Plan <select name="plan">${options}</select></label>`;
}
