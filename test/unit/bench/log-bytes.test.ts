import { describe, expect, it } from 'vitest';
import {
  type HotAuthorizer,
  LOGGING_BEFORE,
  LOGGING_NOW,
  measureLogBytes,
  TEXT_FORMAT_PLATFORM_BYTES,
} from '../../../bench/log-bytes';
import { METRIC } from '../../../core/observability/observability';

/** A stand-in for the authorizer's hot path: what it counts per call, published at the invocation's end. */
const hit: HotAuthorizer =
  ({ metrics }) =>
  async () => {
    metrics.addMetric(METRIC.cacheHit, 'Count', 1);
    metrics.addCountPerMetric(METRIC.allowed, 'hits', 1);
    metrics.publishStoredMetrics();
  };

describe('measureLogBytes', () => {
  it("counts the function's EMF lines and Lambda's own lines per invocation, as configured before and now", async () => {
    const before = await measureLogBytes(hit, LOGGING_BEFORE, 100, 'access-authorizer');
    const now = await measureLogBytes(hit, LOGGING_NOW, 100, 'access-authorizer');
    expect(before.platformBytes).toBe(100 * TEXT_FORMAT_PLATFORM_BYTES);
    expect(now.platformBytes).toBe(0);
    // Before: two EMF lines a call; now: the two lines the shutdown writes, for all 100 calls.
    expect(before.functionBytes).toBeGreaterThan(100 * 2 * 150);
    expect(now.functionBytes).toBeGreaterThan(2 * 150);
    expect(now.functionBytes).toBeLessThan(before.functionBytes / 50);
    expect(now.perAuthorization).toBe(now.functionBytes / 100);
  });

  it("states Lambda's text-format lines at their documented size (about 250 bytes an invocation)", () => {
    expect(TEXT_FORMAT_PLATFORM_BYTES).toBeGreaterThan(200);
    expect(TEXT_FORMAT_PLATFORM_BYTES).toBeLessThan(400);
  });
});
