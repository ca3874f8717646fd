/**
 * When a refused call will pass, in whole seconds: what a consumer reads as `Retry-After` (RFC 9110
 * section 10.2.3) and the refusal's `reset`. Only refusals that waiting mends have one:
 *
 * - `limits_exceeded`: the limit's period end; an eternity limit never resets, so none.
 * - `rate_limited`: when the throttle admits the same call again; none when it never can (the call adds
 *   more to the throttled metric than its burst holds: waiting does not help).
 * - `platform_busy`: the next second, when the bound of first calls starts again.
 * - `platform_unavailable`: PLATFORM_UNAVAILABLE_RETRY_SECONDS, a hint (nobody knows when the platform
 *   comes back), long enough not to add to its load.
 *
 * Never less than 1: `Retry-After: 0` invites an immediate retry, which would be refused again.
 */
import type { Usage } from '../platform/types';
import type { AccessDecision } from './decision';

export const PLATFORM_UNAVAILABLE_RETRY_SECONDS = 5;

const wholeSeconds = (ms: number) => Math.max(1, Math.ceil(ms / 1000));

export function retryAfterSecondsOf(decision: AccessDecision, usage: Usage, now: number): number | undefined {
  if (decision.effect !== 'deny') return undefined;
  switch (decision.reason) {
    case 'limits_exceeded': {
      const resetAt = decision.limit?.resetAt;
      return resetAt === undefined ? undefined : wholeSeconds(resetAt - now);
    }
    case 'rate_limited': {
      const throttle = decision.throttle;
      if (throttle === undefined || !('retryInMs' in throttle)) return undefined;
      const amount = throttle.metric === undefined ? 1 : (usage[throttle.metric] ?? 0);
      return amount > throttle.burst ? undefined : wholeSeconds(throttle.retryInMs);
    }
    case 'platform_busy':
      return wholeSeconds(1000 - (now % 1000));
    case 'platform_unavailable':
      return PLATFORM_UNAVAILABLE_RETRY_SECONDS;
    default:
      return undefined;
  }
}
