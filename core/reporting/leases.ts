/**
 * The leases a process took on budgets and could not give back (Redis failed when it tried): kept per
 * Redis client, so every flusher of the process on that client (the SQS reporter, the sweep, a clean
 * stop's flush) may take them over at once instead of waiting out the lease, and give them back at a
 * clean stop. A lease of another process is never taken over: it may be reporting that batch now.
 */
import type { AccessCache } from '../budget/cache';
import type { RedisConnection } from '../budget/redis-client';

export class LeaseBook {
  private readonly held = new Map<string, string>();

  /** The lease this process holds on the budget and could not give back, or ''. */
  heldOn(credentialId: string): string {
    return this.held.get(credentialId) ?? '';
  }

  keep(credentialId: string, lease: string): void {
    if (lease !== '') this.held.set(credentialId, lease);
  }

  /** The lease was taken over or given back. */
  forget(credentialId: string, lease: string): void {
    if (this.held.get(credentialId) === lease) this.held.delete(credentialId);
  }

  /** Gives back every lease still held; those Redis refuses again stay in the book. */
  async releaseAll(cache: Pick<AccessCache, 'release'>): Promise<void> {
    await Promise.allSettled(
      [...this.held].map(async ([credentialId, lease]) => {
        await cache.release(credentialId, lease);
        this.forget(credentialId, lease);
      }),
    );
  }
}

const books = new WeakMap<RedisConnection, LeaseBook>();

/** The process's book of leases taken through this client. */
export function leaseBookOf(redis: RedisConnection): LeaseBook {
  let book = books.get(redis);
  if (!book) {
    book = new LeaseBook();
    books.set(redis, book);
  }
  return book;
}
