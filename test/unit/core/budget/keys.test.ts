import { describe, expect, it } from 'vitest';
import { credentialKeys, serviceKeys, serviceSegment } from '../../../../core/budget/keys';
import { credentialIdOf } from '../../../../core/credentials';

const id = credentialIdOf('s1', { kind: 'user_key', userKey: 'k' });
const s1 = serviceKeys('s1');

/** Redis cluster's hash tag: the part between the first `{` and the next `}`. */
function hashTag(key: string): string {
  const open = key.indexOf('{');
  return key.slice(open + 1, key.indexOf('}', open + 1));
}

/** Redis's MATCH for the patterns keys.ts builds: `*` any run, every other character itself. */
function matches(pattern: string, key: string): boolean {
  const source = pattern
    .split('*')
    .map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))
    .join('.*');
  return new RegExp(`^${source}$`).test(key);
}

describe('credential keys', () => {
  it('all share the credential id as hash tag (one slot per credential)', () => {
    const keys = [
      ...Object.values(s1.budget(id)),
      s1.alertMark(id, 'hour:hits:0:80'),
      s1.applicationName(id),
    ];
    expect(keys).toHaveLength(16);
    expect(new Set(keys).size).toBe(16);
    for (const key of keys) expect(hashTag(key)).toBe(id);
  });

  it('start with the service, before the hash tag', () => {
    expect(credentialKeys('2555417735060', id).since).toBe(`am:2555417735060:{${id}}:since`);
    expect(s1.firstCallCounter(1_700_000_000)).toBe('am:s1:{first-calls:1700000000}');
  });

  it("put a second's first-call counters, the address's and the second's, under one hash tag", () => {
    const tag = hashTag(s1.firstCallCounter(1_700_000_000));
    expect(tag).toBe('first-calls:1700000000');
    expect(hashTag(s1.addressCounter(1_700_000_000, 'ab'.repeat(16)))).toBe(tag);
  });

  it('find the credential id back from a since key of the service only', () => {
    const keys = s1.budget(id);
    expect(s1.credentialIdOfSinceKey(keys.since)).toBe(id);
    expect(s1.credentialIdOfSinceKey(keys.pending)).toBeUndefined();
    expect(s1.credentialIdOfSinceKey('am:s1:{zz}:since')).toBeUndefined();
    expect(serviceKeys('s2').credentialIdOfSinceKey(keys.since)).toBeUndefined();
    expect(s1.pattern('since')).toBe('am:s1:{*}:since');
  });

  it('find the credential id back from any key of the service, and from nothing else', () => {
    for (const key of Object.values(s1.budget(id))) expect(s1.credentialIdOfKey(key)).toBe(id);
    expect(s1.credentialIdOfKey(`other:{${id}}:since`)).toBeUndefined();
    expect(s1.credentialIdOfKey(`am:{${id}}:rejected`)).toBeUndefined();
    expect(serviceKeys('s').credentialIdOfKey(s1.budget(id).rejected)).toBeUndefined();
    expect(s1.pattern('rejected')).toBe('am:s1:{*}:rejected');
  });

  it("have SCAN patterns that match no other service's keys, a prefix of its id or one it prefixes", () => {
    const services = ['1', '12', '2555417735060', 's1', 's1-dev', 'my service', 'a*b', 'a{b}', 'a:b', '100%'];
    for (const mine of services) {
      const own = serviceKeys(mine);
      for (const other of services) {
        const theirs = serviceKeys(other).budget(id);
        expect(matches(own.pattern('since'), theirs.since)).toBe(mine === other);
        expect(matches(own.pattern('rejected'), theirs.rejected)).toBe(mine === other);
      }
    }
  });

  it('write a service id with no brace, colon or glob character, and no two ids alike', () => {
    expect(serviceSegment('2555417735060')).toBe('2555417735060');
    expect(serviceSegment('svc-1.dev_2')).toBe('svc-1.dev_2');
    expect(serviceSegment('a{b}:*?[]\\ é')).toBe('a%7Bb%7D%3A%2A%3F%5B%5D%5C%20%C3%A9');
    expect(serviceSegment('a%7B')).not.toBe(serviceSegment('a{'));
    expect(() => serviceSegment('')).toThrow(/service id is required/);
  });
});
