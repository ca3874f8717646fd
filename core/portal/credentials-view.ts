/**
 * An application's credentials as the developer sees them, by credential mode: the ids (app id, client
 * id) whenever asked, the secrets (user key, app key, client secret) only in the answer that created
 * them; afterwards their fingerprints. A new mode is one more entry.
 */
import type { Credential } from '../platform/types';
import type { CredentialMode } from '../settings/config';
import type { Application } from './admin-xml';

export interface CredentialParts {
  /** Shown always: label and value. */
  readonly ids: readonly (readonly [string, string])[];
  /** Shown once: label and value. */
  readonly secrets: readonly (readonly [string, string])[];
}

/** How a mode's credential is read from an application and given to the platform's authorize. */
interface ModeView {
  readonly parts: (application: Application) => CredentialParts;
  readonly credential: (application: Application) => Credential | undefined;
  /** `replace`: a new key replaces the old at once (a user key is one value); `overlap`: both work a while. */
  readonly roll: 'replace' | 'overlap';
}

const appIdParts =
  (idLabel: string, secretLabel: string) =>
  (application: Application): CredentialParts => ({
    ids: application.applicationId === undefined ? [] : [[idLabel, application.applicationId]],
    secrets: application.keys.map((key) => [secretLabel, key] as const),
  });

const appIdCredential = (application: Application): Credential | undefined =>
  application.applicationId === undefined
    ? undefined
    : {
        kind: 'app_id',
        appId: application.applicationId,
        ...(application.keys[0] !== undefined && { appKey: application.keys[0] }),
      };

export const MODE_VIEWS: Readonly<Record<CredentialMode, ModeView>> = {
  user_key: {
    parts: (application) => ({
      ids: [],
      secrets: application.userKey === undefined ? [] : [['User key', application.userKey]],
    }),
    credential: (application) =>
      application.userKey === undefined ? undefined : { kind: 'user_key', userKey: application.userKey },
    roll: 'replace',
  },
  app_id: { parts: appIdParts('App id', 'App key'), credential: appIdCredential, roll: 'overlap' },
  oauth: { parts: appIdParts('Client id', 'Client secret'), credential: appIdCredential, roll: 'overlap' },
};
