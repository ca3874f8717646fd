/**
 * A browser stand-in for the portal's acceptance tests: a cookie jar, the form's CSRF token, the Origin
 * and Sec-Fetch-Site a browser sends, and its own loopback source address (127.0.0.x), so each test
 * signs up from its own address as far as the portal's per-address limit can tell.
 */
import http from 'node:http';
import type { LocalStack } from '../../local/stack';

export interface Answer {
  readonly status: number;
  readonly headers: http.IncomingHttpHeaders;
  readonly body: string;
}

let nextAddress = 10;

export class PortalBrowser {
  readonly cookies = new Map<string, string>();
  readonly localAddress = `127.0.0.${nextAddress++}`;
  /** The CSRF token of the last page read. */
  csrf: string | undefined;

  constructor(readonly portalUrl: string) {}

  get origin(): string {
    return new URL(this.portalUrl).origin;
  }

  request(
    url: string,
    options: { method?: string; body?: string; headers?: Record<string, string> } = {},
  ): Promise<Answer> {
    const cookie = [...this.cookies].map(([name, value]) => `${name}=${value}`).join('; ');
    return new Promise((resolve, reject) => {
      const sent = http.request(
        url,
        {
          method: options.method ?? 'GET',
          localAddress: this.localAddress,
          headers: {
            ...(cookie && { cookie }),
            ...(options.body !== undefined && { 'content-type': 'application/x-www-form-urlencoded' }),
            ...options.headers,
          },
          timeout: 10_000,
        },
        (response) => {
          const chunks: Buffer[] = [];
          response.on('data', (chunk: Buffer) => chunks.push(chunk));
          response.on('end', () => {
            for (const line of response.headers['set-cookie'] ?? []) {
              const [pair] = line.split(';');
              const at = pair?.indexOf('=') ?? -1;
              if (pair === undefined || at < 0) continue;
              const name = pair.slice(0, at);
              const value = pair.slice(at + 1);
              if (/Max-Age=0/i.test(line)) this.cookies.delete(name);
              else this.cookies.set(name, value);
            }
            const body = Buffer.concat(chunks).toString('utf8');
            const csrf = /name="csrf" value="([^"]+)"/.exec(body)?.[1];
            if (csrf !== undefined) this.csrf = csrf;
            resolve({ status: response.statusCode ?? 0, headers: response.headers, body });
          });
        },
      );
      sent.on('timeout', () => sent.destroy(new Error('timed out')));
      sent.on('error', reject);
      sent.end(options.body);
    });
  }

  get(path: string): Promise<Answer> {
    return this.request(`${this.portalUrl}${path}`);
  }

  /** A form POST as a browser sends it from the portal's own page. */
  post(path: string, fields: Record<string, string>, headers: Record<string, string> = {}): Promise<Answer> {
    const body = new URLSearchParams({ ...(this.csrf !== undefined && { csrf: this.csrf }), ...fields });
    return this.request(`${this.portalUrl}${path}`, {
      method: 'POST',
      body: body.toString(),
      headers: { origin: this.origin, 'sec-fetch-site': 'same-origin', ...headers },
    });
  }
}

/** The newest e-mail to `to` whose text has a link, and that link. */
export function lastLink(stack: LocalStack, to: string): string {
  const mail = [...(stack.mailSink?.messages() ?? [])].reverse().find((m) => m.to === to);
  const link = mail && /(https?:\/\/\S+)/.exec(mail.text)?.[1];
  if (link === undefined) throw new Error(`no e-mail with a link to ${to}`);
  return link;
}

export function mailsTo(stack: LocalStack, to: string) {
  return (stack.mailSink?.messages() ?? []).filter((m) => m.to === to);
}

/** The portal path and query of a link in an e-mail. */
export function pathOf(link: string, portalUrl: string): string {
  return link.slice(portalUrl.length);
}

/** Signs up through the e-mail's link up to the application page; returns the browser, signed in. */
export async function signUp(stack: LocalStack, portalUrl: string, email: string): Promise<PortalBrowser> {
  const browser = new PortalBrowser(portalUrl);
  await browser.get('');
  const answer = await browser.post('/signup', { email, org: `Org of ${email}` });
  if (answer.status !== 200) throw new Error(`sign-up answered ${answer.status}: ${answer.body}`);
  const page = await browser.get(pathOf(lastLink(stack, email), portalUrl));
  if (page.status !== 200) throw new Error(`the link's page answered ${page.status}`);
  const token = /name="token" value="([^"]+)"/.exec(page.body)?.[1] ?? '';
  const confirmed = await browser.post('/confirm', { token });
  if (confirmed.status !== 303) throw new Error(`confirm answered ${confirmed.status}: ${confirmed.body}`);
  return browser;
}

/** The secret the creating answer shows, once. */
export function shownSecret(body: string): string | undefined {
  return /<code class="secret" id="secret">([^<]+)<\/code>/.exec(body)?.[1];
}
