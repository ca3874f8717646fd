/**
 * One gateway event format: how its event becomes the core's neutral request, and how the core's
 * decision becomes that gateway's answer. A new format is one more module of this shape in the table of
 * index.ts; the core never changes for it.
 */
import type { AccessDecision } from '../../core/decision/decision';
import type { GatewayRequest } from '../../core/decision/request';

export type PolicyDecision = Extract<AccessDecision, { effect: 'allow' | 'deny' }>;

export interface GatewayFormat<Event, Answer> {
  /** The format's name, as logs and the local gateway's stack file say it. */
  readonly name: string;
  /** The call as the core decides it. */
  requestOf(event: Event): GatewayRequest;
  /** The gateway's answer to a decision; `now` (epoch ms) dates the limit's reset. */
  answerOf(event: Event, decision: AccessDecision, now: number): Answer;
  /** The answer when the authorizer could not decide at all: a refusal, never a 5xx. */
  failureOf(event: Event): Answer;
}
