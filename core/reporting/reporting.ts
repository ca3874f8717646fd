/**
 * Reporting of the usage the authorizer allowed from the cache, shared by the SQS reporter and the
 * sweep, in stages that each take the ports they use:
 * - drainUsage: per budget, pending usage moves in flight (atomically, under a lease);
 * - verifyCredentials: each budget is authorized with the usage about to be reported, so whatever the
 *   platform would refuse shows before the report (one refused transaction makes the platform drop the
 *   whole report, after answering 202); resyncCredential stores the answer (state and snapshot) and
 *   shows it to the `onResynced` observer; a credential the platform refuses is kept out of the report,
 *   and usage of a metric it does not have is kept aside (never reported, never dropped);
 * - reportUsage: one report call carries every other budget of the batch, a transaction per period
 *   bucket with a timestamp inside it, so the platform charges the period the calls happened in;
 *   budgets whose re-check got no answer go in a report call of their own (reportUnverified);
 * - settleUsage: what the platform accepted (or will never take) leaves Redis; the rest stays in
 *   flight, its lease given back.
 * Nothing leaves Redis before the platform accepted it: a failed report keeps the in-flight usage,
 * which the next attempt sends again unchanged (at-least-once: a reporter that dies between the
 * platform's 202 and the acknowledgement makes the next attempt send that usage a second time).
 */
import { randomUUID } from 'node:crypto';
import type { AccessCache, LimitRefusal, UsageBucket } from '../budget/cache';
import type { RedisConnection } from '../budget/redis-client';
import {
  type CredentialAnswer,
  type CredentialState,
  isCredentialAnswer,
  isKeyRefusal,
  stateOf,
} from '../budget/snapshot';
import { credentialIdPrefix, keyIdOf } from '../credentials';
import type { CredentialSealer } from '../credentials/seal';
import { accessCacheOf, sealerOf } from '../decision/access';
import { errorMessage, type LogPort, METRIC, type MetricsPort } from '../observability/observability';
import type {
  AuthOutcome,
  AuthorizationStatus,
  Credential,
  PlatformPort,
  Transaction,
  Usage,
} from '../platform/types';
import type { AccessConfig } from '../settings/config';

/** Authorize calls of a resync running at once. */
const RESYNC_CONCURRENCY = 16;
/** Other valid keys of an application tried when the one its budget keeps was revoked. */
const MAX_KEYS_TRIED = 3;
/**
 * The platform takes timestamps back to 24 hours before its now; usage older than this (margin for
 * clocks and the report's travel) is reported as of now instead, and said in the log.
 */
const OLDEST_TIMESTAMP_MS = 24 * 60 * 60 * 1000 - 5 * 60 * 1000;

/**
 * A credential's usage fresh from its resync, for an observer such as usage alerts. Per limited
 * metric and period, the application has used the report's `currentValue` (the platform's count)
 * plus `inFlight` rolled up the hierarchy (a metric's usage counts for its ancestors, as the
 * platform adds it): the platform counts `inFlight` once this flush reports it. Usage allowed since
 * the drain is still pending in Redis and comes with the next flush.
 */
export interface ResyncedUsage {
  readonly credentialId: string;
  /** The state the answer gives the credential: active, or denied (suspended...). */
  readonly state: Exclude<CredentialState, { kind: 'invalid' }>;
  /** The platform's answer: plan, usage reports (period, period end, max, current), metric hierarchy. */
  readonly status: AuthorizationStatus;
  /** The usage this flush takes to the platform. */
  readonly inFlight: Usage;
  /** The same per period bucket, so an observer counts only the buckets of a limit's period. */
  readonly inFlightBuckets: readonly UsageBucket[];
  /** The app id when the credential names its application (app_id mode); user keys do not. */
  readonly applicationId?: string;
  /** User_key mode: the key, for an observer to name the application by (never logged or published). */
  readonly userKey?: string;
  /** Limits refused calls hit since the last flush: each counts as reaching 100 %. */
  readonly refusals: readonly LimitRefusal[];
  /** The business clock when the answer came. */
  readonly now: number;
}

/**
 * Called once per resynced credential the platform knows; a failure is logged and changes no flush.
 * `retry` says the observer still owes something for the credential (an alert it could not publish):
 * the flush lists the credential in `retry`, so its report message comes again.
 */
export type ResyncObserver = (resynced: ResyncedUsage) => Promise<ObserverVerdict> | ObserverVerdict;
export type ObserverVerdict = 'retry' | undefined;

export interface ReportingDeps {
  readonly config: AccessConfig;
  readonly redis: RedisConnection;
  readonly platform: PlatformPort;
  readonly now: () => number;
  readonly logger: LogPort;
  readonly metrics: MetricsPort;
  /** Default: none. */
  readonly onResynced?: ResyncObserver;
}

export interface FlushResult {
  /** Reported (the platform accepted their usage). */
  readonly flushed: readonly string[];
  /** Of `flushed`: reported although the re-check before the report got no answer from the platform. */
  readonly unverified: readonly string[];
  /** The platform refuses the credential (invalid): its usage can never be reported and left Redis. */
  readonly discarded: readonly string[];
  /** All of the usage was of metrics the platform does not have: kept aside (AccessCache.rejectedUsage). */
  readonly rejected: readonly string[];
  /** Nothing to report. */
  readonly empty: readonly string[];
  /** Another reporter holds the credential's lease. */
  readonly busy: readonly string[];
  /** Report refused or Redis failed: the usage stays for a retry. */
  readonly failed: readonly string[];
  /** The sealed credential is missing or does not open under our key: the usage stays, an error is logged. */
  readonly unreadable: readonly string[];
  /** The observer still owes something (an alert not published): the message should come again. */
  readonly retry: readonly string[];
}

/** The ports of the stages of a flush; each stage takes the ones it uses. */
export interface FlushPorts {
  readonly serviceId: string;
  readonly cache: AccessCache;
  readonly sealer: CredentialSealer;
  readonly platform: PlatformPort;
  readonly now: () => number;
  readonly logger: LogPort;
  readonly metrics: MetricsPort;
  readonly onResynced: ResyncObserver;
}

/** A budget's usage taken in flight under a lease, with the credential unsealed. */
export interface DrainedUsage {
  readonly credentialId: string;
  readonly lease: string;
  readonly sealedCredential: string;
  /** The credential the budget keeps for its reports (for an application: one of its valid keys). */
  readonly credential: Credential;
  /** The usage per period bucket. */
  readonly buckets: readonly UsageBucket[];
  /** The buckets added up. */
  readonly usage: Usage;
  /** Left in flight by an earlier attempt: pending usage may wait behind it. */
  readonly resent: boolean;
  /** Limits refused calls hit since the last drain. */
  readonly refusals: readonly LimitRefusal[];
}

export interface Drainage extends Pick<FlushResult, 'empty' | 'busy' | 'failed' | 'unreadable'> {
  readonly ready: readonly DrainedUsage[];
  /** Budgets with nothing to report whose credential is known: refreshed all the same. */
  readonly idle: readonly DrainedUsage[];
}

export interface Verification {
  /** The platform knows the credential: its usage goes into the report. */
  readonly reportable: readonly DrainedUsage[];
  /** The platform refuses the credential: its usage can never be reported. */
  readonly discarded: readonly DrainedUsage[];
  /** All of the usage was of metrics the platform does not have: kept aside, nothing to report. */
  readonly rejected: readonly DrainedUsage[];
  /** The platform did not answer about the credential: its usage is reported apart (reportUnverified). */
  readonly unverified: readonly DrainedUsage[];
}

export interface ReportResult {
  readonly accepted: readonly DrainedUsage[];
  /** Not taken by the platform: the usage stays in flight for the retry. */
  readonly refused: readonly DrainedUsage[];
}

export interface Settlement {
  /** The usage leaves Redis: the platform accepted it, or will never take it. */
  readonly acknowledge: readonly DrainedUsage[];
  /** The lease is given back; the in-flight usage stays for the retry. */
  readonly release: readonly DrainedUsage[];
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

function count(metrics: MetricsPort, name: string, value = 1): void {
  metrics.addMetric(name, 'Count', value);
}

function idsOf(items: readonly DrainedUsage[]): string[] {
  return items.map((item) => item.credentialId);
}

function noteUnreadable(ports: Pick<FlushPorts, 'logger' | 'metrics'>, credentialId: string, why: string) {
  count(ports.metrics, METRIC.flushUnreadable);
  ports.logger.error(
    'usage cannot be reported: the credential cannot be read back (was the provider key rotated?)',
    { credential: credentialIdPrefix(credentialId), why },
  );
}

/** Drain: each credential's pending usage goes in flight under a new lease, and its credential is unsealed. */
export async function drainUsage(
  ports: Pick<FlushPorts, 'cache' | 'sealer' | 'logger' | 'metrics'>,
  credentialIds: readonly string[],
): Promise<Drainage> {
  const { cache, sealer, logger, metrics } = ports;
  const ready: DrainedUsage[] = [];
  const idle: DrainedUsage[] = [];
  const outcome = { empty: [] as string[], busy: [] as string[], failed: [] as string[] };
  const unreadable: string[] = [];
  await Promise.all(
    credentialIds.map(async (credentialId) => {
      const lease = randomUUID();
      let drained: Awaited<ReturnType<AccessCache['drain']>>;
      try {
        drained = await cache.drain(credentialId, lease);
      } catch (error) {
        logger.warn('redis failed while taking usage to report', {
          credential: credentialIdPrefix(credentialId),
          error: errorMessage(error),
        });
        // The script may have run with its answer lost (a timeout, a cut connection): its lease would
        // keep every retry busy for the lease's whole length. The lease is ours to give back; usage it
        // put in flight stays there and the next drain resends it.
        await cache.release(credentialId, lease).catch(() => undefined);
        outcome.failed.push(credentialId);
        return;
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
          sealedCredential: drained.sealedCredential,
          credential,
          buckets: drained.buckets,
          usage: drained.usage,
          resent: drained.resent,
          refusals: drained.refusals,
        });
      } catch (error) {
        await cache.release(credentialId, lease).catch(() => undefined);
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
const NOTHING_DRAINED = { lease: '', buckets: [], usage: {}, resent: false } as const;

/**
 * Refresh: a budget whose message came with nothing to report (its calls were refused) is authorized
 * again and resynced, so a raised limit, a new plan or a resumed application reaches its refused calls
 * within a report window.
 */
export async function refreshIdle(ports: VerifyPorts, idle: readonly DrainedUsage[]): Promise<void> {
  await inBatches(idle, RESYNC_CONCURRENCY, async (item) => {
    const { outcome, item: asked } = await authorizeBudget(ports, item);
    if (isCredentialAnswer(outcome) && !isKeyRefusal(outcome)) {
      await resyncCredential(ports, asked, outcome);
    } else if (!isCredentialAnswer(outcome)) {
      ports.logger.warn('refused budget not refreshed: the platform did not answer', {
        credential: credentialIdPrefix(item.credentialId),
        kind: outcome.kind,
        detail: outcome.message,
      });
    }
  });
}

/**
 * Resync: stores the platform's fresh answer about a drained credential (suspension, revocation, new
 * period, changed limits) and shows the observer its usage. Returns the state the answer gives it.
 */
export async function resyncCredential(
  ports: Pick<FlushPorts, 'serviceId' | 'cache' | 'now' | 'logger' | 'metrics' | 'onResynced'>,
  item: DrainedUsage,
  answer: CredentialAnswer,
): Promise<CredentialState> {
  const { logger } = ports;
  const now = ports.now();
  try {
    await ports.cache.storeAnswer({
      credentialId: item.credentialId,
      keyId: keyIdOf(ports.serviceId, item.credential),
      sealedCredential: item.sealedCredential,
      answer,
      now,
    });
  } catch (error) {
    count(ports.metrics, METRIC.resyncFailed);
    logger.warn('resync not stored', {
      credential: credentialIdPrefix(item.credentialId),
      error: errorMessage(error),
    });
  }
  const state = stateOf(answer);
  if (answer.kind === 'invalid_credential' || state.kind === 'invalid') return state;
  try {
    await ports.onResynced({
      credentialId: item.credentialId,
      state,
      status: answer,
      inFlight: item.usage,
      inFlightBuckets: item.buckets,
      ...(item.credential.kind === 'app_id' && { applicationId: item.credential.appId }),
      ...(item.credential.kind === 'user_key' && { userKey: item.credential.userKey }),
      refusals: item.refusals,
      now,
    });
  } catch (error) {
    logger.warn('resync observer failed', {
      credential: credentialIdPrefix(item.credentialId),
      error: errorMessage(error),
    });
  }
  return state;
}

type VerifyPorts = Pick<
  FlushPorts,
  'serviceId' | 'cache' | 'sealer' | 'platform' | 'now' | 'logger' | 'metrics' | 'onResynced'
>;

type Verdict =
  | { readonly kind: 'reportable' | 'discarded' | 'unverified'; readonly item: DrainedUsage }
  /** Everything drained was usage the platform refuses to take: kept aside, nothing to report. */
  | { readonly kind: 'rejected'; readonly item: DrainedUsage };

const INVALID_METRIC = /^metric "(.*)" is invalid$/;

/** The metric a `metric_invalid` error names; undefined for any other answer. */
export function invalidMetricOf(outcome: AuthOutcome): string | undefined {
  if (outcome.kind !== 'misconfigured' || outcome.code !== 'metric_invalid') return undefined;
  return INVALID_METRIC.exec(outcome.message)?.[1];
}

/** The drained usage without one metric (in every bucket). */
function withoutMetric(item: DrainedUsage, metric: string): DrainedUsage {
  const strip = (usage: Usage): Usage =>
    Object.fromEntries(Object.entries(usage).filter(([m]) => m !== metric));
  const buckets = item.buckets
    .map((bucket) => ({ ...bucket, usage: strip(bucket.usage) }))
    .filter((bucket) => Object.keys(bucket.usage).length > 0);
  return { ...item, buckets, usage: strip(item.usage) };
}

/** Keeps a metric's usage aside for good: the platform does not have the metric. */
async function rejectMetric(ports: VerifyPorts, item: DrainedUsage, metric: string): Promise<DrainedUsage> {
  const usage = item.usage[metric] ?? 0;
  await ports.cache.keepRejected(item.credentialId, { [metric]: usage });
  count(ports.metrics, METRIC.usageRejected, usage);
  ports.logger.error(
    'usage kept aside: the platform has no such metric (fix the mapping rules or add the metric); it is never reported',
    { credential: credentialIdPrefix(item.credentialId), metric, usage },
  );
  return withoutMetric(item, metric);
}

/**
 * The platform's answer about the budget with the usage about to be reported. A key the platform
 * refuses (revoked since it was kept) is marked so, and the application's other valid keys are tried:
 * the platform checks the key first and stops there, so that answer says nothing of the application.
 */
async function authorizeBudget(
  ports: VerifyPorts,
  item: DrainedUsage,
): Promise<{
  readonly outcome: AuthOutcome;
  readonly item: DrainedUsage;
}> {
  count(ports.metrics, METRIC.platformCall);
  const outcome = await ports.platform.authorize(item.credential, item.usage);
  if (!isCredentialAnswer(outcome) || !isKeyRefusal(outcome)) return { outcome, item };
  await resyncCredential(ports, item, outcome);
  const others = await ports.cache.validKeyCredentials(item.credentialId).catch(() => []);
  for (const sealed of others.filter((other) => other !== item.sealedCredential).slice(0, MAX_KEYS_TRIED)) {
    let credential: Credential;
    try {
      credential = ports.sealer.unseal(item.credentialId, sealed);
    } catch {
      continue;
    }
    const other = { ...item, credential, sealedCredential: sealed };
    count(ports.metrics, METRIC.platformCall);
    const answer = await ports.platform.authorize(credential, item.usage);
    if (!isCredentialAnswer(answer) || !isKeyRefusal(answer)) return { outcome: answer, item: other };
    await resyncCredential(ports, other, answer);
  }
  return { outcome, item };
}

/** The verdict on one budget; strips metrics the platform does not have until the rest verifies. */
async function verifyOne(ports: VerifyPorts, drained: DrainedUsage): Promise<Verdict> {
  let item = drained;
  for (;;) {
    if (Object.keys(item.usage).length === 0) return { kind: 'rejected', item };
    const { outcome, item: asked } = await authorizeBudget(ports, item);
    item = asked;
    const invalidMetric = invalidMetricOf(outcome);
    if (invalidMetric !== undefined && invalidMetric in item.usage) {
      item = await rejectMetric(ports, item, invalidMetric);
      continue;
    }
    if (!isCredentialAnswer(outcome)) {
      const log = outcome.kind === 'misconfigured' ? ports.logger.error : ports.logger.warn;
      log.call(ports.logger, 'credential not verified before its report: its usage is reported unverified', {
        credential: credentialIdPrefix(item.credentialId),
        kind: outcome.kind,
        detail: outcome.message,
      });
      return { kind: 'unverified', item };
    }
    // A refused key with no other valid key: the application exists, and reports name it only.
    if (isKeyRefusal(outcome)) return { kind: 'reportable', item };
    const state = await resyncCredential(ports, item, outcome);
    return { kind: state.kind === 'invalid' ? 'discarded' : 'reportable', item };
  }
}

/**
 * Verify: authorizes each budget with the usage about to be reported, and resyncs it from the answer.
 * This keeps out of the report what would make the platform drop the whole report: a credential it
 * refuses (a key let through by failure mode allow during an outage, or revoked since), whose usage can
 * never be reported and is discarded, loudly; and usage of a metric it does not have, kept aside.
 */
export async function verifyCredentials(
  ports: VerifyPorts,
  ready: readonly DrainedUsage[],
): Promise<Verification> {
  const { logger, metrics } = ports;
  const verdicts: Verdict[] = [];
  await inBatches(
    ready.map((item, index) => ({ item, index })),
    RESYNC_CONCURRENCY,
    async ({ item, index }) => {
      verdicts[index] = await verifyOne(ports, item);
    },
  );
  const of = (kind: Verdict['kind']) =>
    verdicts.filter((verdict) => verdict.kind === kind).map((v) => v.item);
  const verification: Verification = {
    reportable: of('reportable'),
    discarded: of('discarded'),
    rejected: of('rejected'),
    unverified: of('unverified'),
  };
  if (verification.discarded.length > 0) {
    count(metrics, METRIC.usageDiscarded, verification.discarded.length);
    for (const item of verification.discarded) {
      logger.error('usage discarded: the platform refuses the credential, so it can never be reported', {
        credential: credentialIdPrefix(item.credentialId),
        usage: item.usage,
      });
    }
  }
  return verification;
}

/**
 * Report: one report call for every reportable credential. A failed report may still have been
 * accepted in part (a split report): those credentials count as accepted.
 */
export async function reportUsage(
  ports: Pick<FlushPorts, 'platform' | 'now' | 'logger' | 'metrics'>,
  reportable: readonly DrainedUsage[],
): Promise<ReportResult> {
  const { logger, metrics } = ports;
  if (reportable.length === 0) return { accepted: [], refused: [] };
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
  return { accepted, refused };
}

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

/**
 * Settle: acknowledged usage leaves Redis (folded into the snapshot's counts until the next resync);
 * released usage stays in flight for the retry, its lease given back.
 */
export async function settleUsage(
  ports: Pick<FlushPorts, 'cache' | 'now' | 'logger'>,
  { acknowledge, release }: Settlement,
): Promise<void> {
  const { cache, logger } = ports;
  await Promise.all([
    ...acknowledge.map(async (item) => {
      try {
        await cache.acknowledge(item.credentialId, item.lease, ports.now());
      } catch (error) {
        logger.error('settled usage still marked in flight: it will be sent again', {
          credential: credentialIdPrefix(item.credentialId),
          error: errorMessage(error),
        });
      }
    }),
    ...release.map((item) => cache.release(item.credentialId, item.lease).catch(() => undefined)),
  ]);
}

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
  const verified = await reportUsage(ports, reportable);
  const unchecked = await reportUnverified(ports, unverified);
  const accepted = [...verified.accepted, ...unchecked.accepted];
  const refused = [...verified.refused, ...unchecked.refused];
  await settleUsage(ports, { acknowledge: accepted, release: refused });
  const result: FlushResult = {
    flushed: idsOf(accepted),
    unverified: idsOf(unchecked.accepted),
    discarded: idsOf(discarded),
    rejected: idsOf(rejected),
    empty,
    busy,
    failed: [...failed, ...idsOf(refused)],
    unreadable,
    retry: [...retry],
  };
  const resent = idsOf(accepted.filter((item) => item.resent));
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
  };
}

export function createUsageFlusher(deps: ReportingDeps): UsageFlusher {
  const ports = flushPortsOf(deps);
  return {
    flush: (credentialIds) => flushRound(ports, [...new Set(credentialIds)], 1),
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
