/**
 * The signer port of the token endpoint: it signs a JWT's signing input with the issuer's private key and
 * publishes the public key. Locally the key is generated at start-up (jose); in AWS it is a KMS asymmetric
 * key (ECC_NIST_P256, ECDSA_SHA_256) whose private half never leaves KMS.
 */

import { webcrypto } from 'node:crypto';
import { GetPublicKeyCommand, type KMSClient, SignCommand } from '@aws-sdk/client-kms';
import { calculateJwkThumbprint, exportJWK, generateKeyPair, importSPKI, type JWK } from 'jose';

/** ES256: ECDSA over P-256 with SHA-256, the one algorithm both signers offer. */
export const TOKEN_ALGORITHM = 'ES256';

export interface TokenSigner {
  /** The `kid` of the public key, in the JWKS and in each token's header. */
  keyId(): Promise<string>;
  /** The raw (IEEE P1363, r || s) ES256 signature of the JWS signing input. */
  sign(signingInput: Uint8Array): Promise<Uint8Array>;
  /** The public key as a JWK with its kid, alg and use. */
  publicJwk(): Promise<JWK>;
}

async function publishedJwk(jwk: JWK): Promise<JWK> {
  const { kty, crv, x, y } = jwk;
  const bare = { kty, crv, x, y } as JWK;
  return { ...bare, kid: await calculateJwkThumbprint(bare), alg: TOKEN_ALGORITHM, use: 'sig' };
}

/** A key pair made at start-up: the local stack's issuer (tokens die with the process's key). */
export async function localTokenSigner(): Promise<TokenSigner> {
  const { privateKey, publicKey } = await generateKeyPair(TOKEN_ALGORITHM, { extractable: true });
  const jwk = await publishedJwk(await exportJWK(publicKey));
  return {
    keyId: async () => jwk.kid as string,
    // WebCrypto's ECDSA signature is already r || s.
    sign: async (input) =>
      new Uint8Array(await webcrypto.subtle.sign({ name: 'ECDSA', hash: 'SHA-256' }, privateKey, input)),
    publicJwk: async () => jwk,
  };
}

const P256_COORDINATE_BYTES = 32;

/** One DER INTEGER as an unsigned big-endian number of exactly `size` bytes. */
function derInteger(der: Uint8Array, at: number, size: number): { value: Uint8Array; next: number } {
  if (der[at] !== 0x02) throw new Error('ECDSA signature: INTEGER expected');
  const length = der[at + 1] as number;
  if (length > 0x7f) throw new Error('ECDSA signature: INTEGER too long');
  let bytes = der.subarray(at + 2, at + 2 + length);
  while (bytes.length > size && bytes[0] === 0) bytes = bytes.subarray(1);
  if (bytes.length > size) throw new Error('ECDSA signature: INTEGER out of range');
  const value = new Uint8Array(size);
  value.set(bytes, size - bytes.length);
  return { value, next: at + 2 + length };
}

/**
 * KMS answers an ECDSA signature DER-encoded (SEQUENCE { r INTEGER, s INTEGER }); a JWS carries r || s,
 * each 32 bytes for P-256 (RFC 7518 3.4).
 */
export function derToJoseSignature(der: Uint8Array, size = P256_COORDINATE_BYTES): Uint8Array {
  if (der[0] !== 0x30) throw new Error('ECDSA signature: SEQUENCE expected');
  const sequenceLength = der[1] as number;
  if (sequenceLength > 0x7f || sequenceLength + 2 !== der.length) {
    throw new Error('ECDSA signature: bad SEQUENCE length');
  }
  const r = derInteger(der, 2, size);
  const s = derInteger(der, r.next, size);
  if (s.next !== der.length) throw new Error('ECDSA signature: trailing bytes');
  const raw = new Uint8Array(size * 2);
  raw.set(r.value, 0);
  raw.set(s.value, size);
  return raw;
}

/** Deadline of one KMS call, the SDK's retries included: a token request waits on it. */
export const KMS_TIMEOUT_MS = 1500;

const withinDeadline = () => ({ abortSignal: AbortSignal.timeout(KMS_TIMEOUT_MS) });

/** The KMS key (id, ARN or alias) signs; its public key is read once and cached for the container. */
export function kmsTokenSigner(kms: KMSClient, keyId: string): TokenSigner {
  let jwk: Promise<JWK> | undefined;
  const publicJwk = () => {
    jwk ??= (async () => {
      const answer = await kms.send(new GetPublicKeyCommand({ KeyId: keyId }), withinDeadline());
      if (!answer.PublicKey) throw new Error('KMS GetPublicKey answered no key');
      const pem = `-----BEGIN PUBLIC KEY-----\n${Buffer.from(answer.PublicKey).toString('base64')}\n-----END PUBLIC KEY-----`;
      return publishedJwk(await exportJWK(await importSPKI(pem, TOKEN_ALGORITHM, { extractable: true })));
    })().catch((error: unknown) => {
      jwk = undefined;
      throw error;
    });
    return jwk;
  };
  return {
    keyId: async () => (await publicJwk()).kid as string,
    async sign(input) {
      const answer = await kms.send(
        new SignCommand({
          KeyId: keyId,
          Message: input,
          MessageType: 'RAW',
          SigningAlgorithm: 'ECDSA_SHA_256',
        }),
        withinDeadline(),
      );
      if (!answer.Signature) throw new Error('KMS Sign answered no signature');
      return derToJoseSignature(answer.Signature);
    },
    publicJwk,
  };
}
