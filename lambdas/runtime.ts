/**
 * What a Lambda container builds once: the configuration (validated), the secrets (read from Secrets
 * Manager once), the Redis and platform clients, the logger and the metrics. Both index.ts files use
 * it; the handlers themselves take these as deps.
 */
import type { SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { createLogger, createMetrics } from '../adapters/powertools/observability';
import { createRedisClient, type RedisConnection } from '../core/budget/redis-client';
import type { LogPort, MetricsPort } from '../core/observability/observability';
import { type PlatformCaller, type PlatformClient, platformClientFromConfig } from '../core/platform/client';
import {
  type AccessConfig,
  ConfigError,
  configFromEnv,
  ENV,
  LOCAL_SECRET_ENV,
} from '../core/settings/config';
import { exitCleanlyOnSigterm, processShutdown } from './shutdown';

/** Deadline of one Secrets Manager read, SDK retries included. */
export const SECRET_TIMEOUT_MS = 2000;

export interface Runtime {
  /** The configuration with `platformCredential` filled from the secret when one is configured. */
  readonly config: AccessConfig;
  readonly redis?: RedisConnection;
  readonly platform: PlatformClient;
  readonly logger: LogPort;
  readonly metrics: MetricsPort;
}

export async function readSecret(
  client: SecretsManagerClient,
  secretArn: string,
  setting: string,
): Promise<string> {
  const { GetSecretValueCommand } = await import('@aws-sdk/client-secrets-manager');
  const answer = await client.send(new GetSecretValueCommand({ SecretId: secretArn }), {
    abortSignal: AbortSignal.timeout(SECRET_TIMEOUT_MS),
  });
  if (!answer.SecretString) throw new ConfigError(setting, 'names a secret without a SecretString');
  return answer.SecretString;
}

export async function loadRuntime(
  serviceName: string,
  env: Readonly<Record<string, string | undefined>> = process.env,
  caller: PlatformCaller = 'authorizer',
): Promise<Runtime> {
  const configured = configFromEnv(env);
  const logger = createLogger(serviceName);
  const metrics = createMetrics(serviceName, {
    flushIntervalMs: configured.metricsFlushSeconds * 1000,
    instance: configured.metricsInstance,
  });
  // Lambda signals a shutdown only to a function with an extension (the reporter registers one,
  // shutdown.ts); without one the counts held since the last write are lost with the instance
  // (docs/operations.md).
  processShutdown.add(() => metrics.flush());
  exitCleanlyOnSigterm(logger, env);
  // The reporter names applications in alerts with the admin token; the authorizer reads it only to read
  // the mapping rules from the platform (mappingRulesSource platform).
  const readsAdminToken = caller === 'reporter' || configured.mappingRulesSource === 'platform';
  const adminTokenSecretArn = readsAdminToken ? configured.adminTokenSecretArn : undefined;
  const needsSecrets =
    configured.platformCredentialSecretArn || configured.redis?.authSecretArn || adminTokenSecretArn;
  // Loaded only when a secret is configured, and not at module init (a local run has none).
  const secrets = needsSecrets
    ? new (await import('@aws-sdk/client-secrets-manager')).SecretsManagerClient({ maxAttempts: 2 })
    : undefined;
  try {
    const platformCredential =
      secrets && configured.platformCredentialSecretArn
        ? await readSecret(secrets, configured.platformCredentialSecretArn, ENV.platformCredentialSecretArn)
        : configured.platformCredential;
    if (!platformCredential) {
      throw new ConfigError(
        'platformCredential',
        `is required: set ${ENV.platformCredentialSecretArn} (AWS), or ${LOCAL_SECRET_ENV.providerKey} / ${LOCAL_SECRET_ENV.serviceToken} (local runs)`,
      );
    }
    const redisPassword =
      secrets && configured.redis?.authSecretArn
        ? await readSecret(secrets, configured.redis.authSecretArn, ENV.redisAuthSecretArn)
        : undefined;
    const adminAccessToken =
      secrets && adminTokenSecretArn
        ? await readSecret(secrets, adminTokenSecretArn, ENV.adminTokenSecretArn)
        : configured.adminAccessToken;
    const config: AccessConfig = {
      ...configured,
      platformCredential,
      ...(adminAccessToken !== undefined && { adminAccessToken }),
    };
    return {
      config,
      ...(config.redis && {
        redis: createRedisClient(config.redis, {
          logger,
          ...(redisPassword !== undefined && { password: redisPassword }),
        }),
      }),
      platform: platformClientFromConfig(config, platformCredential, { caller }),
      logger,
      metrics,
    };
  } finally {
    secrets?.destroy();
  }
}

/**
 * Builds a value once per container. A failed build (a secret that could not be read) is forgotten,
 * so the next invocation tries again instead of failing for the container's whole life.
 */
export function oncePerContainer<T>(build: () => Promise<T>): () => Promise<T> {
  let built: Promise<T> | undefined;
  return () => {
    built ??= build().catch((error: unknown) => {
      built = undefined;
      throw error;
    });
    return built;
  };
}
