/** The KMS signer adapter: KMS's DER ECDSA signatures become JWS r || s, and tokens verify with its JWKS. */
import { generateKeyPairSync, sign } from 'node:crypto';
import { GetPublicKeyCommand, KMSClient, SignCommand } from '@aws-sdk/client-kms';
import { mockClient } from 'aws-sdk-client-mock';
import { compactVerify, createLocalJWKSet } from 'jose';
import { afterEach, describe, expect, it } from 'vitest';
import { derToJoseSignature, kmsTokenSigner } from '../../../lambdas/token/signer';

const kms = mockClient(KMSClient);
afterEach(() => kms.reset());

describe('derToJoseSignature', () => {
  it('pads short integers and drops the sign byte of long ones', () => {
    const r = Buffer.alloc(33, 0xff);
    r[0] = 0; // a leading zero keeps a high-bit integer positive
    const s = Buffer.from([0x01, 0x02]);
    const der = Buffer.concat([Buffer.from([0x30, 2 + 33 + 2 + 2, 0x02, 33]), r, Buffer.from([0x02, 2]), s]);
    const raw = derToJoseSignature(der);
    expect(raw.length).toBe(64);
    expect(Buffer.from(raw.subarray(0, 32))).toEqual(Buffer.alloc(32, 0xff));
    expect(Buffer.from(raw.subarray(32))).toEqual(Buffer.concat([Buffer.alloc(30), s]));
  });

  it('refuses what is not a DER ECDSA signature', () => {
    for (const bad of [
      [0x31, 0],
      [0x30, 5, 0x02, 1, 1],
      [0x30, 6, 0x02, 1, 1, 0x03, 1, 1],
    ]) {
      expect(() => derToJoseSignature(Uint8Array.from(bad))).toThrow(/ECDSA signature/);
    }
  });
});

describe('kmsTokenSigner', () => {
  it('signs with KMS (ECDSA_SHA_256, RAW) and publishes the public key once', async () => {
    const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    kms.on(GetPublicKeyCommand).resolves({ PublicKey: publicKey.export({ format: 'der', type: 'spki' }) });
    kms.on(SignCommand).callsFake((input) => ({
      Signature: sign('sha256', input.Message, { key: privateKey, dsaEncoding: 'der' }),
    }));
    const signer = kmsTokenSigner(new KMSClient({ region: 'us-east-1' }), 'alias/tokens');
    const input = 'eyJhbGciOiJFUzI1NiJ9.eyJzdWIiOiJhIn0';
    const signature = await signer.sign(Buffer.from(input));
    const jws = `${input}.${Buffer.from(signature).toString('base64url')}`;
    const jwk = await signer.publicJwk();
    expect(jwk).toMatchObject({ kty: 'EC', crv: 'P-256', alg: 'ES256', use: 'sig', kid: expect.any(String) });
    expect(jwk).not.toHaveProperty('d');
    await expect(compactVerify(jws, createLocalJWKSet({ keys: [jwk] }))).resolves.toBeDefined();
    expect(await signer.keyId()).toBe(jwk.kid);
    expect(kms.commandCalls(GetPublicKeyCommand)).toHaveLength(1);
    expect(kms.commandCalls(SignCommand)[0]?.args[0].input).toMatchObject({
      KeyId: 'alias/tokens',
      MessageType: 'RAW',
      SigningAlgorithm: 'ECDSA_SHA_256',
    });
  });
});
