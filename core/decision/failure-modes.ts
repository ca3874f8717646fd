/**
 * The failure modes as a table: one named handler per mode, as the platform gateway's caching policy
 * keeps one handler per caching type (APIcast `gateway/src/apicast/policy/caching/caching.lua`; see
 * docs/reliability.md, Failure modes). A handler answers the two questions the authorizer asks when the
 * platform may be out of reach:
 *
 * - Does a cached allow still decide, given when the platform last confirmed the budget's answer?
 * - What does a call the cache leaves to the platform get while the platform cannot answer?
 */
import type { FailureMode } from '../settings/settings';

/** When the platform last confirmed a budget's cached answer, and the bound `strict` holds it to. */
export interface Confirmation {
  /** Epoch ms of the last platform answer stored for the budget (a first call, a resync); 0: unknown. */
  readonly confirmedAt: number;
  readonly now: number;
  /** strictTrustSeconds, in ms. */
  readonly trustMs: number;
}

export interface FailureModeHandler {
  /** Whether a cached allow decides the call without asking the platform again. */
  trusts(confirmation: Confirmation): boolean;
  /**
   * What a call gets that the cache does not decide (a budget or key never seen, an answer no longer
   * trusted) while the platform cannot answer: refused (`platform_unavailable`), or admitted with its
   * usage kept pending for the reporter.
   */
  readonly undecided: 'refuse' | 'admit';
}

/** Trusts the cache only within the bound; past it a call is refused unless the platform confirms it. */
const strict: FailureModeHandler = {
  trusts: ({ confirmedAt, now, trustMs }) => now - confirmedAt <= trustMs,
  undecided: 'refuse',
};

/** Keeps deciding from the last cached answer through an outage of any length; refuses what it never saw. */
const resilient: FailureModeHandler = {
  trusts: () => true,
  undecided: 'refuse',
};

/** As resilient, and lets through what it never saw: the reporter verifies it once the platform is back. */
const allow: FailureModeHandler = {
  trusts: () => true,
  undecided: 'admit',
};

export const FAILURE_MODE_HANDLERS: Readonly<Record<FailureMode, FailureModeHandler>> = {
  strict,
  resilient,
  allow,
};
