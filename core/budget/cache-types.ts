/**
 * What the budget cache (cache.ts) takes and answers: the hot path's check and its results, the answers a
 * first call or a resync stores, and the reporter's batches. Plain types, so the decision, the reporter
 * and the plugin read them without the cache's client code.
 */
import type { AuthorizationStatus, InvalidCredentialCode, Period, Usage } from '../platform/types';
import type { CredentialAnswer, CredentialState } from './snapshot';
import type { UsageBucket } from './usage-buckets';

/** A limit of the plan, as a consumer may be told of it. */
export interface LimitInfo {
  readonly metric: string;
  readonly period: Period;
  readonly max: number;
  /** When the period ends (epoch ms); undefined for eternity. */
  readonly resetAt?: number;
}

/** The most constrained limit of an allowed call, and what it leaves. */
export interface LimitFeedback extends LimitInfo {
  /** Calls like this one still allowed in the period. */
  readonly remaining: number;
}

/** A throttle (throttles.ts) as the hot path applied it. */
export interface ThrottleInfo {
  /** The metric it counts; undefined for a throttle of every call. */
  readonly metric?: string;
  /** Calls per second sustained. */
  readonly rate: number;
  /** Calls at once. */
  readonly burst: number;
}

/** The tightest throttle of an allowed call, and what it leaves. */
export interface ThrottleFeedback extends ThrottleInfo {
  /** Calls like this one still allowed at once. */
  readonly remaining: number;
  /** Until the bucket is rested (the whole burst allowed again). */
  readonly fullInMs: number;
}

/** The throttle that refused a call. */
export interface ThrottleRefusal extends ThrottleInfo {
  /** Until the same call would be admitted. */
  readonly retryInMs: number;
}

export type CheckResult =
  /**
   * No snapshot of the budget: the platform must be asked. `claimed`: the check took the budget's
   * first-call lock for the caller (CheckRequest's firstCallLock), so the caller is the one to ask.
   * `seen`: the platform answered for the key before (its seen mark, keys.ts), so the first-call gate
   * does not count it.
   */
  | { readonly kind: 'miss'; readonly claimed: boolean; readonly seen: boolean }
  /** The budget has a snapshot, the presented key was never checked with the platform; `seen` as above. */
  | { readonly kind: 'key_unknown'; readonly seen: boolean }
  | {
      readonly kind: 'cached';
      readonly state: Exclude<CredentialState, { kind: 'active' }>;
      /** Publish the report message: the reporter refreshes the refused budget. */
      readonly publish: boolean;
    }
  | { readonly kind: 'limited'; readonly plan: string; readonly publish: boolean; readonly limit: LimitInfo }
  /** A throttle of the plan refused the call; nothing was counted and no report is due. */
  | {
      readonly kind: 'throttled';
      readonly plan: string;
      readonly publish: false;
      readonly throttle: ThrottleRefusal;
    }
  | {
      readonly kind: 'allow';
      readonly plan: string;
      readonly publish: boolean;
      readonly overLimit: boolean;
      /** Undefined when no limit applies to the call. */
      readonly limit?: LimitFeedback;
      /** The pending bucket the call's usage went to (see RecordedUsage). */
      readonly bucket: number;
      /** When the platform last confirmed the budget's snapshot (epoch ms; 0 unknown). */
      readonly confirmedAt: number;
      /** Undefined when no throttle applies to the call. */
      readonly throttle?: ThrottleFeedback;
    };

/** Usage a decision added to the budget's pending usage: what `giveBack` can take back. */
export interface RecordedUsage {
  /** Start of the pending bucket it went to. */
  readonly bucket: number;
  readonly usage: Usage;
}

export interface CheckRequest {
  /** The budget (credentialIdOf). */
  readonly credentialId: string;
  /** The presented key (keyIdOf); '' when there is no key to check. */
  readonly keyId: string;
  readonly usage: Usage;
  readonly now: number;
  readonly windowMs: number;
  readonly softLimits: boolean;
  /** The lock to claim if the budget has no snapshot; without it a miss claims nothing. */
  readonly firstCallLock?: FirstCallLock;
}

/**
 * A budget's first-call lock (the `first` key): the one call holding it asks the platform, concurrent
 * first calls wait for its answer instead of asking too.
 */
export interface FirstCallLock {
  readonly token: string;
  readonly ttlMs: number;
}

/** What the platform said of a presented key, kept under the budget. */
export type KeyFact =
  | { readonly valid: true; readonly sealedCredential: string }
  | { readonly valid: false; readonly code: InvalidCredentialCode };

/** What a first call hands over with the answer it stores, so the store script settles it in one step. */
export interface FirstCallHandover {
  /** The first-call lock the caller holds, given back with the store. */
  readonly firstCallToken?: string;
  /**
   * The answered call's usage, when the answer admits it: it takes its throttle cells whatever the
   * buckets hold, as the platform counted it already.
   */
  readonly admittedUsage?: Usage;
}

export interface StoredAnswer extends FirstCallHandover {
  readonly credentialId: string;
  readonly now: number;
  /** What the answer says of the budget; absent when it speaks of the key only. */
  readonly budget?: {
    readonly state: CredentialState;
    readonly sealedCredential: string;
    readonly status?: AuthorizationStatus;
  };
  readonly key?: { readonly id: string; readonly fact: KeyFact };
}

/** A platform answer about a credential, as the authorizer's first call and the reporter's resync store it. */
export interface AnswerToStore extends FirstCallHandover {
  readonly credentialId: string;
  /** The presented key (keyIdOf); '' when there is none to keep a fact about. */
  readonly keyId: string;
  /** The credential as presented, sealed under the budget's id. */
  readonly sealedCredential: string;
  readonly answer: CredentialAnswer;
  readonly now: number;
}

/** A limit a refused call hit, for usage alerts: a refusal counts as reaching 100 %. */
export interface LimitRefusal {
  readonly metric: string;
  readonly period: Period;
  /** When a call was last refused at the limit (the period it happened in). */
  readonly at: number;
}

/**
 * A batch found in flight, left by an earlier attempt: `none` (a new batch), `unsent` (no report
 * carried it), `maybe-sent` (a report may have: sending it again may count it twice).
 */
export type BatchHistory = 'none' | 'unsent' | 'maybe-sent';

/** The state a batch's mark records (scripts/report-batch-scripts.ts). */
export type BatchMark = 'new' | 'posting' | 'sent';

export type DrainResult =
  | { readonly kind: 'busy' }
  | {
      readonly kind: 'empty';
      /** The budget's credential when it has one: the reporter refreshes the budget all the same. */
      readonly sealedCredential?: string;
      readonly refusals: readonly LimitRefusal[];
      /** A batch left in flight, marked sent, was acknowledged by this drain. */
      readonly settledSent: boolean;
    }
  | { readonly kind: 'unreadable'; readonly settledSent: boolean }
  | {
      readonly kind: 'ready';
      readonly sealedCredential: string;
      /** The batch's id: its mark and acknowledgement name it. */
      readonly batch: string;
      readonly buckets: readonly UsageBucket[];
      /** The buckets added up. */
      readonly usage: Usage;
      /** Left in flight by an earlier attempt (pending usage may then wait behind it), and how far it got. */
      readonly history: BatchHistory;
      readonly refusals: readonly LimitRefusal[];
      readonly settledSent: boolean;
    };

export interface DrainOptions {
  /** The business clock, for a batch acknowledged by its mark; default the wall clock. */
  readonly now?: number;
  /** A lease of this process it could not give back, which the drain may take over. */
  readonly heldLease?: string;
}

/** Usage the platform refuses to take, kept under its budget. */
export interface RejectedUsage {
  readonly credentialId: string;
  readonly usage: Usage;
}
