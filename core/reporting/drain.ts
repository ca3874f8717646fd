/**
 * Drain, the reporter's first stage: per budget, pending usage goes in flight as a batch under a new
 * lease (atomically, DRAIN_SCRIPT), and the credential is unsealed. A batch an earlier attempt left in
 * flight is judged by its mark first (report-batch-scripts.ts).
 */
import { randomUUID } from 'node:crypto';
import type { DrainResult } from '../budget/cache-types';
import { credentialIdPrefix } from '../credentials';
import { errorMessage, METRIC } from '../observability/observability';
import type { Credential } from '../platform/types';
import type { Drainage, DrainedUsage, FlushPorts } from './flush-types';
import { count, noteUnreadable } from './stage-helpers';

/** Drain: each credential's pending usage goes in flight under a new lease, and its credential is unsealed. */
export async function drainUsage(
  ports: Pick<FlushPorts, 'cache' | 'sealer' | 'now' | 'logger' | 'metrics' | 'leases'>,
  credentialIds: readonly string[],
): Promise<Drainage> {
  const { cache, sealer, logger, metrics, leases } = ports;
  const ready: DrainedUsage[] = [];
  const idle: DrainedUsage[] = [];
  const outcome = { empty: [] as string[], busy: [] as string[], failed: [] as string[] };
  const unreadable: string[] = [];
  await Promise.all(
    credentialIds.map(async (credentialId) => {
      const lease = randomUUID();
      const held = leases.heldOn(credentialId);
      let drained: DrainResult;
      try {
        drained = await cache.drain(credentialId, lease, { now: ports.now(), heldLease: held });
      } catch (error) {
        logger.warn('redis failed while taking usage to report', {
          credential: credentialIdPrefix(credentialId),
          error: errorMessage(error),
        });
        // The script may have run with its answer lost (a timeout, a cut connection): its lease would
        // keep every retry busy for the lease's whole length. The lease is ours to give back; usage it
        // put in flight stays there and the next drain resends it.
        await cache.release(credentialId, lease).then(
          () => undefined,
          () => leases.keep(credentialId, lease),
        );
        outcome.failed.push(credentialId);
        return;
      }
      if (drained.kind !== 'busy') {
        leases.forget(credentialId, held);
        noteHistory(ports, credentialId, drained);
      }
      if (drained.kind === 'busy') {
        outcome.busy.push(credentialId);
        count(metrics, METRIC.flushBusy);
        return;
      }
      if (drained.kind === 'empty') {
        outcome.empty.push(credentialId);
        const { sealedCredential, refusals } = drained;
        const credential = sealedCredential && unsealedOrNone(ports, credentialId, sealedCredential);
        if (sealedCredential && credential) {
          idle.push({ ...NOTHING_DRAINED, credentialId, sealedCredential, credential, refusals });
        }
        return;
      }
      if (drained.kind === 'unreadable') {
        noteUnreadable(ports, credentialId, 'no sealed credential is stored');
        unreadable.push(credentialId);
        return;
      }
      try {
        const credential = sealer.unseal(credentialId, drained.sealedCredential);
        ready.push({
          credentialId,
          lease,
          batch: drained.batch,
          sealedCredential: drained.sealedCredential,
          credential,
          buckets: drained.buckets,
          usage: drained.usage,
          history: drained.history,
          refusals: drained.refusals,
        });
      } catch (error) {
        await cache.release(credentialId, lease).catch(() => leases.keep(credentialId, lease));
        noteUnreadable(ports, credentialId, errorMessage(error));
        unreadable.push(credentialId);
      }
    }),
  );
  return { ready, idle, ...outcome, unreadable };
}

/** An idle budget's credential, or undefined (said loudly) when it cannot be read back. */
function unsealedOrNone(
  ports: Pick<FlushPorts, 'sealer' | 'logger' | 'metrics'>,
  credentialId: string,
  sealedCredential: string,
): Credential | undefined {
  try {
    return ports.sealer.unseal(credentialId, sealedCredential);
  } catch (error) {
    noteUnreadable(ports, credentialId, errorMessage(error));
    return undefined;
  }
}

/** What an idle budget (a refused call opened its window, nothing to report) is drained with. */
const NOTHING_DRAINED = { lease: '', batch: '', buckets: [], usage: {}, history: 'none' } as const;

/**
 * What the drain found of a batch a dead or failed attempt left: one the platform had (marked sent) was
 * acknowledged without a report; one a report may have carried is sent again, and may count twice.
 */
function noteHistory(
  ports: Pick<FlushPorts, 'logger' | 'metrics'>,
  credentialId: string,
  drained: Exclude<DrainResult, { kind: 'busy' }>,
): void {
  if (drained.settledSent) {
    count(ports.metrics, METRIC.batchSettledByMark);
    ports.logger.info('a batch the platform had accepted was settled by its sent mark, not sent again', {
      credential: credentialIdPrefix(credentialId),
    });
  }
  if (drained.kind === 'ready' && drained.history === 'maybe-sent') {
    const units = Object.values(drained.usage).reduce((sum, value) => sum + value, 0);
    count(ports.metrics, METRIC.batchResentMaybeSent);
    count(ports.metrics, METRIC.unitsResentMaybeSent, units);
    ports.logger.warn(
      'a batch a report may have carried is sent again: the platform may count it twice (a reporter died inside its report, or before marking it sent)',
      { credential: credentialIdPrefix(credentialId), units },
    );
  }
}
