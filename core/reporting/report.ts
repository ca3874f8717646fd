/**
 * Report, the reporter's third stage: one report call carries every verified budget of the batch, a
 * transaction per period bucket with a timestamp inside it, so the platform charges the period the
 * calls happened in; budgets whose re-check got no answer go in a report call of their own
 * (reportUnverified).
 */
import { credentialIdPrefix } from '../credentials';
import { METRIC } from '../observability/observability';
import type { ReportOutcome, Transaction } from '../platform/types';
import type { DrainedUsage, FlushPorts, ReportResult } from './flush-types';
import { count } from './stage-helpers';

/**
 * The platform takes timestamps back to 24 hours before its now; usage older than this (margin for
 * clocks and the report's travel) is reported as of now instead, and said in the log.
 */
const OLDEST_TIMESTAMP_MS = 24 * 60 * 60 * 1000 - 5 * 60 * 1000;

/**
 * Report: one report call for every reportable credential. A failed report may still have been
 * accepted in part (a split report): those credentials count as accepted.
 */
export async function reportUsage(
  ports: Pick<FlushPorts, 'platform' | 'now' | 'logger' | 'metrics'>,
  reportable: readonly DrainedUsage[],
): Promise<ReportResult> {
  const { logger, metrics } = ports;
  if (reportable.length === 0) return { accepted: [], refused: [], unsent: [] };
  const now = ports.now();
  const transactions = reportable.map((item) => transactionsOf(ports, item, now));
  count(metrics, METRIC.platformCall);
  const outcome = await ports.platform.report(transactions.flat());
  const acceptedTransactions =
    outcome.kind === 'accepted' ? Number.POSITIVE_INFINITY : (outcome.acceptedTransactions ?? 0);
  // A budget counts as accepted when all of its transactions were; one cut by a split report is sent
  // again whole (at-least-once).
  let sent = 0;
  const acceptedCount = transactions.findIndex((ofItem) => {
    sent += ofItem.length;
    return sent > acceptedTransactions;
  });
  const accepted = acceptedCount < 0 ? [...reportable] : reportable.slice(0, acceptedCount);
  const refused = reportable.slice(accepted.length);
  if (outcome.kind !== 'accepted') {
    count(metrics, METRIC.reportFailed);
    const log = outcome.kind === 'misconfigured' ? logger.error : logger.warn;
    log.call(logger, 'report refused: the usage stays in flight for the retry', {
      kind: outcome.kind,
      detail: outcome.message,
      accepted: accepted.length,
      refused: refused.length,
    });
  }
  count(metrics, METRIC.reportedTransactions, accepted.length);
  return { accepted, refused, unsent: countedNothing(outcome) ? refused : [] };
}

/**
 * A refusal the platform answered counted nothing of what it refused: a 4xx, a 5xx, a refused
 * connection. A timeout or a cut connection leaves it unknown whether the report was taken.
 */
function countedNothing(outcome: ReportOutcome): boolean {
  return (
    outcome.kind === 'misconfigured' || (outcome.kind === 'unavailable' && UNSENT_CAUSES.has(outcome.cause))
  );
}

const UNSENT_CAUSES: ReadonlySet<string> = new Set(['refused', 'status']);

/**
 * Report of the budgets whose re-check got no answer (a platform slower than the re-check's deadline,
 * or down): a failed re-check never holds the usage back. They go in a report call of their own, so a
 * credential the platform would refuse (and whose transaction would make it drop the whole batch after
 * its 202) can cost only this batch, never the verified one.
 */
export async function reportUnverified(
  ports: Pick<FlushPorts, 'platform' | 'now' | 'logger' | 'metrics'>,
  unverified: readonly DrainedUsage[],
): Promise<ReportResult> {
  const result = await reportUsage(ports, unverified);
  count(ports.metrics, METRIC.reportedUnverified, result.accepted.length);
  return result;
}

/**
 * A transaction per period bucket, timestamped with the bucket's last call: inside the bucket, so in
 * every limited period the calls happened in. Usage older than the platform takes goes as of now.
 */
function transactionsOf(ports: Pick<FlushPorts, 'logger'>, item: DrainedUsage, now: number): Transaction[] {
  return item.buckets.map((bucket) => {
    const at = bucket.lastCallAt ?? bucket.start;
    if (at !== undefined && at < now - OLDEST_TIMESTAMP_MS) {
      ports.logger.warn('usage older than the platform takes timestamps for: reported as of now', {
        credential: credentialIdPrefix(item.credentialId),
        at,
      });
    }
    const timestamp = at !== undefined && at >= now - OLDEST_TIMESTAMP_MS ? Math.min(at, now) : undefined;
    return {
      credential: item.credential,
      usage: bucket.usage,
      ...(timestamp !== undefined && { timestamp }),
    };
  });
}
