/**
 * The provider key or service token: given (settings or environment variable), or read once from the
 * Secrets Manager secret `platformCredentialSecretArn`. The SDK is loaded only when a secret is named.
 */

import type { AccessConfig } from '../core/settings/config';
import { ConfigError } from '../core/settings/config';

/** Deadline of the one Secrets Manager read, SDK retries included. */
export const SECRET_TIMEOUT_MS = 2000;

export async function platformCredentialOf(config: AccessConfig): Promise<string> {
  if (config.platformCredential !== undefined) return config.platformCredential;
  const secretArn = config.platformCredentialSecretArn;
  if (secretArn === undefined) throw new ConfigError('platformCredential', 'is required');
  const { SecretsManagerClient, GetSecretValueCommand } = await import('@aws-sdk/client-secrets-manager');
  const client = new SecretsManagerClient({ maxAttempts: 2 });
  try {
    const answer = await client.send(new GetSecretValueCommand({ SecretId: secretArn }), {
      abortSignal: AbortSignal.timeout(SECRET_TIMEOUT_MS),
    });
    if (!answer.SecretString) {
      throw new ConfigError('platformCredentialSecretArn', 'names a secret without a SecretString');
    }
    return answer.SecretString;
  } finally {
    client.destroy();
  }
}
