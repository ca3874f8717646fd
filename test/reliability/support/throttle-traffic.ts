/**
 * The traffic the throttle tests measure with: a burst of concurrent calls, then calls paced for a few
 * seconds, counted per second from the burst's end. `call` makes one call of the throttled
 * application and says whether it was allowed; anything else (an error, an unexpected status) throws.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { expect } from 'vitest';
import type { RedisChoice } from '../../../local/redis';
import type { LocalStackOptions } from '../../../local/stack';
import { ROUTES, SERVICE_ID, type ServiceFixture } from './fixture';

/** The throttle under test, on the fixture's plan: 10 a second, 20 at once. */
export const RATE = 10;
export const BURST = 20;
export const CONCURRENT = 200;
/** Paced seconds: the first drains what the bucket regained during the burst, the next 5 are counted. */
export const PACED_SECONDS = 6;

/** A local stack of the fixture's service, its plan throttled at RATE and BURST, on `redis`. */
export function throttledStack(fixture: ServiceFixture, redis: RedisChoice): LocalStackOptions {
  return {
    stack: {
      platform: fixture.platformConfig,
      gateway: {
        serviceId: SERVICE_ID,
        mappingRules: ROUTES,
        routes: ['GET /v1/words/{word}'],
        throttles: { Unlimited: { rate: RATE, burst: BURST } },
      },
    },
    redis,
    sweepIntervalMs: 0,
  };
}

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
 * The throttle held: the burst allowed BURST calls, and one more per emission interval the burst lasted
 * (a loaded machine takes a while to send and answer 200 calls); then RATE a second, ±1, every second
 * after the first.
 */
export function expectThrottled(traffic: ThrottleTraffic): void {
  expect(traffic.burstAllowed).toBeGreaterThanOrEqual(BURST);
  expect(traffic.burstAllowed).toBeLessThanOrEqual(BURST + Math.floor((traffic.burstMs * RATE) / 1000) + 1);
  for (const allowed of traffic.perSecond.slice(1)) {
    expect(allowed).toBeGreaterThanOrEqual(RATE - 1);
    expect(allowed).toBeLessThanOrEqual(RATE + 1);
  }
}
