/**
 * What the access functions' own Redis user may run, where the cache has ACL users (Amazon MemoryDB,
 * whose users always authenticate with a name): the keys of keys.ts only, the data commands the Lua
 * scripts and the sweep run, the scripts themselves, and what the cluster client reads to find the
 * shards. Nothing of the dangerous category (FLUSHALL, KEYS, CONFIG, DEBUG, MIGRATE, ...), no pub/sub.
 * test/integration/cache-user-acl.test.ts runs an authorization and its report as a user with exactly
 * these rules, on a TLS Redis Cluster.
 */
import { KEY_PREFIX } from './keys';

/** The ACL rules, in the syntax of Redis' ACL SETUSER and of a MemoryDB user's access string. */
export const CACHE_USER_RULES: readonly string[] = [
  `~${KEY_PREFIX}:*`,
  '-@all',
  '+@read',
  '+@write',
  '+@scripting',
  '+@connection',
  '-@dangerous',
  // The ready check of every node connection.
  '+info',
  // The cluster client's slot map (ioredis reads CLUSTER SLOTS).
  '+cluster|slots',
  // The scripts read the server's clock (TIME is in neither @read nor @write).
  '+time',
];

/** The access string of an enabled user with those rules (MemoryDB's AccessString). */
export const CACHE_USER_ACCESS_STRING = ['on', ...CACHE_USER_RULES].join(' ');
