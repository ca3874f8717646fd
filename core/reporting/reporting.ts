/**
 * Reporting of the usage the authorizer allowed from the cache, shared by the SQS reporter and the
 * sweep: a flush runs the stages, each a function of the ports it uses (an in-process flusher may run
 * them on ports of its own):
 * - drainUsage (drain.ts): per budget, pending usage moves in flight as a batch (atomically, under a
 *   lease); a batch an earlier attempt left is judged by its mark first;
 * - refreshIdle, verifyCredentials (verify.ts): each budget is authorized with the usage about to be
 *   reported and resynced from the answer;
 * - markPosting, reportUsage, reportUnverified (settle.ts, report.ts): each batch is marked `posting`,
 *   then one report call carries the verified budgets, another the unverified ones;
 * - settleUsage (settle.ts): what the platform accepted is marked sent, then leaves Redis; the rest
 *   stays in flight, its lease given back.
 * Nothing leaves Redis before the platform accepted it, and a batch marked sent is never sent again: only
 * a reporter that dies inside its POST or between the 202 and the mark leaves a batch that the next
 * attempt sends again (at least once; counted in METRIC.batchResentMaybeSent).
 */
import { accessCacheOf } from '../budget/cache-of-config';
import { sealerOf } from '../credentials/seal';
import { drainUsage } from './drain';
import type { FlushPorts, FlushResult, ReportingDeps, UsageFlusher } from './flush-types';
import { leaseBookOf } from './leases';
import { reportUnverified, reportUsage } from './report';
import { markPosting, SETTLE_RETRY_MS, settleUsage } from './settle';
import { idsOf } from './stage-helpers';
import { refreshIdle, verifyCredentials } from './verify';

/**
 * A resent in-flight batch may have pending usage waiting behind it, whose message was already
 * consumed: a second round sends it at once rather than leaving it to the sweep.
 */
const MAX_ROUNDS = 2;

/** One round: drain, verify (with the resync), report, settle; then the second round for resent batches. */
async function flushRound(
  flushPorts: FlushPorts,
  credentialIds: readonly string[],
  round: number,
): Promise<FlushResult> {
  const retry = new Set<string>();
  const ports: FlushPorts = {
    ...flushPorts,
    onResynced: async (resynced) => {
      const verdict = await flushPorts.onResynced(resynced);
      if (verdict === 'retry') retry.add(resynced.credentialId);
      return verdict;
    },
  };
  const { ready, idle, empty, busy, failed, unreadable } = await drainUsage(ports, credentialIds);
  await refreshIdle(ports, idle);
  const { reportable, discarded, rejected, unverified } = await verifyCredentials(ports, ready);
  await settleUsage(ports, { acknowledge: [...discarded, ...rejected], release: [] });
  const toVerified = await markPosting(ports, reportable);
  const toUnverified = await markPosting(ports, unverified);
  const verified = await reportUsage(ports, toVerified.marked);
  const unchecked = await reportUnverified(ports, toUnverified.marked);
  const accepted = [...verified.accepted, ...unchecked.accepted];
  const refused = [...verified.refused, ...unchecked.refused];
  await settleUsage(ports, {
    acknowledge: accepted,
    release: refused,
    unsent: [...verified.unsent, ...unchecked.unsent],
  });
  const result: FlushResult = {
    flushed: idsOf(accepted),
    unverified: idsOf(unchecked.accepted),
    discarded: idsOf(discarded),
    rejected: idsOf(rejected),
    empty,
    busy,
    failed: [...failed, ...idsOf(refused), ...idsOf(toVerified.unmarked), ...idsOf(toUnverified.unmarked)],
    unreadable,
    retry: [...retry],
  };
  const resent = idsOf(accepted.filter((item) => item.history !== 'none'));
  if (resent.length === 0 || round >= MAX_ROUNDS) return result;
  return withNextRound(result, await flushRound(ports, resent, round + 1));
}

/** A credential of the first round counts as flushed only if the usage waiting behind it was flushed too. */
function withNextRound(result: FlushResult, next: FlushResult): FlushResult {
  const stillWaiting = new Set([...next.failed, ...next.busy, ...next.unreadable]);
  return {
    ...result,
    flushed: result.flushed.filter((id) => !stillWaiting.has(id)),
    busy: [...result.busy, ...next.busy],
    failed: [...result.failed, ...next.failed],
    unreadable: [...result.unreadable, ...next.unreadable],
    retry: [...new Set([...result.retry, ...next.retry])],
  };
}

/** The ports of a flush for a configuration. */
function flushPortsOf(deps: ReportingDeps): FlushPorts {
  return {
    serviceId: deps.config.serviceId,
    cache: accessCacheOf(deps.redis, deps.config),
    sealer: sealerOf(deps.config),
    platform: deps.platform,
    now: deps.now,
    logger: deps.logger,
    metrics: deps.metrics,
    onResynced: deps.onResynced ?? (() => undefined),
    leases: leaseBookOf(deps.redis),
    settleRetryMs: deps.settleRetryMs ?? SETTLE_RETRY_MS,
  };
}

export function createUsageFlusher(deps: ReportingDeps): UsageFlusher {
  return flusherOf(flushPortsOf(deps));
}

/** A flusher on its ports (an in-process flusher brings its own: a plugin, a test's faults). */
export function flusherOf(ports: FlushPorts): UsageFlusher {
  const running = new Set<Promise<FlushResult>>();
  return {
    flush(credentialIds) {
      const flushing = flushRound(ports, [...new Set(credentialIds)], 1);
      running.add(flushing);
      return flushing.finally(() => running.delete(flushing));
    },
    async close() {
      await Promise.allSettled([...running]);
      await ports.leases.releaseAll(ports.cache);
    },
  };
}
