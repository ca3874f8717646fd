import { describe, expect, it } from 'vitest';
import {
  alertMarkKey,
  credentialIdOfKey,
  credentialIdOfSinceKey,
  credentialKeys,
  REJECTED_KEY_PATTERN,
  SINCE_KEY_PATTERN,
} from '../../../../core/budget/keys';
import { credentialIdOf } from '../../../../core/credentials';

const id = credentialIdOf('s1', { kind: 'user_key', userKey: 'k' });

/** Redis cluster's hash tag: the part between the first `{` and the next `}`. */
function hashTag(key: string): string {
  const open = key.indexOf('{');
  return key.slice(open + 1, key.indexOf('}', open + 1));
}

describe('credential keys', () => {
  it('all share the credential id as hash tag (one slot per credential)', () => {
    const keys = [...Object.values(credentialKeys(id)), alertMarkKey(id, 'hour:hits:0:80')];
    expect(keys).toHaveLength(15);
    expect(new Set(keys).size).toBe(15);
    for (const key of keys) expect(hashTag(key)).toBe(id);
  });

  it('find the credential id back from a since key only', () => {
    const keys = credentialKeys(id);
    expect(credentialIdOfSinceKey(keys.since)).toBe(id);
    expect(credentialIdOfSinceKey(keys.pending)).toBeUndefined();
    expect(credentialIdOfSinceKey('am:{zz}:since')).toBeUndefined();
    expect(SINCE_KEY_PATTERN).toBe('am:{*}:since');
  });

  it('find the credential id back from any key of the layout, and from nothing else', () => {
    for (const key of Object.values(credentialKeys(id))) expect(credentialIdOfKey(key)).toBe(id);
    expect(credentialIdOfKey(`other:{${id}}:since`)).toBeUndefined();
    expect(REJECTED_KEY_PATTERN).toBe('am:{*}:rejected');
  });
});
