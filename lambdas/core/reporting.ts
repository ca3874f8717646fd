/**
 * Reporting of the usage the authorizer allowed from the cache, shared by the SQS reporter and the
 * sweep: per credential, pending usage moves to in-flight (atomically, under a lease); each
 * credential is authorized (no usage), which resyncs its cached state and snapshot and keeps a
 * credential the platform refuses out of the report; one report call carries every other credential
 * of the batch; what the platform accepted leaves Redis.
 * Nothing leaves Redis before the platform accepted it: a failed report keeps the in-flight usage,
 * which the next attempt sends again unchanged (at-least-once: a reporter that dies between the
 * platform's 202 and the acknowledgement makes the next attempt send that usage a second time).
 */
import { randomUUID } from 'node:crypto';
import { accessCacheOf, sealerOf } from './access';
import type { AccessCache } from './cache';
import type { AccessConfig } from './config';
import { credentialIdPrefix } from './credentials';
import { errorMessage, type LogPort, METRIC, type MetricsPort } from './observability';
import type { Credential, PlatformPort, Transaction, Usage } from './platform/types';
import type { RedisConnection } from './redis-client';
import type { CredentialSealer } from './seal';
import { isCredentialAnswer, stateOf } from './snapshot';

/** Authorize calls of a resync running at once. */
const RESYNC_CONCURRENCY = 16;

export interface ReportingDeps {
  readonly config: AccessConfig;
  readonly redis: RedisConnection;
  readonly platform: PlatformPort;
  readonly now: () => number;
  readonly logger: LogPort;
  readonly metrics: MetricsPort;
}

export interface FlushResult {
  /** Reported (the platform accepted their usage). */
  readonly flushed: readonly string[];
  /** The platform refuses the credential (invalid): its usage can never be reported and left Redis. */
  readonly discarded: readonly string[];
  /** Nothing to report. */
  readonly empty: readonly string[];
  /** Another reporter holds the credential's lease. */
  readonly busy: readonly string[];
  /** Report refused or Redis failed: the usage stays for a retry. */
  readonly failed: readonly string[];
  /** The sealed credential is missing or does not open under our key: the usage stays, an error is logged. */
  readonly unreadable: readonly string[];
}

interface Drained {
  readonly credentialId: string;
  readonly lease: string;
  readonly sealedCredential: string;
  readonly credential: Credential;
  readonly usage: Usage;
  readonly resent: boolean;
}

/**
 * A resent in-flight batch may have pending usage waiting behind it, whose message was already
 * consumed: a second round sends it at once rather than leaving it to the sweep.
 */
const MAX_ROUNDS = 2;

export interface UsageFlusher {
  flush(credentialIds: readonly string[]): Promise<FlushResult>;
}

async function inBatches<T>(items: readonly T[], size: number, each: (item: T) => Promise<void>) {
  for (let i = 0; i < items.length; i += size) await Promise.all(items.slice(i, i + size).map(each));
}

export function createUsageFlusher(deps: ReportingDeps): UsageFlusher {
  const { config, platform, logger, metrics } = deps;
  const cache: AccessCache = accessCacheOf(deps.redis, config);
  const sealer: CredentialSealer = sealerOf(config);
  const count = (name: string, value = 1) => metrics.addMetric(name, 'Count', value);

  async function drainAll(ids: readonly string[]) {
    const ready: Drained[] = [];
    const outcome = {
      empty: [] as string[],
      busy: [] as string[],
      failed: [] as string[],
      unreadable: [] as string[],
    };
    await Promise.all(
      ids.map(async (credentialId) => {
        const lease = randomUUID();
        let drained: Awaited<ReturnType<AccessCache['drain']>>;
        try {
          drained = await cache.drain(credentialId, lease);
        } catch (error) {
          logger.warn('redis failed while taking usage to report', {
            credential: credentialIdPrefix(credentialId),
            error: errorMessage(error),
          });
          outcome.failed.push(credentialId);
          return;
        }
        if (drained.kind === 'empty' || drained.kind === 'busy') {
          outcome[drained.kind].push(credentialId);
          if (drained.kind === 'busy') count(METRIC.flushBusy);
          return;
        }
        if (drained.kind === 'unreadable') {
          unreadable(credentialId, 'no sealed credential is stored');
          outcome.unreadable.push(credentialId);
          return;
        }
        try {
          const credential = sealer.unseal(credentialId, drained.sealedCredential);
          ready.push({
            credentialId,
            lease,
            sealedCredential: drained.sealedCredential,
            credential,
            usage: drained.usage,
            resent: drained.resent,
          });
        } catch (error) {
          await cache.release(credentialId, lease).catch(() => undefined);
          unreadable(credentialId, errorMessage(error));
          outcome.unreadable.push(credentialId);
        }
      }),
    );
    return { ready, ...outcome };
  }

  function unreadable(credentialId: string, why: string) {
    count(METRIC.flushUnreadable);
    logger.error(
      'usage cannot be reported: the credential cannot be read back (was the provider key rotated?)',
      {
        credential: credentialIdPrefix(credentialId),
        why,
      },
    );
  }

  /** The usage leaves Redis (the platform accepted it, or will never take it). */
  async function settle(items: readonly Drained[]) {
    await Promise.all(
      items.map(async (item) => {
        try {
          await cache.acknowledge(item.credentialId, item.lease, deps.now());
        } catch (error) {
          logger.error('settled usage still marked in flight: it will be sent again', {
            credential: credentialIdPrefix(item.credentialId),
            error: errorMessage(error),
          });
        }
      }),
    );
  }

  async function release(items: readonly Drained[]) {
    await Promise.all(
      items.map((item) => cache.release(item.credentialId, item.lease).catch(() => undefined)),
    );
  }

  /**
   * Authorizes each credential (no usage) before its usage is reported, and stores the answer: this is
   * the resync of the cache (suspension, revocation, new period, changed limits), and it keeps out of
   * the report a credential the platform refuses, whose transaction would make the platform drop the
   * whole report (a key let through by failure mode allow during an outage, or revoked since). Its
   * usage cannot ever be reported: it is discarded, loudly.
   */
  async function verify(ready: readonly Drained[]) {
    const verdicts: ('report' | 'discard' | 'unverified')[] = [];
    await inBatches(
      ready.map((item, index) => ({ item, index })),
      RESYNC_CONCURRENCY,
      async ({ item, index }) => {
        count(METRIC.platformCall);
        const answer = await platform.authorize(item.credential);
        if (!isCredentialAnswer(answer)) {
          verdicts[index] = 'unverified';
          const log = answer.kind === 'misconfigured' ? logger.error : logger.warn;
          log.call(logger, 'credential not verified before its report: the usage stays for the retry', {
            credential: credentialIdPrefix(item.credentialId),
            kind: answer.kind,
            detail: answer.message,
          });
          return;
        }
        const state = stateOf(answer);
        try {
          await cache.store({
            credentialId: item.credentialId,
            state,
            sealedCredential: item.sealedCredential,
            ...(answer.kind !== 'invalid_credential' && { status: answer }),
            now: deps.now(),
          });
        } catch (error) {
          count(METRIC.resyncFailed);
          logger.warn('resync not stored', {
            credential: credentialIdPrefix(item.credentialId),
            error: errorMessage(error),
          });
        }
        verdicts[index] = state.kind === 'invalid' ? 'discard' : 'report';
      },
    );
    return {
      reportable: ready.filter((_, index) => verdicts[index] === 'report'),
      discarded: ready.filter((_, index) => verdicts[index] === 'discard'),
      unverified: ready.filter((_, index) => verdicts[index] === 'unverified'),
    };
  }

  async function flushRound(credentialIds: readonly string[], round: number): Promise<FlushResult> {
    const { ready, empty, busy, failed, unreadable: unread } = await drainAll(credentialIds);
    const { reportable, discarded, unverified } = await verify(ready);
    await release(unverified);
    if (discarded.length > 0) {
      count(METRIC.usageDiscarded, discarded.length);
      for (const item of discarded) {
        logger.error('usage discarded: the platform refuses the credential, so it can never be reported', {
          credential: credentialIdPrefix(item.credentialId),
          usage: item.usage,
        });
      }
      await settle(discarded);
    }
    let accepted: Drained[] = [];
    let refused: Drained[] = [];
    if (reportable.length > 0) {
      count(METRIC.platformCall);
      const outcome = await platform.report(
        reportable.map((item): Transaction => ({ credential: item.credential, usage: item.usage })),
      );
      const acceptedCount =
        outcome.kind === 'accepted' ? reportable.length : (outcome.acceptedTransactions ?? 0);
      accepted = reportable.slice(0, acceptedCount);
      refused = reportable.slice(acceptedCount);
      if (outcome.kind !== 'accepted') {
        count(METRIC.reportFailed);
        const log = outcome.kind === 'misconfigured' ? logger.error : logger.warn;
        log.call(logger, 'report refused: the usage stays in flight for the retry', {
          kind: outcome.kind,
          detail: outcome.message,
          accepted: accepted.length,
          refused: refused.length,
        });
        await release(refused);
      }
      count(METRIC.reportedTransactions, accepted.length);
      await settle(accepted);
    }
    const ids = (items: readonly Drained[]) => items.map((item) => item.credentialId);
    const result: FlushResult = {
      flushed: ids(accepted),
      discarded: ids(discarded),
      empty,
      busy,
      failed: [...failed, ...ids(unverified), ...ids(refused)],
      unreadable: unread,
    };
    const resent = ids(accepted.filter((item) => item.resent));
    if (resent.length === 0 || round >= MAX_ROUNDS) return result;
    const next = await flushRound(resent, round + 1);
    const stillWaiting = new Set([...next.failed, ...next.busy, ...next.unreadable]);
    return {
      ...result,
      flushed: result.flushed.filter((id) => !stillWaiting.has(id)),
      busy: [...busy, ...next.busy],
      failed: [...result.failed, ...next.failed],
      unreadable: [...unread, ...next.unreadable],
    };
  }

  return {
    flush: (credentialIds) => flushRound([...new Set(credentialIds)], 1),
  };
}

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
