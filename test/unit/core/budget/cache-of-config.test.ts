import { describe, expect, it } from 'vitest';
import { reportLeaseMs } from '../../../../core/budget/cache-of-config';
import { parseConfig } from '../../../../core/settings/config';

describe("a reporter's lease on a budget", () => {
  it('lasts a minute at least, and outlasts three reports and two platform calls when they may take longer', () => {
    expect(
      reportLeaseMs(parseConfig({ serviceId: 's', reportTimeoutMs: 1_000, platformTimeoutMs: 1_000 })),
    ).toBe(60_000);
    expect(
      reportLeaseMs(parseConfig({ serviceId: 's', reportTimeoutMs: 20_000, platformTimeoutMs: 5_000 })),
    ).toBe(70_000);
  });
});
