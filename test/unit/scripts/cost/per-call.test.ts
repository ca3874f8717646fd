import { describe, expect, it } from 'vitest';
import { LOG_BYTES_PER_CALL, perMillionCalls } from '../../../../scripts/cost/per-call';
import priceList from '../../../../scripts/cost/price-list.json';

describe('perMillionCalls', () => {
  it('adds the CloudWatch Logs the authorizer writes to API Gateway and Lambda, per API type', () => {
    const http = perMillionCalls(priceList, 'http', 'before');
    expect(http.gateway).toBe(1.0);
    expect(http.invocations).toBe(0.2);
    expect(http.compute).toBeCloseTo(0.0667, 4);
    expect(http.logs).toBeCloseTo(((LOG_BYTES_PER_CALL.before * 1e6) / 1024 ** 3) * 0.5, 6);
    expect(http.total).toBeCloseTo(http.gateway + http.invocations + http.compute + http.logs, 9);
    expect(perMillionCalls(priceList, 'rest', 'before').total - http.total).toBeCloseTo(2.5, 9);
  });

  it('prices the logs as written now at a small fraction of before', () => {
    const before = perMillionCalls(priceList, 'http', 'before');
    const now = perMillionCalls(priceList, 'http', 'now');
    expect(now.logs).toBeLessThan(before.logs / 1000);
    expect(before.total - now.total).toBeCloseTo(before.logs - now.logs, 9);
  });
});
