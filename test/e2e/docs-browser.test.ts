/**
 * A real browser on the demo stack's documentation: headless Chromium (Debian's `chromium` package, or
 * CHROMIUM_PATH) driven by playwright-core. On `/docs` a consumer authorizes with a demo key, runs "Try it
 * out" on GET /v1/words/{word} with word = hello.json and sees the echo; with a wrong key, the 401 body. A
 * developer portal on another origin calls the app_id API through CORS the same way.
 */
import { mkdtempSync, statSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Browser, type BrowserContext, chromium, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { closeServer, listenOnLoopback } from '../../local/http-server';
import { type LocalStack, startLocalStack } from '../../local/stack';
import { DEMO_STACK_FILE, readStackFile } from '../../local/stack-file';
import { chromiumPath, tryGetWord } from './browser';

const BROWSER_TEST_TIMEOUT_MS = 60_000;

/**
 * Enters credentials in Swagger UI's Authorize dialog, one security definition after the other, replacing
 * any entered before.
 */
async function authorize(page: Page, values: readonly string[]): Promise<void> {
  await page.locator('.auth-wrapper button.authorize').click();
  const definitions = page.locator('.modal-ux .auth-container');
  await expect.poll(() => definitions.count()).toBe(values.length);
  for (const [i, value] of values.entries()) {
    const definition = definitions.nth(i);
    const logout = definition.getByRole('button', { name: 'Remove authorization' });
    if ((await logout.count()) > 0) await logout.click();
    await definition.locator('input').fill(value);
    await definition.getByRole('button', { name: 'Apply credentials' }).click();
  }
  await page.locator('.modal-ux button.btn-done').first().click();
}

/** A developer portal page that shows the document of `docsUrl` with Swagger UI files from `assetsUrl`. */
function portalPage(assetsUrl: string, docsUrl: string): string {
  return `<!DOCTYPE html>
<html lang="en">
  <head><meta charset="utf-8"><title>Developer portal</title><link rel="stylesheet" href="${assetsUrl}/swagger-ui.css"></head>
  <body>
    <h1>Developer portal</h1>
    <div id="swagger-ui"></div>
    <script src="${assetsUrl}/swagger-ui-bundle.js"></script>
    <script>
      SwaggerUIBundle({ url: '${docsUrl}/swagger.json', dom_id: '#swagger-ui', layout: 'BaseLayout', validatorUrl: null });
    </script>
  </body>
</html>`;
}

describe('the documentation in a real browser', () => {
  const screenshots = mkdtempSync(join(tmpdir(), 'docs-browser-'));
  let browser: Browser | undefined;
  let stack: LocalStack | undefined;
  let portal: Server | undefined;
  let portalUrl = '';

  beforeAll(async () => {
    const executablePath = chromiumPath();
    const [launched, started] = await Promise.allSettled([
      // --no-sandbox: CI runs as root, where Chromium's sandbox refuses to start.
      chromium.launch({ executablePath, headless: true, args: ['--no-sandbox', '--disable-dev-shm-usage'] }),
      startLocalStack({ stack: readStackFile(DEMO_STACK_FILE, {}), redis: 'in-memory', sweepIntervalMs: 0 }),
    ]);
    // Keep whatever started, so afterAll stops it when the other failed.
    if (launched.status === 'fulfilled') browser = launched.value;
    if (started.status === 'fulfilled') stack = started.value;
    if (launched.status === 'rejected') throw launched.reason;
    if (started.status === 'rejected') throw started.reason;
    // The same Swagger UI files as /docs, which the browser then has in its cache.
    const page = portalPage(
      started.value.gateways[0]?.docsUrl ?? '',
      started.value.gateways[1]?.docsUrl ?? '',
    );
    portal = createServer((_, response) => {
      response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
      response.end(page);
    });
    portalUrl = `http://127.0.0.1:${await listenOnLoopback(portal, 0)}/`;
  }, BROWSER_TEST_TIMEOUT_MS);

  let context: BrowserContext | undefined;
  const newPage = async (): Promise<Page> => {
    context ??= await (browser as Browser).newContext({ viewport: { width: 1280, height: 1600 } });
    const page = await context.newPage();
    page.setDefaultTimeout(15_000);
    return page;
  };

  /** What the page shows now, as a PNG in the test's temporary folder. */
  const screenshot = async (page: Page, name: string): Promise<void> => {
    const path = join(screenshots, name);
    await page.screenshot({ path });
    expect(statSync(path).size).toBeGreaterThan(20_000);
  };

  afterAll(async () => {
    console.log(`docs-browser screenshots: ${screenshots}`);
    await browser?.close();
    if (portal) await closeServer(portal);
    await stack?.stop();
  });

  it(
    'on /docs, a demo key runs "Try it out" and sees the echo; a wrong key sees the 401 body',
    async () => {
      const page = await newPage();
      await page.goto(stack?.gateways[0]?.docsUrl ?? '');
      await authorize(page, ['demo-key-2']);
      const allowed = await tryGetWord(page, 'hello.json');
      expect(allowed.status).toBe(200);
      expect(JSON.parse(allowed.body)).toMatchObject({
        method: 'GET',
        path: '/v1/words/hello.json',
        pathParameters: { word: 'hello.json' },
        authorizer: { plan: 'Pro', metrics: 'get_word' },
      });

      await authorize(page, ['not-a-demo-key']);
      const refused = await tryGetWord(page, 'hello.json');
      expect(refused.status).toBe(401);
      expect(JSON.parse(refused.body)).toEqual({
        message: 'Missing or invalid credential: send your key in the apikey header',
        reason: 'invalid_credential',
      });
      await screenshot(page, 'docs.png');
    },
    BROWSER_TEST_TIMEOUT_MS,
  );

  it(
    'from a portal on another origin, app id and key reach the /appid API through CORS, and its 401 is readable',
    async () => {
      const page = await newPage();
      await page.goto(portalUrl);
      await authorize(page, ['demo-app-1', 'demo-app-key-1']);
      const allowed = await tryGetWord(page, 'hello.json');
      expect(allowed.status).toBe(200);
      const echo = JSON.parse(allowed.body) as { headers: Record<string, string>; authorizer: object };
      expect(echo.headers.Origin ?? echo.headers.origin).toBe(portalUrl.replace(/\/$/, ''));
      expect(echo.authorizer).toMatchObject({ applicationId: 'demo-app-1' });

      await authorize(page, ['demo-app-1', 'wrong-app-key']);
      const refused = await tryGetWord(page, 'hello.json');
      expect(refused.status).toBe(401);
      expect(JSON.parse(refused.body)).toMatchObject({ reason: 'invalid_credential' });
      await screenshot(page, 'portal.png');
    },
    BROWSER_TEST_TIMEOUT_MS,
  );
});
