/**
 * The application id with an optional application key, each in its own header (`app_id`, `app_key`) or,
 * with `credentialLocation: query`, in the `app_id` and `app_key` query parameters. The key is optional as
 * on the platform: an application may have no keys, and the platform answers "application key is missing"
 * when it has some. So only the app id is an identity source.
 */
import type { CredentialScheme, CredentialSettings, PlatformCredential } from './scheme';
import { singleValue } from './values';

export const appIdPlatformCredential: PlatformCredential<'app_id'> = {
  authParams: (credential) => [
    ['app_id', credential.appId],
    ...(credential.appKey !== undefined ? [['app_key', credential.appKey] as const] : []),
  ],
  // A report names the application only; the platform does not check app keys on reports.
  reportParams: (credential) => [['app_id', credential.appId]],
  secrets: (credential) => [
    credential.appId,
    ...(credential.appKey !== undefined ? [credential.appKey] : []),
  ],
  idFields: (credential) => [credential.appId],
  keyFields: (credential) => [
    credential.appId,
    ...(credential.appKey === undefined ? [] : [credential.appKey]),
  ],
  parse(value) {
    if (typeof value.appId !== 'string') return undefined;
    if (value.appKey !== undefined && typeof value.appKey !== 'string') return undefined;
    return {
      kind: 'app_id',
      appId: value.appId,
      ...(typeof value.appKey === 'string' && { appKey: value.appKey }),
    };
  },
};

/** The names of the app id and app key where they travel: configured headers, or the platform's parameters. */
export function appIdPartNames(settings: CredentialSettings): {
  readonly appId: string;
  readonly appKey: string;
} {
  return settings.credentialLocation === 'query'
    ? { appId: 'app_id', appKey: 'app_key' }
    : { appId: settings.appIdHeader, appKey: settings.appKeyHeader };
}

export const appIdScheme: CredentialScheme = {
  reader(settings) {
    const names = appIdPartNames(settings);
    const location = settings.credentialLocation;
    return (request) => {
      const appId = singleValue(location, names.appId, request);
      if (!appId.ok) return { ok: false, header: names.appId, reason: appId.reason };
      if (appId.value === undefined) return { ok: false, header: names.appId, reason: 'missing' };
      const appKey = singleValue(location, names.appKey, request);
      if (!appKey.ok) return { ok: false, header: names.appKey, reason: appKey.reason };
      return {
        ok: true,
        credential: {
          kind: 'app_id',
          appId: appId.value,
          ...(appKey.value !== undefined && { appKey: appKey.value }),
        },
      };
    };
  },
  identitySources: (settings) => [
    { location: settings.credentialLocation, name: appIdPartNames(settings).appId },
  ],
  hint(settings) {
    const names = appIdPartNames(settings);
    const kind = settings.credentialLocation === 'query' ? 'query parameter' : 'header';
    return `send your application id in the ${names.appId} ${kind} and its key, if it has keys, in the ${names.appKey} ${kind}`;
  },
  example(settings, application) {
    const names = appIdPartNames(settings);
    const appKey = application ? application.appKeys[0] : '<APP_KEY>';
    const pairs = [
      [names.appId, application ? application.id : '<APP_ID>'] as const,
      ...(appKey !== undefined ? [[names.appKey, appKey] as const] : []),
    ];
    return settings.credentialLocation === 'query'
      ? { headers: [], query: pairs }
      : { headers: pairs, query: [] };
  },
};
