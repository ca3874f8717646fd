/**
 * A flood of made-up keys called beside a workload's measured calls (flood-unknown-keys): its keys are
 * used once each, chunk after chunk, and what it made so far is kept for the workload's result.
 */
import { byReason } from './callers';
import { drive } from './driver';
import { keysOf, traffic } from './fixture';
import type { PlatformCalls, WorkloadName } from './report';
import type { Caller, System } from './system';
import { NO_PLATFORM_CALLS } from './tally';
import type { Workload } from './workloads';

/** The made-up keys of a workload's flood, called beside its measured calls: what they made so far. */
export interface FloodUnderWay {
  readonly caller: Caller;
  readonly keys: number;
  readonly callers: number;
  made: number;
  readonly outcomes: Record<string, number>;
  platformCalls: PlatformCalls;
  ranOut: boolean;
  /** When each of its chunks started and ended (epoch ms, the clock the first-call bound counts by). */
  readonly spansMs: Array<readonly [number, number]>;
}

/** The flood of `workload` on `system`, none of its keys called yet. */
export async function prepareFlood(
  system: System,
  workload: WorkloadName,
  flood: NonNullable<Workload['unknownKeyFlood']>,
  quick: boolean,
): Promise<FloodUnderWay> {
  const keys = flood.keys[quick ? 'quick' : 'full'];
  const madeUp = traffic(keysOf(system.design, workload, 'made-up', keys), 1, keys);
  return {
    caller: byReason(await system.caller(madeUp)),
    keys,
    callers: flood.callers,
    made: 0,
    outcomes: {},
    platformCalls: NO_PLATFORM_CALLS,
    ranOut: false,
    spansMs: [],
  };
}

/**
 * Starts the flood's next made-up keys; `stop` ends it once the calls beside it are done. Its platform
 * calls are those of the chunk: the hot key beside it is cached and its reports are held until the flush.
 */
export function floodBeside(flood: FloodUnderWay): { stop(): Promise<void> } {
  const stopping = new AbortController();
  const startMs = Date.now();
  const remaining = flood.keys - flood.made;
  const run =
    remaining > 0 ? drive(flood.caller, flood.made, remaining, flood.callers, stopping.signal) : undefined;
  return {
    async stop() {
      stopping.abort();
      const made = await run;
      flood.spansMs.push([startMs, Date.now()]);
      flood.made += made?.calls ?? 0;
      for (const [outcome, n] of Object.entries(made?.outcomes ?? {})) {
        flood.outcomes[outcome] = (flood.outcomes[outcome] ?? 0) + (n ?? 0);
      }
      // Every key used: the calls beside it may have gone on without a flood.
      flood.ranOut = flood.made >= flood.keys;
    },
  };
}
