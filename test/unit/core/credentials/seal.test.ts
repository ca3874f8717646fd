import { describe, expect, it } from 'vitest';
import { createCredentialSealer, sealerOf, UnsealError } from '../../../../core/credentials/seal';
import { ConfigError, parseConfig } from '../../../../core/settings/config';

const id = 'a'.repeat(64);
const other = 'b'.repeat(64);

describe('credential sealing', () => {
  const sealer = createCredentialSealer('pk-provider', 's1');

  it('round-trips both credential kinds', () => {
    for (const credential of [
      { kind: 'user_key', userKey: 'demo-key-1' } as const,
      { kind: 'app_id', appId: 'app', appKey: 'k:e{y}' } as const,
      { kind: 'app_id', appId: 'app' } as const,
    ]) {
      const sealed = sealer.seal(id, credential);
      expect(sealer.unseal(id, sealed)).toEqual(credential);
    }
  });

  it('never shows the credential, and seals it differently each time', () => {
    const first = sealer.seal(id, { kind: 'user_key', userKey: 'demo-key-1' });
    const second = sealer.seal(id, { kind: 'user_key', userKey: 'demo-key-1' });
    expect(first).not.toContain('demo-key-1');
    expect(Buffer.from(first.slice(3), 'base64url').toString('latin1')).not.toContain('demo-key-1');
    expect(first).not.toBe(second);
    expect(first).toMatch(/^v1\.[A-Za-z0-9_-]+$/);
  });

  it('opens only under the same credential id, service and platform secret', () => {
    const sealed = sealer.seal(id, { kind: 'user_key', userKey: 'k' });
    expect(() => sealer.unseal(other, sealed)).toThrow(UnsealError);
    expect(() => createCredentialSealer('pk-other', 's1').unseal(id, sealed)).toThrow(UnsealError);
    expect(() => createCredentialSealer('pk-provider', 's2').unseal(id, sealed)).toThrow(UnsealError);
  });

  it('refuses altered or foreign values', () => {
    const sealed = sealer.seal(id, { kind: 'user_key', userKey: 'k' });
    const bytes = Buffer.from(sealed.slice(3), 'base64url');
    bytes[bytes.length - 1] ^= 1;
    expect(() => sealer.unseal(id, `v1.${bytes.toString('base64url')}`)).toThrow(UnsealError);
    expect(() => sealer.unseal(id, 'v2.abc')).toThrow(/unknown format/);
    expect(() => sealer.unseal(id, 'v1.abc')).toThrow(/too short/);
  });
});

describe("a configuration's sealer", () => {
  it('is keyed by the platform credential and the service, and refused without the credential, naming it', () => {
    const sealed = sealerOf(parseConfig({ serviceId: 's1', platformCredential: 'pk-provider' })).seal(id, {
      kind: 'user_key',
      userKey: 'demo-key-1',
    });
    expect(createCredentialSealer('pk-provider', 's1').unseal(id, sealed)).toEqual({
      kind: 'user_key',
      userKey: 'demo-key-1',
    });
    const without = () => sealerOf(parseConfig({ serviceId: 's1' }));
    expect(without).toThrow(ConfigError);
    expect(without).toThrow(/platformCredential/);
  });
});
