import { lua, type ScriptDefinition } from './lua';

/** Gives a lock back if the token still holds it (a lease, a first call's lock). KEYS: lock. ARGV: token. */
export const RELEASE_SCRIPT: ScriptDefinition = {
  name: 'accessRelease',
  numberOfKeys: 1,
  lua: lua`
if redis.call('GET', KEYS[1]) == ARGV[1] then redis.call('DEL', KEYS[1]) end
return 'ok'
`,
};
