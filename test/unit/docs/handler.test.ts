import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { APIGatewayProxyEvent } from 'aws-lambda';
import { describe, expect, it } from 'vitest';
import { DOCS_ROUTES } from '../../../contract/docs';
import { createDocsHandler } from '../../../lambdas/docs/handler';

const SWAGGER_UI_DIR = dirname(require.resolve('swagger-ui-dist/package.json'));
const DOCUMENT = { swagger: '2.0', info: { title: 'Words <API> & "friends"', version: 'v1' }, paths: {} };

function event(path: string, headers: Record<string, string> = {}): APIGatewayProxyEvent {
  const file = /^\/docs\/(.+)$/.exec(path)?.[1];
  return {
    resource: file === undefined ? '/docs' : '/docs/{file}',
    path,
    httpMethod: 'GET',
    headers,
    multiValueHeaders: {},
    pathParameters: file === undefined ? null : { file },
    queryStringParameters: null,
    multiValueQueryStringParameters: null,
    stageVariables: null,
    body: null,
    isBase64Encoded: false,
    requestContext: {} as APIGatewayProxyEvent['requestContext'],
  };
}

const handler = createDocsHandler({ document: DOCUMENT, assetsDir: SWAGGER_UI_DIR });

describe('the documentation handler', () => {
  it('serves on GET /docs and GET /docs/{file}', () => {
    expect(DOCS_ROUTES).toEqual(['GET /docs', 'GET /docs/{file}']);
  });

  it('serves the Swagger UI page with links that resolve under /docs, whichever way it is asked for', () => {
    const page = handler(event('/docs'));
    expect(page.statusCode).toBe(200);
    expect(page.headers).toMatchObject({
      'content-type': 'text/html; charset=utf-8',
      'x-content-type-options': 'nosniff',
      'content-security-policy': expect.stringContaining("script-src 'self'"),
    });
    expect(page.body).toContain('<script src="docs/swagger-ui-bundle.js"></script>');
    expect(page.body).toContain('<script src="docs/start.js"></script>');
    expect(page.body).toContain('<link rel="stylesheet" href="docs/swagger-ui.css">');
    expect(page.body).toContain('<title>Words &lt;API&gt; &amp; &quot;friends&quot;: documentation</title>');
    expect(page.body).not.toMatch(/https?:\/\//);
    // Asked for as `/docs/`, the page is inside the folder: its links are relative to the folder itself.
    const withSlash = handler(event('/docs/'));
    expect(withSlash.statusCode).toBe(200);
    expect(withSlash.body).toContain('<script src="start.js"></script>');
  });

  it('serves the document, and a start script that loads it from next to itself, without a validator call', () => {
    const document = handler(event('/docs/swagger.json'));
    expect(document.headers).toMatchObject({ 'content-type': 'application/json; charset=utf-8' });
    expect(JSON.parse(document.body)).toEqual(DOCUMENT);
    const start = handler(event('/docs/start.js')).body;
    expect(start).toContain('new URL("swagger.json", document.currentScript.src)');
    expect(start).toContain('validatorUrl: null');
    expect(start).toContain("layout: 'BaseLayout'");
  });

  it('serves swagger-ui-dist files from the package, images base64-encoded, cacheable', () => {
    const bundle = handler(event('/docs/swagger-ui-bundle.js'));
    expect(bundle.headers).toMatchObject({
      'content-type': 'text/javascript; charset=utf-8',
      'cache-control': 'public, max-age=3600',
    });
    expect(bundle.body).toBe(readFileSync(join(SWAGGER_UI_DIR, 'swagger-ui-bundle.js'), 'utf8'));
    const icon = handler(event('/docs/favicon-32x32.png'));
    expect(icon.isBase64Encoded).toBe(true);
    expect(Buffer.from(icon.body, 'base64')).toEqual(readFileSync(join(SWAGGER_UI_DIR, 'favicon-32x32.png')));
  });

  it("answers 404 for any other file, the package's own files included", () => {
    for (const file of ['index.html', 'package.json', '..', 'constructor', 'swagger-initializer.js']) {
      const answer = handler(event(`/docs/${file}`));
      expect(answer.statusCode).toBe(404);
      expect(JSON.parse(answer.body)).toEqual({ message: 'Not Found' });
    }
  });

  it("carries the API's CORS headers, so a portal on another origin can load the document", () => {
    const withCors = createDocsHandler({
      document: DOCUMENT,
      assetsDir: SWAGGER_UI_DIR,
      cors: { allowOrigins: ['https://portal.example.com'] },
    });
    expect(
      withCors(event('/docs/swagger.json', { Origin: 'https://portal.example.com' })).headers,
    ).toMatchObject({
      'access-control-allow-origin': 'https://portal.example.com',
      vary: 'Origin',
    });
    expect(
      withCors(event('/docs/swagger.json', { Origin: 'https://other.example' })).headers?.[
        'access-control-allow-origin'
      ],
    ).toBeUndefined();
    expect(
      handler(event('/docs/swagger.json', { Origin: 'https://portal.example.com' })).headers,
    ).not.toHaveProperty('access-control-allow-origin');
  });
});
