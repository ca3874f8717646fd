import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  HTTP_AUTHORIZER_OVERHEAD_QUERY,
  REST_AUTHORIZER_OVERHEAD_QUERY,
} from '../../../lib/parts/gateway-overhead';

const operations = readFileSync(path.join(__dirname, '../../../docs/operations.md'), 'utf8');

describe("the gateway's overhead queries", () => {
  it('are the ones docs/operations.md gives, each the p50, p90 and p99 per route', () => {
    for (const query of [REST_AUTHORIZER_OVERHEAD_QUERY, HTTP_AUTHORIZER_OVERHEAD_QUERY]) {
      expect(operations).toContain(query);
      expect(query).toMatch(/, 50\).*, 90\).*, 99\).* by /);
    }
    expect(REST_AUTHORIZER_OVERHEAD_QUERY).toMatch(/by httpMethod, resourcePath$/);
    expect(HTTP_AUTHORIZER_OVERHEAD_QUERY).toMatch(/by routeKey$/);
  });
});
