/**
 * The types of the reporter's stages (drain.ts, verify.ts, report.ts, settle.ts) and of the flush that
 * runs them (reporting.ts): the ports each stage takes, and what each hands the next.
 */
import type { AccessCache } from '../budget/cache';
import type { DrainResult, LimitRefusal } from '../budget/cache-types';
import type { RedisConnection } from '../budget/redis-client';
import type { CredentialState } from '../budget/snapshot';
import type { UsageBucket } from '../budget/usage-buckets';
import type { CredentialSealer } from '../credentials/seal';
import type { LogPort, MetricsPort } from '../observability/observability';
import type { AuthorizationStatus, Credential, PlatformPort, Usage } from '../platform/types';
import type { AccessConfig } from '../settings/config';
import type { LeaseBook } from './leases';

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
  /** Default: SETTLE_RETRY_MS. */
  readonly settleRetryMs?: number;
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
  /** Leases this process took and could not give back (leases.ts). */
  readonly leases: LeaseBook;
  /** How long a batch the platform accepted keeps trying to record it through a Redis failure. */
  readonly settleRetryMs: number;
}

/** A budget's usage taken in flight under a lease, with the credential unsealed. */
export interface DrainedUsage
  extends Pick<
    Extract<DrainResult, { kind: 'ready' }>,
    'sealedCredential' | 'batch' | 'buckets' | 'usage' | 'history' | 'refusals'
  > {
  readonly credentialId: string;
  /** '' for an idle budget (nothing in flight), as its `batch`. */
  readonly lease: string;
  /** The credential the budget keeps for its reports (for an application: one of its valid keys). */
  readonly credential: Credential;
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
  /** Of `refused`: the platform answered, and counted none of it (no timeout, no cut connection). */
  readonly unsent: readonly DrainedUsage[];
}

export interface Settlement {
  /** The usage leaves Redis: the platform accepted it, or will never take it. */
  readonly acknowledge: readonly DrainedUsage[];
  /** The lease is given back; the in-flight usage stays for the retry. */
  readonly release: readonly DrainedUsage[];
  /** Of `release`: the platform answered and counted nothing, so the batch is marked unsent again. */
  readonly unsent?: readonly DrainedUsage[];
}

export interface UsageFlusher {
  flush(credentialIds: readonly string[]): Promise<FlushResult>;
  /**
   * A clean stop: waits for the flushes under way (each settles what it took) and gives back the
   * leases this process could not give back before, so nothing is left in flight under them.
   */
  close(): Promise<void>;
}
