/** The KMS signer adapter: KMS's DER ECDSA signatures become JWS r || s, and tokens verify with its JWKS. */
import { generateKeyPairSync, sign } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { GetPublicKeyCommand, KMSClient, SignCommand } from '@aws-sdk/client-kms';
import { mockClient } from 'aws-sdk-client-mock';
import { compactVerify, createLocalJWKSet } from 'jose';
import { describe, expect, it } from 'vitest';
import { derToJoseSignature, KMS_TIMEOUT_MS, kmsTokenSigner } from '../../../lambdas/token/signer';

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
    const client = new KMSClient({ region: 'us-east-1' });
    const kms = mockClient(client);
    kms.on(GetPublicKeyCommand).resolves({ PublicKey: publicKey.export({ format: 'der', type: 'spki' }) });
    kms.on(SignCommand).callsFake((input) => ({
      Signature: sign('sha256', input.Message, { key: privateKey, dsaEncoding: 'der' }),
    }));
    const signer = kmsTokenSigner(client, 'alias/tokens');
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

  it('gives up on a KMS that does not answer within its deadline', async () => {
    const silent = createServer(() => undefined);
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = silent.address() as AddressInfo;
      const client = new KMSClient({
        region: 'us-east-1',
        endpoint: `http://127.0.0.1:${port}`,
        credentials: { accessKeyId: 'test', secretAccessKey: 'test' },
        maxAttempts: 1,
      });
      const signer = kmsTokenSigner(client, 'alias/tokens');
      const startedAt = performance.now();
      const outcomes = await Promise.allSettled([signer.sign(Buffer.from('a.b')), signer.publicJwk()]);
      expect(outcomes.map(({ status }) => status)).toEqual(['rejected', 'rejected']);
      expect(performance.now() - startedAt).toBeLessThan(KMS_TIMEOUT_MS + 1000);
    } finally {
      silent.closeAllConnections();
      silent.close();
    }
  });
});
