/**
 * The platform echoes credentials in its messages (`user key "X" is invalid`). Every message the
 * client returns passes through here, so no credential reaches a log or an error.
 */
import { platformCredentialOf } from '../credentials';
import type { Credential, ServiceAuth } from './types';

export const REDACTED = '[redacted]';

// Greedy up to the last quote: a key may itself contain quotes, and each message quotes one value.
const ECHOED_CREDENTIAL =
  /(user key |application key |provider key |service token |application with id=)"[\s\S]*"/gi;

export function credentialSecrets(credential: Credential): string[] {
  return platformCredentialOf(credential).secrets(credential);
}

export function serviceAuthSecret(auth: ServiceAuth): string {
  return auth.kind === 'provider_key' ? auth.providerKey : auth.serviceToken;
}

/** Removes echoed credentials by their phrase, then every occurrence of the secrets that were sent. */
export function redact(message: string, secrets: readonly string[]): string {
  let text = message.replace(ECHOED_CREDENTIAL, `$1"${REDACTED}"`);
  const longestFirst = [...new Set(secrets)]
    .filter((secret) => secret !== '')
    .sort((a, b) => b.length - a.length);
  for (const secret of longestFirst) text = text.split(secret).join(REDACTED);
  return text;
}
