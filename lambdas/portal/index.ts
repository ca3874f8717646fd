/**
 * Lambda entry of the developer portal. Built once per container: the access configuration and its
 * secrets (the platform credential, the Redis AUTH token), the portal's `rw` admin token (read once
 * from Secrets Manager with a deadline), from which its cookie-signing key and its account webhook's token
 * are derived (so the portal keeps no secret of its own), the Redis and platform clients, SES, and the
 * Swagger 2.0 document its docs fill in. A start-up failure answers 503 and the next invocation retries.
 */
import { join } from 'node:path';
import { createLogger } from '../../adapters/powertools/observability';
import { SERVICE_NAME } from '../../core/observability/metric-names';
import { AdminClient } from '../../core/portal/admin-client';
import { accessCacheNotice } from '../../core/portal/cache-notice';
import { createPortal, type PortalHandler } from '../../core/portal/portal';
import { signature } from '../../core/portal/secrets';
import { parsePortalSettings } from '../../core/portal/settings';
import { ConfigError, externalIssuer } from '../../core/settings/config';
import { DOCS_ASSETS_FOLDER, type DocsHandler } from '../docs/handler';
import { docsHandlerFromEnv } from '../docs/index';
import { loadRuntime, oncePerContainer, readSecret } from '../runtime';
import { redisGuessCounter } from '../token/guess-limit';
import { DERIVED_KEYS, PORTAL_ENV } from './env';
import { createPortalHandler } from './handler';
import { sesMail } from './ses-mail';

type Env = Readonly<Record<string, string | undefined>>;

async function adminToken(env: Env): Promise<string> {
  const secretArn = env[PORTAL_ENV.adminTokenSecretArn];
  if (!secretArn) throw new ConfigError(PORTAL_ENV.adminTokenSecretArn, 'is required by the portal');
  // Loaded here, not at module init, which every cold start pays.
  const { SecretsManagerClient } = await import('@aws-sdk/client-secrets-manager');
  const secrets = new SecretsManagerClient({ maxAttempts: 2 });
  try {
    return await readSecret(secrets, secretArn, PORTAL_ENV.adminTokenSecretArn);
  } finally {
    secrets.destroy();
  }
}

const portal = oncePerContainer(async (): Promise<PortalHandler> => {
  const env = process.env;
  const token = await adminToken(env);
  const settings = parsePortalSettings(JSON.parse(env[PORTAL_ENV.settings] ?? '{}'), PORTAL_ENV.settings);
  const { config, redis, platform, logger } = await loadRuntime(SERVICE_NAME.portal, env, 'reporter');
  if (!redis) throw new ConfigError('redis.host', 'is required by the portal');
  if (!config.adminApiUrl) throw new ConfigError('adminApiUrl', 'is required by the portal');
  return createPortal({
    settings,
    serviceId: config.serviceId,
    credentialMode: config.credentialMode,
    builtInIssuer: config.credentialMode === 'oauth' && !externalIssuer(config),
    admin: new AdminClient({ url: config.adminApiUrl, accessToken: token }),
    redis,
    counter: redisGuessCounter(redis),
    mail: sesMail(settings.mailFrom),
    signingKey: signature(token, DERIVED_KEYS.signing),
    adminToken: token,
    webhookToken: signature(token, DERIVED_KEYS.webhook),
    usage: (credential) => platform.authorize(credential),
    cache: accessCacheNotice(redis, config, Date.now),
    logger,
    now: Date.now,
  });
});

let docs: DocsHandler | undefined;

export const handler = createPortalHandler({
  portal,
  docs: () => {
    docs ??= docsHandlerFromEnv(process.env, join(__dirname, DOCS_ASSETS_FOLDER));
    return docs;
  },
  logger: createLogger(SERVICE_NAME.portal),
});
