/**
 * Lambda entry of the webhook receiver. The configuration, the secrets (the provider key, the Redis
 * AUTH token and the webhook token, each read once from Secrets Manager with a deadline) and the clients
 * are built once per container. A start-up failure fails the invocation: API Gateway answers 502, the
 * platform delivers the webhook again, and the next invocation tries again. The refresh runs off the
 * request path, so the platform gets `reportTimeoutMs`, as the reporter's re-checks do.
 */
import { SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import type { APIGatewayProxyEvent } from 'aws-lambda';
import { accessCacheOf } from '../../core/budget/cache-of-config';
import { sealerOf } from '../../core/credentials/seal';
import { redisTokensNotBefore } from '../../core/credentials/token-not-before';
import { ConfigError } from '../../core/settings/config';
import { loadRuntime, oncePerContainer, readSecret } from '../runtime';
import { createWebhookHandler, WEBHOOKS_SERVICE_NAME, type WebhookHandler } from './handler';
import { WEBHOOK_ENV } from './route';

async function webhookToken(env: Readonly<Record<string, string | undefined>>): Promise<string> {
  const secretArn = env[WEBHOOK_ENV.tokenSecretArn];
  if (!secretArn) throw new ConfigError(WEBHOOK_ENV.tokenSecretArn, 'is required by the webhook receiver');
  const secrets = new SecretsManagerClient({ maxAttempts: 2 });
  try {
    return await readSecret(secrets, secretArn, WEBHOOK_ENV.tokenSecretArn);
  } finally {
    secrets.destroy();
  }
}

const receiver = oncePerContainer(async (): Promise<WebhookHandler> => {
  // The token first: a container that cannot read it opens no Redis connection to leave behind.
  const token = await webhookToken(process.env);
  const { config, redis, platform, logger, metrics } = await loadRuntime(
    WEBHOOKS_SERVICE_NAME,
    process.env,
    'reporter',
  );
  if (!redis) throw new ConfigError('redis.host', 'is required by the webhook receiver');
  return createWebhookHandler({
    serviceId: config.serviceId,
    credentialMode: config.credentialMode,
    cache: accessCacheOf(redis, config),
    tokensNotBefore: redisTokensNotBefore(redis, config.serviceId, logger),
    sealer: sealerOf(config),
    platform,
    now: Date.now,
    logger,
    metrics,
    token,
  });
});

export const handler = async (event: APIGatewayProxyEvent) => (await receiver())(event);
