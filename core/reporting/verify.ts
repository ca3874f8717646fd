/**
 * Verify, the reporter's second stage: each budget is authorized with the usage about to be reported,
 * so whatever the platform would refuse shows before the report (one refused transaction makes the
 * platform drop the whole report, after answering 202). resyncCredential stores the answer (state and
 * snapshot) and shows it to the `onResynced` observer; a credential the platform refuses is kept out of
 * the report, and usage of a metric it does not have is kept aside (never reported, never dropped).
 * refreshIdle does the same for budgets whose message came with nothing to report.
 */
import {
  type CredentialAnswer,
  type CredentialState,
  isCredentialAnswer,
  isKeyRefusal,
  stateOf,
} from '../budget/snapshot';
import { credentialIdPrefix, keyIdOf } from '../credentials';
import { errorMessage, METRIC } from '../observability/observability';
import type { AuthOutcome, Credential, Usage } from '../platform/types';
import type { DrainedUsage, FlushPorts, Verification } from './flush-types';
import { count, inBatches } from './stage-helpers';

/** Authorize calls of a resync running at once. */
const RESYNC_CONCURRENCY = 16;
/** Other valid keys of an application tried when the one its budget keeps was revoked. */
const MAX_KEYS_TRIED = 3;

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

export type VerifyPorts = Pick<
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
