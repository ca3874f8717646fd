/**
 * What the portal tells the access cache when it retires a credential, so the gateway refuses it within
 * a second rather than at the next report window: a replaced user key (the platform's `user_key_updated`
 * webhook names only the new key) or a deleted application is stored as invalid; a deleted app key is
 * forgotten, so its next call asks the platform again.
 */

import { accessCacheOf } from '../budget/cache-of-config';
import type { RedisConnection } from '../budget/redis-client';
import { credentialIdOf, keyIdOf } from '../credentials';
import { sealerOf } from '../credentials/seal';
import type { Credential } from '../platform/types';
import type { AccessConfig } from '../settings/config';

export interface CacheNotice {
  /** The credential no longer exists at the platform. */
  refuse(credential: Credential): Promise<void>;
  /** The application's keys are now these; any other key it had is forgotten. */
  keysKept(appId: string, keys: readonly string[]): Promise<void>;
}

export function accessCacheNotice(
  redis: RedisConnection,
  config: AccessConfig,
  now: () => number,
): CacheNotice {
  const cache = accessCacheOf(redis, config);
  const sealer = sealerOf(config);
  const { serviceId } = config;
  return {
    async refuse(credential) {
      const credentialId = credentialIdOf(serviceId, credential);
      await cache.storeAnswer({
        credentialId,
        keyId: '',
        sealedCredential: sealer.seal(credentialId, credential),
        answer:
          credential.kind === 'user_key'
            ? { kind: 'invalid_credential', code: 'user_key_invalid', message: 'user key is invalid' }
            : {
                kind: 'invalid_credential',
                code: 'application_not_found',
                message: 'application was deleted',
              },
        now: now(),
      });
    },
    async keysKept(appId, keys) {
      const credentialId = credentialIdOf(serviceId, { kind: 'app_id', appId });
      if (!(await cache.hasBudget(credentialId))) return;
      const kept = keys.map((appKey) => keyIdOf(serviceId, { kind: 'app_id', appId, appKey }));
      await cache.forgetKeysExcept(credentialId, kept);
    },
  };
}
