/**
 * The application id with an optional application key, each in its own header (`app_id`, `app_key`). The
 * key is optional as on the platform: an application may have no keys, and the platform answers
 * "application key is missing" when it has some.
 */
import type { CredentialScheme, PlatformCredential } from './scheme';
import { singleHeaderValue } from './values';

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

export const appIdScheme: CredentialScheme = {
  extract(request, settings) {
    const appId = singleHeaderValue(settings.appIdHeader, request);
    if (!appId.ok) return { ok: false, header: settings.appIdHeader, reason: appId.reason };
    if (appId.value === undefined) return { ok: false, header: settings.appIdHeader, reason: 'missing' };
    const appKey = singleHeaderValue(settings.appKeyHeader, request);
    if (!appKey.ok) return { ok: false, header: settings.appKeyHeader, reason: appKey.reason };
    return {
      ok: true,
      credential: {
        kind: 'app_id',
        appId: appId.value,
        ...(appKey.value !== undefined && { appKey: appKey.value }),
      },
    };
  },
  identitySources: (settings) => [settings.appIdHeader, settings.appKeyHeader],
  hint: (settings) =>
    `send your application id in the ${settings.appIdHeader} header and its key in the ${settings.appKeyHeader} header`,
  exampleHeaders(settings, application) {
    if (!application) {
      return [
        [settings.appIdHeader, '<APP_ID>'],
        [settings.appKeyHeader, '<APP_KEY>'],
      ];
    }
    const appKey = application.appKeys[0];
    return [
      [settings.appIdHeader, application.id],
      ...(appKey !== undefined ? [[settings.appKeyHeader, appKey] as [string, string]] : []),
    ];
  },
};
