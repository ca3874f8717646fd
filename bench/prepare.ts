/**
 * A workload of one design made ready for measure.ts to measure chunk by chunk: warmed up, its key primed
 * when it measures cache hits, its flood of made-up keys ready when it has one.
 */
import { drive } from './driver';
import { keysOf, type Traffic, traffic } from './fixture';
import { type FloodUnderWay, prepareFlood } from './flood';
import { type KeyPlacement, primaryOfKeys } from './primaries';
import type { WorkloadName, WorkloadResult } from './report';
import type { Caller, RedisUnderTest, System } from './system';
import { platformCallsBetween, platformCallsOf, Tally } from './tally';
import type { Workload, WorkloadSize } from './workloads';

/** A workload of one design, warmed up and its key primed: its calls are measured in one or more chunks. */
export interface Prepared {
  readonly workload: WorkloadName;
  readonly spec: Workload;
  readonly size: WorkloadSize;
  readonly system: System;
  readonly load: Traffic;
  readonly caller: Caller;
  /** On a cluster, the project's keys by the primary that owns them. */
  readonly placement?: KeyPlacement;
  readonly prime?: WorkloadResult['prime'];
  readonly flood?: FloodUnderWay;
  /** Allowed calls of the workload's keys before its measured ones (the priming call). */
  readonly allowedBefore: number;
  /** The start of the priming call: the span the key's report windows cover starts here. */
  readonly spanStart: bigint;
  spanEnd: bigint;
  readonly tally: Tally;
}

/** Warm-up on other keys (JIT, connections, script cache), flushed so none of it is counted; then the priming call. */
export async function prepare(
  redis: RedisUnderTest,
  system: System,
  workload: WorkloadName,
  spec: Workload,
  quick: boolean,
): Promise<Prepared> {
  const size = quick ? spec.quick : spec.full;
  const { design } = system;
  const warmup = traffic(
    keysOf(design, workload, 'warmup', size.warmupKeys),
    size.endpoints,
    size.warmupCalls,
  );
  await drive(await system.caller(warmup), 0, size.warmupCalls, spec.concurrency);
  await system.flush();

  const load = traffic(keysOf(design, workload, 'measured', size.keys), size.endpoints, size.calls);
  const caller = await system.caller(load);
  const placement =
    redis.primaries.length > 1 && design === 'project' ? await primaryOfKeys(redis, load.keys) : undefined;
  const spanStart = process.hrtime.bigint();
  let prime: WorkloadResult['prime'];
  let allowedBefore = 0;
  if (spec.primed) {
    // The key's first call is the cache miss; the cache-hit figures start after it.
    const before = platformCallsOf(system.platform);
    const primed = await drive(caller, 0, 1, 1);
    prime = {
      latencyMs: (primed.latenciesNs[0] as number) / 1e6,
      platformCalls: platformCallsBetween(before, platformCallsOf(system.platform)).total,
    };
    allowedBefore = primed.outcomes.allow ?? 0;
  }
  const flood = spec.unknownKeyFlood && (await prepareFlood(system, workload, spec.unknownKeyFlood, quick));
  return {
    workload,
    spec,
    size,
    system,
    load,
    caller,
    ...(placement && { placement }),
    ...(prime && { prime }),
    ...(flood && { flood }),
    allowedBefore,
    spanStart,
    spanEnd: spanStart,
    tally: new Tally(size.calls),
  };
}
