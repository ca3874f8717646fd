/**
 * The interactive documentation's routes and its function's environment: what the constructs (lib/), the
 * local stack and the docs Lambda share, as plain data (no Lambda event types in the package's types).
 */

/** Where the documentation is, under the API's base path. */
export const DOCS_PATH = '/docs';

/** The documentation's methods, as `METHOD /resource` routes of the API. */
export const DOCS_ROUTES: readonly string[] = [`GET ${DOCS_PATH}`, `GET ${DOCS_PATH}/{file}`];

/** Environment of the docs function beyond the access settings. */
export const DOCS_ENV = {
  /** JSON array of the protected routes, `METHOD /resource` each. */
  routes: 'DOCS_ROUTES',
  /** Where the API's paths are reached: `/<stage>` on an execute-api URL. */
  basePath: 'DOCS_BASE_PATH',
  /** `info.version`. */
  version: 'DOCS_VERSION',
} as const;
