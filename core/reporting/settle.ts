/**
 * Marks and settlement, the stages around the report. Before a report goes out each batch it carries
 * is marked `posting`; once the platform answered 202 each is marked `sent` and then acknowledged (its
 * usage leaves Redis, folded into the snapshot's counts until the next resync); a refused one stays in
 * flight for the retry, its lease given back. The sent mark is what a later drain trusts when the
 * acknowledgement never came (the reporter died, or Redis failed over meanwhile): such a batch is
 * acknowledged then, never sent again. Only a reporter that dies between the platform's 202 and the
 * mark (or inside the POST) leaves a batch that is sent again and may count twice (report-batch-scripts.ts).
 *
 * Writes after a 202 are tried again through a Redis failure (a failover takes seconds) for
 * `settleRetryMs`: giving up at once would leave an accepted batch to be sent again once its lease runs
 * out.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { credentialIdPrefix } from '../credentials';
import { errorMessage, METRIC } from '../observability/observability';
import type { DrainedUsage, FlushPorts, Settlement } from './flush-types';
import { count } from './stage-helpers';

/**
 * How long writes after a 202 are tried: longer than a Redis Cluster's failover (a few seconds after
 * the node timeout), and short enough for the reporter's Lambda timeout (60 s) after a sweep's batches.
 */
export const SETTLE_RETRY_MS = 10_000;
const FIRST_RETRY_DELAY_MS = 100;
const MAX_RETRY_DELAY_MS = 1000;

type SettlePorts = Pick<FlushPorts, 'cache' | 'now' | 'logger' | 'metrics' | 'leases' | 'settleRetryMs'>;

/** `work` until it succeeds or `retryMs` has passed (the last failure is thrown). */
async function withRetries<T>(work: () => Promise<T>, retryMs: number): Promise<T> {
  const deadline = performance.now() + retryMs;
  for (let delay = FIRST_RETRY_DELAY_MS; ; delay = Math.min(2 * delay, MAX_RETRY_DELAY_MS)) {
    try {
      return await work();
    } catch (error) {
      if (performance.now() + delay > deadline) throw error;
      await sleep(delay);
    }
  }
}

/**
 * Marks each batch `posting` before its report goes out. A batch whose mark Redis does not take stays
 * out of the report (its lease given back): without the mark, a reporter that died after sending it
 * would leave a batch the next one could not tell from one never sent.
 */
export async function markPosting(
  ports: Pick<SettlePorts, 'cache' | 'logger' | 'leases'>,
  items: readonly DrainedUsage[],
): Promise<{ readonly marked: DrainedUsage[]; readonly unmarked: DrainedUsage[] }> {
  const marked: DrainedUsage[] = [];
  const unmarked: DrainedUsage[] = [];
  await Promise.all(
    items.map(async (item) => {
      try {
        if (await ports.cache.markBatch(item.credentialId, item.batch, 'posting')) {
          marked.push(item);
          return;
        }
      } catch (error) {
        ports.logger.warn('redis failed while marking a batch before its report: it waits for the retry', {
          credential: credentialIdPrefix(item.credentialId),
          error: errorMessage(error),
        });
      }
      unmarked.push(item);
      await releaseLease(ports, item);
    }),
  );
  return { marked, unmarked };
}

async function releaseLease(ports: Pick<SettlePorts, 'cache' | 'leases'>, item: DrainedUsage) {
  await ports.cache
    .release(item.credentialId, item.lease)
    .catch(() => ports.leases.keep(item.credentialId, item.lease));
}

/** The platform has the batch (or will never take it): marked sent, then acknowledged. */
async function acknowledgeBatch(ports: SettlePorts, item: DrainedUsage): Promise<void> {
  const { cache, logger } = ports;
  const credential = credentialIdPrefix(item.credentialId);
  try {
    await withRetries(() => cache.markBatch(item.credentialId, item.batch, 'sent'), ports.settleRetryMs);
  } catch (error) {
    count(ports.metrics, METRIC.batchSentUnmarked);
    ports.leases.keep(item.credentialId, item.lease);
    logger.error('the platform has this batch, but redis took no sent mark: it will be sent again', {
      credential,
      error: errorMessage(error),
    });
    return;
  }
  try {
    await withRetries(
      () => cache.acknowledge(item.credentialId, item.lease, item.batch, ports.now()),
      ports.settleRetryMs,
    );
  } catch (error) {
    ports.leases.keep(item.credentialId, item.lease);
    logger.warn('batch marked sent but not acknowledged: the next drain acknowledges it by its mark', {
      credential,
      error: errorMessage(error),
    });
  }
}

/** A refused batch stays in flight; one the platform counted none of is marked unsent again. */
async function releaseBatch(ports: SettlePorts, item: DrainedUsage, unsent: boolean): Promise<void> {
  if (unsent) await ports.cache.markBatch(item.credentialId, item.batch, 'new').catch(() => undefined);
  await releaseLease(ports, item);
}

/**
 * Settle: acknowledged usage leaves Redis (folded into the snapshot's counts until the next resync);
 * released usage stays in flight for the retry, its lease given back.
 */
export async function settleUsage(
  ports: SettlePorts,
  { acknowledge, release, unsent = [] }: Settlement,
): Promise<void> {
  const countedNothing = new Set(unsent);
  await Promise.all([
    ...acknowledge.map((item) => acknowledgeBatch(ports, item)),
    ...release.map((item) => releaseBatch(ports, item, countedNothing.has(item))),
  ]);
}
