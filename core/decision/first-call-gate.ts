/**
 * A bound on the platform calls made for credentials never seen, per second, across every authorizer
 * instance (issue 23): a flood of made-up keys is a flood of first calls, and each would be an `authrep`
 * against the provider's platform, which has rate limits of its own. One Redis counter per second, touched
 * on the first-call path only (a cache hit never reaches it); past the bound such a first call is refused
 * at once (`platform_busy`). A credential with a snapshot never comes here, so known ones are never refused.
 *
 * An instance takes the second's calls from the counter in leases (INCRBY), not one at a time: the first
 * lease of a second is one call, each next one twice the last, up to a sixteenth of the bound. An instance
 * seeing one first call pays one round trip for it; one in a burst of first calls pays about one per
 * lease. Leases never exceed the bound together, so the bound stays exact across instances; the price is
 * that a lease's unused calls are lost with its second, at most as many as the instance used in it.
 *
 * One source address gets a share of each second, addressShareOf(bound) calls (a tenth, at least one),
 * counted exactly across instances in a counter of its own (named by a hash of the address, never the
 * address): a flood of made-up keys from one address spends its share, and the rest of the second is
 * left to new customers elsewhere. A flood from many addresses is the WAF's to stop (docs/operations.md).
 * An instance that saw an address refused in a second refuses its next first calls of that second
 * without asking Redis. A call without a source address meets the whole bound only.
 */
import { createHash } from 'node:crypto';
import { type ServiceKeys, serviceKeys } from '../budget/keys';
import type { RedisConnection } from '../budget/redis-client';

/** The counter of one second; it outlives its second a little, so a late INCRBY never starts it again. */
export function firstCallCounterKey(keys: ServiceKeys, now: number): string {
  return keys.firstCallCounter(Math.floor(now / 1000));
}

/** The counter of one source address in one second. */
export function addressCounterKey(keys: ServiceKeys, now: number, address: string): string {
  const hash = createHash('sha256').update(address).digest('hex').slice(0, 32);
  return keys.addressCounter(Math.floor(now / 1000), hash);
}

const COUNTER_TTL_MS = 2000;

/** One source address's first calls per second: a tenth of the bound, at least one. */
export function addressShareOf(perSecond: number): number {
  return Math.max(1, Math.ceil(perSecond / 10));
}

/** Source addresses whose leases an instance keeps for its latest second: beyond it, Redis is asked each call. */
const ADDRESSES_KEPT = 10_000;

/** The largest lease, as a share of the bound: other instances keep most of the second to lease from. */
const LEASE_SHARE_OF_BOUND = 16;

/** INCRBY of `size`, with the expiry `ttl` set by the call that creates the counter. Returns the new count. */
const LEASE_LUA = `local function lease(key, size, ttl)
  local n = redis.call('INCRBY', key, size)
  if n == size then redis.call('PEXPIRE', key, ttl) end
  return n
end
`;

/** One counter's lease in one round trip. KEYS: the counter. ARGV: the lease, TTL ms. Returns the new count. */
const LEASE_SCRIPT = `${LEASE_LUA}return lease(KEYS[1], tonumber(ARGV[1]), ARGV[2])`;

/**
 * An address's lease and the second's in one round trip (their counters share the second's hash tag).
 * KEYS: the address's counter, the second's. ARGV: the address's lease, its share, the second's lease, TTL
 * ms. Returns both counts; the second's is -1 when the address had no call left (nothing taken of it).
 */
const JOINT_LEASE_SCRIPT = `${LEASE_LUA}local address_lease = tonumber(ARGV[1])
local address_count = lease(KEYS[1], address_lease, ARGV[4])
if address_count - address_lease >= tonumber(ARGV[2]) then return {address_count, -1} end
return {address_count, lease(KEYS[2], tonumber(ARGV[3]), ARGV[4])}`;

/** The calls this instance holds of one counter for one second. */
interface Lease {
  readonly second: number;
  /** Calls leased and not used yet. */
  left: number;
  /** The size of the next lease of this second. */
  next: number;
  /** The counter reached its bound: no more leases this second. */
  closed: boolean;
  /** The lease on its way to Redis (false: Redis failed), which callers that find none left wait for. */
  pending?: Promise<boolean> | undefined;
}

/**
 * Calls of one per-second counter shared by every instance, taken in leases: 1, then twice the last, up
 * to `maxLease`. Leases never add up past `bound`, so the bound holds exactly across instances; what a
 * lease leaves unused is lost with its second (at most what the instance used in it).
 */
class LeasedCounter {
  private lease: Lease = { second: -1, left: 0, next: 1, closed: false };

  constructor(
    private readonly redis: RedisConnection,
    readonly keyOf: (second: number) => string,
    readonly bound: number,
    private readonly maxLease: number,
  ) {}

  /** Takes one call of `second`; a Redis failure lets it through. */
  async take(second: number): Promise<boolean> {
    for (;;) {
      const lease = this.leaseFor(second);
      if (lease.left > 0) {
        lease.left--;
        return true;
      }
      if (lease.closed) return false;
      if (!lease.pending) this.awaitLease(lease, this.count(lease));
      if (!(await lease.pending)) return true;
    }
  }

  /** The lease a call of `second` would have to ask Redis for (none left, none on its way), if any. */
  leaseToAsk(second: number): Lease | undefined {
    const lease = this.leaseFor(second);
    return lease.left === 0 && !lease.closed && !lease.pending ? lease : undefined;
  }

  /**
   * Has the calls of `lease` wait for `count`: the counter once a lease of `lease.next` was taken, or
   * undefined when none was (the calls then ask again), or a rejection when Redis failed (they pass).
   */
  awaitLease(lease: Lease, count: Promise<number | undefined>): void {
    const size = lease.next;
    lease.pending = count
      .then(
        (counted) => {
          if (counted !== undefined) this.grant(lease, size, counted);
          return true;
        },
        () => false,
      )
      .finally(() => {
        lease.pending = undefined;
      });
  }

  /**
   * The lease a call stamped in `second` takes from. Leases only move forward: a call stamped in a second
   * the instance has left counts in the newer one, for handing the instance back to an older second
   * would start its lease again for every such call, and calls of two seconds would do so in turn forever.
   */
  private leaseFor(second: number): Lease {
    if (second > this.lease.second) this.lease = { second, left: 0, next: 1, closed: false };
    return this.lease;
  }

  private async count(lease: Lease): Promise<number> {
    return Number(
      await this.redis.eval(LEASE_SCRIPT, 1, this.keyOf(lease.second), lease.next, COUNTER_TTL_MS),
    );
  }

  private grant(lease: Lease, size: number, count: number): void {
    lease.left += Math.max(0, Math.min(size, this.bound - (count - size)));
    lease.next = Math.min(size * 2, this.maxLease);
    if (count >= this.bound) lease.closed = true;
  }
}

/** The largest lease of a counter whose bound is `bound`: other instances keep most of the second. */
function maxLeaseOf(bound: number): number {
  return Math.max(1, Math.floor(bound / LEASE_SHARE_OF_BOUND));
}

export class FirstCallGate {
  private readonly second: LeasedCounter;
  private readonly perAddress: number;
  /** The counters of the source addresses seen in `addressesSecond`. */
  private addresses = new Map<string, LeasedCounter>();
  private addressesSecond = -1;
  private readonly keys: ServiceKeys;

  constructor(
    private readonly redis: RedisConnection,
    /** The service whose first calls are counted: each service has its own counters and bound. */
    serviceId: string,
    /** Setting `unseenCredentialCallsPerSecond`. */
    perSecond: number,
  ) {
    this.keys = serviceKeys(serviceId);
    this.second = new LeasedCounter(
      redis,
      (second) => firstCallCounterKey(this.keys, second * 1000),
      perSecond,
      maxLeaseOf(perSecond),
    );
    this.perAddress = addressShareOf(perSecond);
  }

  /**
   * Whether a platform call for a credential never seen, from `address` if known, may be made now. A
   * Redis failure lets it through: the bound protects the platform, it must not refuse good first calls.
   */
  async admits(now: number, address?: string): Promise<boolean> {
    const second = Math.floor(now / 1000);
    if (address !== undefined) {
      const counter = this.addressCounter(second, address);
      this.leaseTogether(second, counter);
      if (!(await counter.take(second))) return false;
    }
    return this.second.take(second);
  }

  /**
   * When a call would ask Redis for a lease of both its address and the second (a lone first call), one
   * round trip asks for both. The second's lease is taken only if the address had a call left.
   */
  private leaseTogether(second: number, address: LeasedCounter): void {
    const addressLease = address.leaseToAsk(second);
    const secondLease = addressLease && this.second.leaseToAsk(second);
    if (!addressLease || !secondLease) return;
    const counts = this.redis
      .eval(
        JOINT_LEASE_SCRIPT,
        2,
        address.keyOf(second),
        this.second.keyOf(second),
        addressLease.next,
        address.bound,
        secondLease.next,
        COUNTER_TTL_MS,
      )
      .then((reply) => (reply as [number, number]).map(Number) as [number, number]);
    address.awaitLease(
      addressLease,
      counts.then(([addressCount]) => addressCount),
    );
    this.second.awaitLease(
      secondLease,
      counts.then(([, secondCount]) => (secondCount < 0 ? undefined : secondCount)),
    );
  }

  /**
   * The counter of `address`'s share of the second, leased as the second's own. An instance keeps those of
   * the addresses of its latest second, up to a number: past it, an address is counted a call at a time.
   */
  private addressCounter(second: number, address: string): LeasedCounter {
    if (second > this.addressesSecond) {
      this.addresses = new Map();
      this.addressesSecond = second;
    }
    const known = this.addresses.get(address);
    if (known) return known;
    const kept = this.addresses.size < ADDRESSES_KEPT;
    const counter = new LeasedCounter(
      this.redis,
      (leased) => addressCounterKey(this.keys, leased * 1000, address),
      this.perAddress,
      kept ? maxLeaseOf(this.perAddress) : 1,
    );
    if (kept) this.addresses.set(address, counter);
    return counter;
  }
}
