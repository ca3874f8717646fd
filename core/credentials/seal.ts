/**
 * Sealing of the consumer credential kept in Redis. The reporter must send the raw credential to the
 * platform, but Redis must never hold it in clear (invariant 5). So it is stored sealed:
 * AES-256-GCM (node:crypto) under a key derived with HKDF-SHA256 from the provider key or service
 * token, which both Lambdas hold and Redis never sees. The credential id is the additional
 * authenticated data, so a sealed value only opens under the credential it belongs to.
 * Rotating the provider key or service token makes the values sealed before unreadable: flush the
 * pending usage (the sweep) before the rotation.
 */
import { createCipheriv, createDecipheriv, createSecretKey, hkdfSync, randomBytes } from 'node:crypto';
import type { Credential } from '../platform/types';
import { type AccessConfig, ConfigError } from '../settings/config';
import { parseCredential } from './';

const ALGORITHM = 'aes-256-gcm';
const VERSION = 'v1';
const IV_BYTES = 12;
const TAG_BYTES = 16;
const HKDF_SALT = 'apigw-access-management/credential-seal';

export class UnsealError extends Error {
  constructor(problem: string) {
    super(`sealed credential cannot be opened: ${problem}`);
    this.name = 'UnsealError';
  }
}

export interface CredentialSealer {
  seal(credentialId: string, credential: Credential): string;
  /** Throws UnsealError when the value was sealed under another key or credential id, or altered. */
  unseal(credentialId: string, sealed: string): Credential;
}

/** `platformSecret` is the provider key or service token; `serviceId` separates the keys of two services. */
export function createCredentialSealer(platformSecret: string, serviceId: string): CredentialSealer {
  // A key object made once: given raw bytes, Node 24 makes one per cipher (a seal took 27 to 36 µs, 14 to 19
  // with this; an unseal 25 to 35, 7 to 16).
  const key = createSecretKey(
    Buffer.from(hkdfSync('sha256', platformSecret, HKDF_SALT, `${VERSION}:${serviceId}`, 32)),
  );
  return {
    seal(credentialId, credential) {
      const iv = randomBytes(IV_BYTES);
      const cipher = createCipheriv(ALGORITHM, key, iv);
      cipher.setAAD(Buffer.from(credentialId, 'utf8'));
      const body = Buffer.concat([cipher.update(JSON.stringify(credential), 'utf8'), cipher.final()]);
      return `${VERSION}.${Buffer.concat([iv, cipher.getAuthTag(), body]).toString('base64url')}`;
    },
    unseal(credentialId, sealed) {
      const [version, payload] = sealed.split('.');
      if (version !== VERSION || payload === undefined) throw new UnsealError('unknown format');
      const bytes = Buffer.from(payload, 'base64url');
      if (bytes.length <= IV_BYTES + TAG_BYTES) throw new UnsealError('too short');
      const decipher = createDecipheriv(ALGORITHM, key, bytes.subarray(0, IV_BYTES));
      decipher.setAAD(Buffer.from(credentialId, 'utf8'));
      decipher.setAuthTag(bytes.subarray(IV_BYTES, IV_BYTES + TAG_BYTES));
      let plain: string;
      try {
        plain = Buffer.concat([
          decipher.update(bytes.subarray(IV_BYTES + TAG_BYTES)),
          decipher.final(),
        ]).toString('utf8');
      } catch {
        throw new UnsealError('authentication failed (another key, another credential id, or altered)');
      }
      const credential = parseCredential(JSON.parse(plain));
      if (!credential) throw new UnsealError('not a credential');
      return credential;
    },
  };
}

/** The sealer both Lambdas derive from the provider key or service token. */
export function sealerOf(config: AccessConfig): CredentialSealer {
  if (!config.platformCredential) {
    throw new ConfigError(
      'platformCredential',
      'is required with redis: it keys the sealing of cached credentials',
    );
  }
  return createCredentialSealer(config.platformCredential, config.serviceId);
}
