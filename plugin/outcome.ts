/**
 * The plugin's verdict on a call (AccessOutcome) and how a decision becomes one: an allowed call's grant
 * and RateLimit headers, a refusal's answer (or the provider's, from `onRefusal`), and the answer of a
 * check that could not run.
 */
import type { AccessDecision } from '../core/decision/decision';
import type { FlatLimit } from '../core/decision/rate-limit-fields';
import { errorMessage, type LogPort } from '../core/observability/observability';
import {
  type AccessAnswer,
  answerOfRefusal,
  decisionLimits,
  flatLimitOf,
  type RefusalReason,
  rateLimitHeaders,
  refusalAnswer,
  refusalReasonOf,
} from './answers';
import type { GiveBacks } from './give-backs';
import type { Parts } from './parts';
import type { PluginConfig } from './settings';

/** What an allowed call carries to its handler: who called, under which plan, and what is left. */
export interface AccessGrant {
  /** False when the check could not run and `failureMode: allow` let the call through unchecked. */
  readonly checked: boolean;
  /** The application, when the credential names it (app_id mode); user keys do not reveal it. */
  readonly applicationId?: string;
  /** The plan's name; '' when no platform answer told it. */
  readonly plan: string;
  /** The metrics the call counts against. */
  readonly metrics: readonly string[];
  /** The most constrained limit of the call and what it leaves, when one applies. */
  readonly limit?: {
    readonly metric: string;
    readonly period: string;
    readonly max: number;
    readonly remaining: number;
    /** Whole seconds until its period ends; absent for eternity. */
    readonly resetSeconds?: number;
  };
}

/** How the handler of an allowed call ended: its status code, or a throw. */
export type CallEnd = number | 'threw';

/** The plugin's verdict on one call. */
export type AccessOutcome =
  | {
      readonly allowed: true;
      readonly grant: AccessGrant;
      /** RateLimit-Policy and RateLimit, for the allowed answer. */
      readonly headers: Readonly<Record<string, string>>;
      /**
       * Present only when the call's end matters: `countFailedResponses: false`, on a call that was checked.
       * Tells the plugin how the handler ended; a 5xx or a throw gives the call's usage back. Never throws;
       * call it once. Absent, there is nothing to wait for.
       */
      readonly settle?: (end: CallEnd) => Promise<void>;
    }
  | { readonly allowed: false; readonly reason: RefusalReason; readonly answer: AccessAnswer };

/** A call let through without a check: an unprotected method, or an error under `failureMode: allow`. */
export const UNCHECKED: AccessOutcome = {
  allowed: true,
  grant: { checked: false, plan: '', metrics: [] },
  headers: {},
};

/** How the plugin answers: the verdicts of its decisions and of the checks that could not run. */
export class Verdicts {
  constructor(
    private readonly plugin: PluginConfig,
    private readonly logger: LogPort,
    private readonly now: () => number,
    private readonly giveBacks: GiveBacks,
  ) {}

  /** A check that failed unexpectedly: 500 "access check unavailable", or through under `failureMode: allow`. */
  unchecked(error: unknown): AccessOutcome {
    this.logger.error('access check failed', { error: errorMessage(error) });
    if (this.plugin.access.failureMode === 'allow') return UNCHECKED;
    return refused('access_check_unavailable', refusalAnswer('access_check_unavailable'));
  }

  /** A refusal, answered by the provider's `onRefusal` when there is one (the plugin's own if it fails). */
  async refusal(
    reason: RefusalReason,
    answer: AccessAnswer,
    decision?: AccessDecision,
  ): Promise<AccessOutcome> {
    const { onRefusal } = this.plugin;
    if (!onRefusal) return refused(reason, answer);
    try {
      const replaced = await onRefusal({
        reason,
        answer,
        ...(decision?.effect === 'deny' && {
          plan: decision.plan,
          ...(decision.applicationId !== undefined && { applicationId: decision.applicationId }),
        }),
      });
      return refused(reason, replaced);
    } catch (error) {
      this.logger.error('refusal callback failed: the plugin answers itself', { error: errorMessage(error) });
      return refused(reason, answer);
    }
  }

  /** The verdict on a decision; at once for an allowed call. */
  of(
    decision: AccessDecision,
    { access, config }: Pick<Parts, 'access' | 'config'>,
  ): AccessOutcome | Promise<AccessOutcome> {
    const at = this.now();
    if (decision.effect !== 'allow') {
      return this.refusal(refusalReasonOf(decision), answerOfRefusal(decision, config, at), decision);
    }
    const limit = flatLimitOf(decision, at);
    const grant = grantOf(decision, limit);
    const headers = rateLimitHeaders(decisionLimits(decision, limit));
    if (this.plugin.countFailedResponses) return { allowed: true, grant, headers };
    return { allowed: true, grant, headers, settle: this.giveBacks.settleOf(access, decision) };
  }
}

function refused(reason: RefusalReason, answer: AccessAnswer): AccessOutcome {
  return { allowed: false, reason, answer };
}

/** Built field by field, not spread: one object per allowed call, on the hot path. */
function grantOf(
  decision: Exclude<AccessDecision, { effect: 'unauthorized' }>,
  limit: FlatLimit | undefined,
): AccessGrant {
  const grant: { -readonly [K in keyof AccessGrant]: AccessGrant[K] } = {
    checked: true,
    plan: decision.plan,
    metrics: decision.metrics === '' ? [] : decision.metrics.split(','),
  };
  if (decision.applicationId !== undefined) grant.applicationId = decision.applicationId;
  if (limit !== undefined) {
    const { limitMetric: metric, limitPeriod: period, limit: max, remaining, reset } = limit;
    grant.limit =
      reset === undefined
        ? { metric, period, max, remaining }
        : { metric, period, max, remaining, resetSeconds: reset };
  }
  return grant;
}
