import { setTimeout as sleep } from 'node:timers/promises';

const HOUR_MS = 3_600_000;

/**
 * Waits, when the current hour ends within `marginMs`, until the next one has begun. A test on the real
 * clock whose calls must all count in one hour (an hourly limit, the platform's usage of the hour) then
 * never runs across two: calls after the hour rolls over are allowed again and counted in the next hour.
 */
export async function awayFromHourEnd(marginMs: number, now: () => number = Date.now): Promise<void> {
  const left = HOUR_MS - (now() % HOUR_MS);
  if (left < marginMs) await sleep(left + 1_000);
}
