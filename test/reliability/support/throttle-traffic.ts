/**
 * The traffic the throttle tests measure with: a burst of concurrent calls, then calls paced for a few
 * seconds, counted per second from the burst's end. `call` makes one call of the throttled
 * application and says whether it was allowed; anything else (an error, an unexpected status) throws.
 */
import { setTimeout as sleep } from 'node:timers/promises';

export interface ThrottleTraffic {
  /** Calls of the burst allowed. */
  readonly burstAllowed: number;
  /** How long the burst took, from the first call sent to the last answer (ms). */
  readonly burstMs: number;
  /**
   * Calls allowed in each second after the burst's end. The first second also holds what the bucket
   * regained while the burst's answers were still on their way.
   */
  readonly perSecond: readonly number[];
}

export async function measureThrottle(
  call: () => Promise<boolean>,
  options: { readonly burst: number; readonly seconds: number; readonly paceMs: number },
): Promise<ThrottleTraffic> {
  const startedAt = performance.now();
  const burst = await Promise.all(Array.from({ length: options.burst }, () => call()));
  const burstMs = performance.now() - startedAt;
  const perSecond = Array.from({ length: options.seconds }, () => 0);
  const pacedFrom = performance.now();
  const endAt = pacedFrom + options.seconds * 1000;
  const inFlight: Promise<void>[] = [];
  while (performance.now() < endAt) {
    inFlight.push(
      call().then((allowed) => {
        const second = Math.floor((performance.now() - pacedFrom) / 1000);
        if (allowed && second < options.seconds) perSecond[second] = (perSecond[second] ?? 0) + 1;
      }),
    );
    await sleep(options.paceMs);
  }
  await Promise.all(inFlight);
  return { burstAllowed: burst.filter(Boolean).length, burstMs, perSecond };
}

/**
 * The calls a throttle may allow in a burst that took `burstMs`: the burst itself, and one more per
 * emission interval the burst lasted (a loaded machine takes a while to send and answer 200 calls).
 */
export function burstBound(burst: number, rate: number, burstMs: number): number {
  return burst + Math.floor((burstMs * rate) / 1000) + 1;
}
