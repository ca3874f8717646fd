/**
 * Lambda entry of the interactive documentation in AWS. The Swagger 2.0 document is generated once per
 * container from the function's environment: the access settings the construct gives every function
 * (service, credential scheme, mapping rules; never a secret), the protected routes it found at
 * synthesis and the stage's base path. Swagger UI's files ship inside the bundle.
 */
import { join } from 'node:path';
import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import { DOCS_ENV } from '../../contract/docs';
import { parseRoute } from '../../contract/routes';
import { ConfigError, configFromEnv } from '../../core/settings/config';
import { createDocsHandler, DOCS_ASSETS_FOLDER, type DocsHandler } from './handler';
import { DEFAULT_DOCS_VERSION, swaggerDocument } from './swagger';

type Env = Readonly<Record<string, string | undefined>>;

/** The docs handler for an environment; throws ConfigError naming a bad variable. */
export function docsHandlerFromEnv(env: Env, assetsDir: string): DocsHandler {
  let routes: unknown;
  try {
    routes = JSON.parse(env[DOCS_ENV.routes] ?? '[]');
  } catch {
    throw new ConfigError(DOCS_ENV.routes, 'must be a JSON array of "METHOD /resource" routes');
  }
  if (!Array.isArray(routes)) {
    throw new ConfigError(DOCS_ENV.routes, 'must be a JSON array of "METHOD /resource" routes');
  }
  return createDocsHandler({
    document: swaggerDocument({
      basePath: env[DOCS_ENV.basePath] ?? '',
      routes: routes.map((route, i) => parseRoute(route, `${DOCS_ENV.routes}[${i}]`)),
      config: configFromEnv(env),
      settings: { version: env[DOCS_ENV.version] || DEFAULT_DOCS_VERSION },
    }),
    assetsDir,
  });
}

let docs: DocsHandler | undefined;

export const handler = async (event: APIGatewayProxyEvent): Promise<APIGatewayProxyResult> => {
  docs ??= docsHandlerFromEnv(process.env, join(__dirname, DOCS_ASSETS_FOLDER));
  return docs(event);
};
