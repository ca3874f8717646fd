/**
 * The developer portal in a real browser on the demo stack, with the provider's approval on: headless
 * Chromium (Debian's `chromium`, or CHROMIUM_PATH) driven by playwright-core, as docs-browser.test.ts
 * drives the docs. A developer sees the plans, signs up, confirms from the local mail sink, waits for
 * approval, sees the key once and then its fingerprint, tries the API from the docs with the key filled
 * in, rolls the key and signs out; no credential is left in localStorage, and the cookie is HttpOnly and
 * SameSite=Lax.
 */
import { type Browser, chromium } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type LocalStack, startLocalStack } from '../../local/stack';
import { DEMO_STACK_FILE, readStackFile } from '../../local/stack-file';
import { chromiumPath, tryGetWord } from './browser';
import { lastLink } from './portal-client';

const TIMEOUT_MS = 90_000;
const EMAIL = 'ada@browser.example';

async function admin(stack: LocalStack, method: string, path: string, fields: Record<string, string> = {}) {
  const body = new URLSearchParams({ access_token: 'pk-demo', ...fields });
  const url = `${stack.platform?.url}/admin/api/${path}`;
  const response = await fetch(method === 'GET' ? `${url}?${body}` : url, {
    method,
    ...(method !== 'GET' && { body }),
    signal: AbortSignal.timeout(5000),
  });
  return response.text();
}

describe('the developer portal in a real browser', () => {
  let browser: Browser | undefined;
  let stack: LocalStack | undefined;

  beforeAll(async () => {
    const [launched, started] = await Promise.allSettled([
      chromium.launch({
        executablePath: chromiumPath(),
        headless: true,
        args: ['--no-sandbox', '--disable-dev-shm-usage'],
      }),
      startLocalStack({ stack: readStackFile(DEMO_STACK_FILE, {}), sweepIntervalMs: 0 }),
    ]);
    if (launched.status === 'fulfilled') browser = launched.value;
    if (started.status === 'fulfilled') stack = started.value;
    if (launched.status === 'rejected') throw launched.reason;
    if (started.status === 'rejected') throw started.reason;
    await admin(started.value, 'PUT', 'settings.json', { account_approval_required: 'true' });
  }, TIMEOUT_MS);

  afterAll(async () => {
    await browser?.close();
    await stack?.stop();
  });

  it(
    'takes a developer from the plans to a 200 in the docs, a rolled key and sign-out',
    async () => {
      const running = stack as LocalStack;
      const portalUrl = running.gateways[0]?.portalUrl as string;
      const apiUrl = running.gateways[0]?.url as string;
      const context = await (browser as Browser).newContext({ viewport: { width: 1280, height: 1600 } });
      const page = await context.newPage();
      page.setDefaultTimeout(15_000);
      const errors: string[] = [];
      page.on('console', (message) => {
        if (message.type() === 'error') errors.push(message.text());
      });

      // 1. The published plans; 2. sign up.
      await page.goto(portalUrl);
      await expect.poll(() => page.locator('#plans').textContent()).toContain('Basic');
      await page.locator('input[name="email"]').first().fill(EMAIL);
      await page.locator('input[name="org"]').fill('Analytical Engines');
      await page.getByRole('button', { name: 'Sign up' }).click();
      await page.locator('#check-mail').waitFor();

      // 3. The link from the mail sink, opened, confirmed; 4. pending, approved, reloaded.
      await page.goto(lastLink(running, EMAIL));
      await page.getByRole('button', { name: 'Confirm your sign-up' }).click();
      await page.locator('#pending').waitFor();
      const accountId = /<id>([^<]+)<\/id>/.exec(
        await admin(running, 'GET', 'accounts/find.xml', { email: EMAIL }),
      )?.[1];
      await admin(running, 'PUT', `accounts/${accountId}/approve.xml`);
      await page.reload();

      // 5. The key once, then only its fingerprint.
      await page.getByRole('button', { name: 'Create application' }).click();
      const key = (await page.locator('#secret').textContent())?.trim() as string;
      expect(key).toMatch(/^[0-9a-f]{32}$/);
      await page.goto(`${portalUrl}/app`);
      await page.locator('.fingerprint').first().waitFor();
      expect(await page.content()).not.toContain(key);

      // 6. The docs, the key filled in, "Try it out": 200 with its RateLimit headers.
      await page.goto(`${portalUrl}/docs`);
      await expect.poll(() => page.locator('#fill-note').textContent()).toContain('Filled in: user key');
      expect((await tryGetWord(page, 'hello.json')).status).toBe(200);
      // A new key's first call is decided by the platform; from the next, the cached budget gives the fields.
      const tried = await tryGetWord(page, 'hello.json');
      expect(tried.status).toBe(200);
      expect(tried.shown.toLowerCase()).toContain('ratelimit');

      // 7. Roll the key: the old one is refused.
      await page.goto(`${portalUrl}/app`);
      await page.getByRole('button', { name: 'Roll the key' }).click();
      const rolled = (await page.locator('#secret').textContent())?.trim() as string;
      expect(rolled).not.toBe(key);
      const old = await fetch(`${apiUrl}/v1/words/hello.json`, { headers: { apikey: key } });
      expect(old.status).toBe(401);

      // No credential in localStorage; the cookie's flags.
      const storage = (await page.evaluate('JSON.stringify(localStorage)')) as string;
      expect(storage).not.toContain(key);
      expect(storage).not.toContain(rolled);
      const session = (await context.cookies()).find((cookie) => cookie.name === 'portal-session');
      expect(session).toMatchObject({ httpOnly: true, sameSite: 'Lax', path: '/' });

      // 8. Sign out: the session ends and the tab forgets the secret.
      await page.getByRole('button', { name: 'Sign out' }).click();
      await page.locator('#signed-out').waitFor();
      expect(await page.evaluate('sessionStorage.length')).toBe(0);
      expect((await context.cookies()).some((cookie) => cookie.name === 'portal-session')).toBe(false);
      expect(errors.filter((text) => text.includes('Content Security Policy'))).toEqual([]);
      await context.close();
    },
    TIMEOUT_MS,
  );
});
