/**
 * The durable store's promise emulated on a local Redis with replicas: a script's reply is given only
 * once a replica has its writes (`WAIT 1`, in the same round trip), as Amazon MemoryDB answers a write
 * only once its Multi-AZ transaction log has it. A write no replica confirmed within the bound fails,
 * as a write the store did not acknowledge does (the caller then decides without it). Unlike MemoryDB,
 * WAIT cannot take a write back: one that ran on the primary but was not confirmed in time is kept, and
 * its caller, told it failed, may count it again (over, never under).
 */
import type { RedisConnection } from '../../../core/budget/redis-client';

/** How long a write waits for a replica: under the client's command timeout (300 ms). */
export const DURABLE_WAIT_MS = 200;

type PipelineWithScripts = Record<string, (...args: unknown[]) => unknown> & {
  call(...args: (string | number)[]): unknown;
  exec(): Promise<[Error | null, unknown][] | null>;
};

export function durableWrites(client: RedisConnection, scripts: ReadonlySet<string>): RedisConnection {
  return new Proxy(client, {
    get(target, property, receiver) {
      const value = Reflect.get(target, property, receiver);
      if (typeof property !== 'string' || !scripts.has(property) || typeof value !== 'function') return value;
      return async (...args: unknown[]) => {
        // One round trip to the script's node: the script, then WAIT on that node's replicas.
        const pipeline = target.pipeline() as unknown as PipelineWithScripts;
        pipeline[property]?.(...args);
        pipeline.call('WAIT', 1, DURABLE_WAIT_MS);
        const [[error, reply] = [null, undefined], [waitError, replicas] = [null, 0]] =
          (await pipeline.exec()) ?? [];
        if (error) throw error;
        if (waitError) throw waitError;
        if (Number(replicas) < 1) throw new Error('no replica confirmed the write in time');
        return reply;
      };
    },
  });
}
