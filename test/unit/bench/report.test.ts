import { describe, expect, it } from 'vitest';
import { portalLines } from '../../../bench/report';

describe('portalLines', () => {
  it('prints the portal bundle on each Node and each page with its warm p50 and p95', () => {
    const text = portalLines({
      init: [{ node: 'v24.0.0 (this machine)', minifiedBytes: 339_300, initMedianMs: 51.64 }],
      pages: [
        { page: '/portal', calls: 200, p50Ms: 1.634, p95Ms: 3.918 },
        { page: '/portal/docs', calls: 200, p50Ms: 0.2, p95Ms: 0.48 },
      ],
    }).join('\n');
    expect(text).toMatch(/\| lambdas\/portal +\| v24\.0\.0 \(this machine\) +\| 339\.3 KB +\| 51\.6 ms +\|/);
    expect(text).toMatch(/\| \/portal +\| 200 +\| 1\.63 ms +\| 3\.92 ms +\|/);
    expect(text).toMatch(/\| \/portal\/docs +\| 200 +\| 0\.20 ms +\| 0\.48 ms +\|/);
  });
});
