import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { authorizerLogBytesPerCall, perMillionCalls } from '../../../../scripts/cost/per-call';

const ROOT = path.join(__dirname, '..', '..', '..', '..');
const read = (file: string) => readFileSync(path.join(ROOT, file), 'utf8');
const dollars = (amount: number) => `$${amount.toFixed(2)}`;

describe('the log bytes of one authorizer call', () => {
  it("are Lambda's lines and one EMF line for the call plus one per platform metric", () => {
    const one = authorizerLogBytesPerCall(['hits']);
    const two = authorizerLogBytesPerCall(['hits', 'search']);
    expect(one).toBeGreaterThan(500);
    expect(one).toBeLessThan(1024);
    expect(two - one).toBeGreaterThan(150);
  });
});

describe('the cost per million calls', () => {
  const bytes = authorizerLogBytesPerCall();
  const http = perMillionCalls('http', bytes);
  const rest = perMillionCalls('rest', bytes);

  it('adds the logs to API Gateway and the Lambda, the same on both API types', () => {
    expect(http.logs).toBe(rest.logs);
    expect(rest.total - http.total).toBeCloseTo(2.5, 10);
    expect(http.total).toBeCloseTo(http.api + http.lambdaRequests + http.lambdaCompute + http.logs, 10);
  });

  it('is what docs/http-api.md, docs/deploy.md and the README say', () => {
    const table = read('docs/http-api.md');
    expect(table).toContain(
      `1M × ${bytes} bytes × $0.50 per GB | ${dollars(http.logs)} | ${dollars(rest.logs)} |`,
    );
    expect(table).toContain(
      `| **Total per million calls** | **${dollars(http.total)}** | **${dollars(rest.total)}** |`,
    );
    expect(read('docs/deploy.md')).toContain(
      `about ${dollars(rest.total)} per million calls on a REST API, and ${dollars(http.total)} on an HTTP API`,
    );
    expect(read('README.md')).toContain(
      `about ${dollars(http.total)} on an HTTP API against ${dollars(rest.total)} on REST`,
    );
  });
});
