/**
 * The sweep: finds budgets whose unreported usage is older than its message should have taken (the
 * message was lost, or went to the dead-letter queue) and flushes them. It first adopts the service's
 * budgets an earlier version left under the key layout without the service.
 */

import { accessCacheOf } from '../budget/cache-of-config';
import { serviceKeys } from '../budget/keys';
import { adoptLegacyBudgets } from '../budget/legacy-layout';
import { ensureConnected, REDIS_CONNECT_TIMEOUT_MS } from '../budget/redis-client';
import { sealerOf } from '../credentials/seal';
import { errorMessage, METRIC } from '../observability/observability';
import type { AccessConfig } from '../settings/config';
import type { ReportingDeps, UsageFlusher } from './flush-types';

/** Usage pending longer than this, without its message having arrived, is flushed by the sweep. */
export function sweepMinAgeMs(config: AccessConfig): number {
  return Math.max(3 * config.reportWindowSeconds * 1000, 60_000);
}

/** Credentials one sweep run takes at most (the next run takes the rest). */
export const SWEEP_MAX_CREDENTIALS = 2000;
/** Credentials per report call of the sweep. */
export const SWEEP_BATCH = 500;
/**
 * No new batch starts after this much of a run (real time): a batch can take a report timeout plus
 * a few platform timeouts, and the run must end inside its Lambda timeout, never between the
 * platform's acceptance and the acknowledgement.
 */
export const SWEEP_BUDGET_MS = 25_000;

export interface SweepResult {
  /** Credentials found with usage older than the minimum age. */
  readonly found: number;
  readonly flushed: number;
  /** Usage of credentials the platform refuses, dropped (see FlushResult.discarded). */
  readonly discarded: number;
  readonly failed: number;
  readonly busy: number;
  readonly unreadable: number;
}

/** Finds credentials whose unreported usage is older than `minAgeMs` and flushes them, one report per batch. */
export async function sweepUnreported(
  deps: ReportingDeps,
  flusher: UsageFlusher,
  minAgeMs = sweepMinAgeMs(deps.config),
): Promise<SweepResult> {
  await adoptEarlierLayout(deps);
  const cache = accessCacheOf(deps.redis, deps.config);
  const ids = await cache.unreportedSince(deps.now() - minAgeMs, SWEEP_MAX_CREDENTIALS);
  const totals = { found: ids.length, flushed: 0, discarded: 0, failed: 0, busy: 0, unreadable: 0 };
  const started = performance.now();
  for (let i = 0; i < ids.length && performance.now() - started < SWEEP_BUDGET_MS; i += SWEEP_BATCH) {
    const result = await flusher.flush(ids.slice(i, i + SWEEP_BATCH));
    totals.flushed += result.flushed.length;
    totals.discarded += result.discarded.length;
    totals.failed += result.failed.length;
    totals.busy += result.busy.length;
    totals.unreadable += result.unreadable.length;
  }
  deps.metrics.addMetric(METRIC.sweepFlushed, 'Count', totals.flushed);
  if (totals.found > 0) deps.logger.info('sweep done', totals);
  return totals;
}

/**
 * Clients whose sweep found no budget of the earlier layout: once the upgrade is behind, a process stops
 * paying a second SCAN of the keyspace every run (a new process looks once more).
 */
const earlierLayoutGone = new WeakSet<ReportingDeps['redis']>();

/**
 * Moves the service's budgets an earlier version left under the layout without the service to its names
 * (budget/legacy-layout.ts), so this run reports them. A failure is logged: the next run tries again.
 */
async function adoptEarlierLayout(deps: ReportingDeps): Promise<void> {
  if (earlierLayoutGone.has(deps.redis)) return;
  const sealer = sealerOf(deps.config);
  const owns = (credentialId: string, sealed: string) => {
    try {
      sealer.unseal(credentialId, sealed);
      return true;
    } catch {
      return false;
    }
  };
  try {
    await ensureConnected(deps.redis, REDIS_CONNECT_TIMEOUT_MS);
    const result = await adoptLegacyBudgets(
      deps.redis,
      serviceKeys(deps.config.serviceId),
      owns,
      SWEEP_MAX_CREDENTIALS,
    );
    if (result.found > 0) deps.logger.info('budgets of the earlier key layout adopted', { ...result });
    else earlierLayoutGone.add(deps.redis);
  } catch (error) {
    deps.logger.warn('budgets of the earlier key layout not adopted: the next sweep tries again', {
      error: errorMessage(error),
    });
  }
}
