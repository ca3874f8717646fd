/**
 * The give-backs of allowed calls that failed (`countFailedResponses: false`): a 5xx or a throw takes the
 * call's usage back (the core's give-back), and `close()` waits for those still running, or the usage
 * they take back would be reported first and stay counted.
 */
import type { AccessAuthorizer } from '../core/decision/access';
import type { AccessDecision } from '../core/decision/decision';
import { errorMessage, type LogPort } from '../core/observability/observability';
import type { CallEnd } from './outcome';

export class GiveBacks {
  private readonly running = new Set<Promise<void>>();

  constructor(private readonly logger: LogPort) {}

  /** The settle of an allowed call whose end matters. */
  settleOf(
    access: Pick<AccessAuthorizer, 'giveBack'>,
    decision: AccessDecision,
  ): (end: CallEnd) => Promise<void> {
    return (end) => {
      if (!(end === 'threw' || end >= 500)) return Promise.resolve();
      const giveBack = access.giveBack(decision).then(
        () => undefined,
        (error: unknown) => {
          // Left counted: over, never under.
          this.logger.warn('usage of a failed call not given back', { error: errorMessage(error) });
        },
      );
      this.running.add(giveBack);
      return giveBack.finally(() => this.running.delete(giveBack));
    };
  }

  /** Once every give-back running now is done. */
  async done(): Promise<void> {
    await Promise.all(this.running);
  }
}
