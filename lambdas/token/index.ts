/**
 * Lambda entry of the token function: settings, platform client, Redis and the KMS signer once per
 * container. In AWS the issuer's key is the KMS key named by TOKEN_SIGNING_KEY_ID.
 */
import { KMSClient } from '@aws-sdk/client-kms';
import { createLogger } from '../../adapters/powertools/observability';
import { SERVICE_NAME } from '../../core/observability/metric-names';
import { ConfigError } from '../../core/settings/config';
import { loadRuntime, oncePerContainer } from '../runtime';
import { redisFailedClients, TokenEndpoint } from './endpoint';
import { guessCounterOf } from './guess-limit';
import { createTokenHandler } from './handler';
import { kmsTokenSigner } from './signer';

const serviceName = `${SERVICE_NAME.authorizer}-token`;

const endpoint = oncePerContainer(async () => {
  const runtime = await loadRuntime(serviceName);
  const { config } = runtime;
  if (config.oidcIssuer === undefined)
    throw new ConfigError('oidcIssuer', 'is required by the token function');
  if (config.tokenSigningKeyId === undefined) {
    throw new ConfigError(
      'tokenSigningKeyId',
      'is required by the token function (the KMS key it signs with)',
    );
  }
  if (runtime.redis === undefined)
    throw new ConfigError('redis', 'is required: failed client checks are kept there');
  return new TokenEndpoint({
    config: { ...config, oidcIssuer: config.oidcIssuer },
    platform: runtime.platform,
    signer: kmsTokenSigner(new KMSClient({ maxAttempts: 2 }), config.tokenSigningKeyId),
    failedClients: redisFailedClients(runtime.redis),
    guesses: guessCounterOf(runtime.redis, runtime.logger),
    logger: runtime.logger,
    now: Date.now,
  });
});

export const handler = createTokenHandler(endpoint, createLogger(serviceName));
