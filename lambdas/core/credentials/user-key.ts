/** The user key: one value identifies the application; consumers send it in a header (`apikey` by default). */
import type { CredentialScheme, PlatformCredential } from './scheme';
import { singleHeaderValue } from './values';

export const userKeyPlatformCredential: PlatformCredential<'user_key'> = {
  authParams: (credential) => [['user_key', credential.userKey]],
  reportParams: (credential) => [['user_key', credential.userKey]],
  secrets: (credential) => [credential.userKey],
  idFields: (credential) => [credential.userKey],
  keyFields: () => undefined,
  parse: (value) =>
    typeof value.userKey === 'string' ? { kind: 'user_key', userKey: value.userKey } : undefined,
};

export const userKeyScheme: CredentialScheme = {
  extract(request, settings) {
    const header = settings.credentialHeader;
    const userKey = singleHeaderValue(header, request);
    if (!userKey.ok) return { ok: false, header, reason: userKey.reason };
    if (userKey.value === undefined) return { ok: false, header, reason: 'missing' };
    return { ok: true, credential: { kind: 'user_key', userKey: userKey.value } };
  },
  identitySources: (settings) => [settings.credentialHeader],
  hint: (settings) => `send your key in the ${settings.credentialHeader} header`,
  exampleHeaders: (settings, application) => [
    [settings.credentialHeader, application ? (application.userKey ?? '') : '<USER_KEY>'],
  ],
};
