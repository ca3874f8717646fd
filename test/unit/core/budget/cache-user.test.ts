import { describe, expect, it } from 'vitest';
import { CACHE_USER_ACCESS_STRING, CACHE_USER_RULES } from '../../../../core/budget/cache-user';
import { KEY_PREFIX } from '../../../../core/budget/keys';

/** MemoryDB's restricted commands: an access string that grants one is refused (its developer guide). */
const MEMORYDB_RESTRICTED = [
  'acl|deluser',
  'acl|load',
  'acl|save',
  'acl|setuser',
  'bgrewriteaof',
  'bgsave',
  'cluster|addslot',
  'cluster|delslot',
  'cluster|setslot',
  'config',
  'debug',
  'migrate',
  'module',
  'psync',
  'replicaof',
  'save',
  'shutdown',
  'slaveof',
  'sync',
];

describe('the access user of a cache with ACL users', () => {
  it("is a MemoryDB access string: on, no password and no reset in it (MemoryDB's ACL limits)", () => {
    expect(CACHE_USER_ACCESS_STRING.split(' ')[0]).toBe('on');
    expect(CACHE_USER_ACCESS_STRING).not.toMatch(/(^| )[<>#!]/);
    expect(CACHE_USER_RULES).not.toContain('reset');
    expect(CACHE_USER_RULES).not.toContain('nopass');
  });

  it('reaches only the product keys, grants none of the restricted commands, and drops the dangerous ones', () => {
    expect(CACHE_USER_RULES.filter((rule) => rule.startsWith('~'))).toEqual([`~${KEY_PREFIX}:*`]);
    const granted = CACHE_USER_RULES.filter((rule) => rule.startsWith('+')).map((rule) => rule.slice(1));
    expect(granted.filter((command) => MEMORYDB_RESTRICTED.includes(command))).toEqual([]);
    expect(CACHE_USER_RULES.indexOf('-@dangerous')).toBeGreaterThan(CACHE_USER_RULES.indexOf('+@write'));
  });
});
