/**
 * A bound on the platform calls made for credentials never seen, per second, across every authorizer
 * instance (issue 23): a flood of made-up keys is a flood of first calls, and each would be an `authrep`
 * against the provider's platform, which has rate limits of its own. One Redis counter per second, touched
 * on the first-call path only (a cache hit never reaches it); past the bound such a first call is refused
 * at once (`platform_busy`). A credential with a snapshot never comes here, so known ones are never refused.
 */
import { KEY_PREFIX } from './keys';
import type { RedisConnection } from './redis-client';

/** The counter of one second; it outlives its second a little, so a late INCR never starts it again. */
export function firstCallCounterKey(now: number): string {
  return `${KEY_PREFIX}:first-calls:${Math.floor(now / 1000)}`;
}

const COUNTER_TTL_MS = 2000;

/** INCR, with the expiry set by the call that creates the counter: one round trip. */
const COUNT_SCRIPT = `local n = redis.call('INCR', KEYS[1])
if n == 1 then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end
return n`;

export class FirstCallGate {
  constructor(
    private readonly redis: RedisConnection,
    /** Setting `unseenCredentialCallsPerSecond`. */
    private readonly perSecond: number,
  ) {}

  /**
   * Whether a platform call for a credential never seen may be made now; it is counted either way. A
   * Redis failure lets it through: the bound protects the platform, it must not refuse good first calls.
   */
  async admits(now: number): Promise<boolean> {
    try {
      const calls = await this.redis.eval(COUNT_SCRIPT, 1, firstCallCounterKey(now), COUNTER_TTL_MS);
      return Number(calls) <= this.perSecond;
    } catch {
      return true;
    }
  }
}
