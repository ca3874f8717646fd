/** The platform a network round trip away: each request waits `latencyMs` before it is served (the bench sets it). */
import { afterEach, describe, expect, it } from 'vitest';
import { type RunningPlatform, startPlatform } from '../../../local/platform';
import { CONFIG, PROVIDER_KEY, USER_KEY_SERVICE } from './fixture';

const LATENCY_MS = 60;

let platform: RunningPlatform | undefined;
afterEach(async () => {
  await platform?.stop();
  platform = undefined;
});

function authrepUrl(base: string): string {
  const query = new URLSearchParams({
    provider_key: PROVIDER_KEY,
    service_id: USER_KEY_SERVICE,
    user_key: 'demo-key-1',
    'usage[hits]': '1',
  });
  return `${base}/transactions/authrep.xml?${query}`;
}

describe('startPlatform latencyMs', () => {
  it('serves each request no sooner than the latency after it arrives, and serves it as usual', async () => {
    platform = await startPlatform({ config: CONFIG, latencyMs: LATENCY_MS });
    const startedAt = performance.now();
    const response = await fetch(authrepUrl(platform.url), { signal: AbortSignal.timeout(10_000) });
    const elapsedMs = performance.now() - startedAt;
    expect(response.status).toBe(200);
    // A lower bound only: a busy machine makes it later, never sooner (timers may round down by 1 ms).
    expect(elapsedMs).toBeGreaterThanOrEqual(LATENCY_MS - 1);
    expect(platform.stats().authrep).toBe(1);
    expect(platform.usage(USER_KEY_SERVICE, 'app-1', 'hits', 'hour')).toBe(1);
  });

  it.each([-1, 1.5, Number.NaN])('refuses a latency of %s ms at start', async (latencyMs) => {
    await expect(startPlatform({ config: CONFIG, latencyMs })).rejects.toThrow(
      /latencyMs must be a whole number/,
    );
  });
});
