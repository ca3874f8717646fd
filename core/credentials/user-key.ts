/**
 * The user key: one value identifies the application. Consumers send it in a header (`apikey` by
 * default) or, with `credentialLocation: query`, in the `user_key` query parameter (the name the
 * platform's own gateway reads by default).
 */
import type { CredentialScheme, CredentialSettings, PlatformCredential } from './scheme';
import { singleValue } from './values';

export const userKeyPlatformCredential: PlatformCredential<'user_key'> = {
  authParams: (credential) => [['user_key', credential.userKey]],
  reportParams: (credential) => [['user_key', credential.userKey]],
  secrets: (credential) => [credential.userKey],
  idFields: (credential) => [credential.userKey],
  keyFields: () => undefined,
  parse: (value) =>
    typeof value.userKey === 'string' ? { kind: 'user_key', userKey: value.userKey } : undefined,
};

/** The header, or the query parameter, that carries the user key. */
export function userKeyName(settings: CredentialSettings): string {
  return settings.credentialLocation === 'query' ? 'user_key' : settings.credentialHeader;
}

function where(settings: CredentialSettings): string {
  return `the ${userKeyName(settings)} ${settings.credentialLocation === 'query' ? 'query parameter' : 'header'}`;
}

export const userKeyScheme: CredentialScheme = {
  reader(settings) {
    const name = userKeyName(settings);
    return (request) => {
      const userKey = singleValue(settings.credentialLocation, name, request);
      if (!userKey.ok) return { ok: false, header: name, reason: userKey.reason };
      if (userKey.value === undefined) return { ok: false, header: name, reason: 'missing' };
      return { ok: true, credential: { kind: 'user_key', userKey: userKey.value } };
    };
  },
  identitySources: (settings) => [{ location: settings.credentialLocation, name: userKeyName(settings) }],
  hint: (settings) => `send your key in ${where(settings)}`,
  example(settings, application) {
    const pair = [userKeyName(settings), application ? (application.userKey ?? '') : '<USER_KEY>'] as const;
    return settings.credentialLocation === 'query'
      ? { headers: [], query: [pair] }
      : { headers: [pair], query: [] };
  },
};
