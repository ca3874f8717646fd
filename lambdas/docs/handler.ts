/**
 * The API's interactive documentation, served by the API itself on open methods (no credential):
 * `GET /docs` is a Swagger UI page, `GET /docs/{file}` serves its files from the swagger-ui-dist package
 * (no CDN), a small start script, and `swagger.json`, the generated document. A consumer enters a key in
 * Swagger UI's Authorize dialog and calls the API from the page.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import { type CorsSettings, corsResponseHeaders } from '../../core/settings/cors';

export const DOCUMENT_FILE = 'swagger.json';
const START_SCRIPT_FILE = 'start.js';

/** The folder next to the docs function's bundle that holds the swagger-ui-dist files below. */
export const DOCS_ASSETS_FOLDER = 'swagger-ui';

/** swagger-ui-dist files the page loads, with their content type. */
export const ASSET_TYPES: Readonly<Record<string, string>> = {
  'swagger-ui.css': 'text/css; charset=utf-8',
  'swagger-ui-bundle.js': 'text/javascript; charset=utf-8',
  'favicon-32x32.png': 'image/png',
  'favicon-16x16.png': 'image/png',
};

/**
 * Swagger UI's start: the document next to this script, the plain layout (no top bar that loads other
 * URLs), and no call to the public validator service.
 */
const START_SCRIPT = `window.ui = SwaggerUIBundle({
  url: new URL(${JSON.stringify(DOCUMENT_FILE)}, document.currentScript.src).href,
  dom_id: '#swagger-ui',
  layout: 'BaseLayout',
  deepLinking: false,
  validatorUrl: null,
});
`;

/** Scripts and styles from the page's own folder only; calls may go wherever the document points. */
const CONTENT_SECURITY_POLICY = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  'connect-src *',
  "frame-ancestors 'none'",
  "base-uri 'none'",
  "form-action 'none'",
].join('; ');

export interface DocsSiteOptions {
  /** The Swagger 2.0 document of the API. */
  readonly document: object;
  /** The folder with swagger-ui-dist's files: the package locally, the function bundle's copy in AWS. */
  readonly assetsDir: string;
  /** The API's CORS settings, so a portal on another origin can load the document. */
  readonly cors?: CorsSettings;
}

export type DocsHandler = (event: APIGatewayProxyEvent) => APIGatewayProxyResult;

function escapeHtml(text: string): string {
  return text.replace(
    /[&<>"']/g,
    (char) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[char] as string,
  );
}

/** The page, its links relative to where it was asked for (`/docs` or `/docs/`). */
function page(title: string, path: string): string {
  const folder = path.endsWith('/') ? '' : 'docs/';
  return `<!DOCTYPE html>
<html lang="en">
  <head>
    <meta charset="utf-8">
    <title>${escapeHtml(title)}</title>
    <link rel="stylesheet" href="${folder}swagger-ui.css">
    <link rel="icon" type="image/png" href="${folder}favicon-32x32.png" sizes="32x32">
    <link rel="icon" type="image/png" href="${folder}favicon-16x16.png" sizes="16x16">
  </head>
  <body>
    <div id="swagger-ui"></div>
    <script src="${folder}swagger-ui-bundle.js"></script>
    <script src="${folder}${START_SCRIPT_FILE}"></script>
  </body>
</html>
`;
}

export function createDocsHandler(options: DocsSiteOptions): DocsHandler {
  const documentJson = JSON.stringify(options.document);
  const info = (options.document as { info?: { title?: unknown } }).info;
  const title = `${typeof info?.title === 'string' ? info.title : 'API'}: documentation`;
  const assets = new Map<string, Buffer>();
  const asset = (file: string): Buffer => {
    let content = assets.get(file);
    if (content === undefined) {
      content = readFileSync(join(options.assetsDir, file));
      assets.set(file, content);
    }
    return content;
  };

  return (event) => {
    const headers = {
      ...corsResponseHeaders(options.cors, event.headers),
      'x-content-type-options': 'nosniff',
    };
    const text = (contentType: string, body: string, cacheControl = 'no-cache'): APIGatewayProxyResult => ({
      statusCode: 200,
      headers: { ...headers, 'content-type': contentType, 'cache-control': cacheControl },
      body,
    });
    const file = event.pathParameters?.file;
    if (file === undefined) {
      const result = text('text/html; charset=utf-8', page(title, event.path));
      return {
        ...result,
        headers: { ...result.headers, 'content-security-policy': CONTENT_SECURITY_POLICY },
      };
    }
    if (file === DOCUMENT_FILE) return text('application/json; charset=utf-8', documentJson);
    if (file === START_SCRIPT_FILE) return text('text/javascript; charset=utf-8', START_SCRIPT);
    const contentType = Object.hasOwn(ASSET_TYPES, file) ? ASSET_TYPES[file] : undefined;
    if (contentType === undefined) {
      return {
        statusCode: 404,
        headers: { ...headers, 'content-type': 'application/json' },
        body: JSON.stringify({ message: 'Not Found' }),
      };
    }
    const isText = !contentType.startsWith('image/');
    return {
      ...text(contentType, '', 'public, max-age=3600'),
      body: isText ? asset(file).toString('utf8') : asset(file).toString('base64'),
      isBase64Encoded: !isText,
    };
  };
}
