/**
 * How ApiAccessAuthorizer composes its parts, in the manner of aws-solutions-constructs: each part builds
 * its resources in the scope it is given and offers the composing construct what it contributes to the
 * shared concerns (alarms; routes on a protected API). A new feature is one more part that implements this.
 */
import type { IMetric } from 'aws-cdk-lib/aws-cloudwatch';
import type { HttpApiProtection } from './http-api-protection';
import type { ApiProtection } from './protection';

/** An alarm a part wants on what it runs; AccessAlarms turns each into a CloudWatch alarm. */
export interface AlarmSpec {
  /** Construct id of the alarm, unique across the parts (for example `AuthorizerErrors`). */
  readonly id: string;
  /** What it means and what to look at when it fires. */
  readonly description: string;
  readonly metric: IMetric;
  /** The alarm fires at or above this value. */
  readonly threshold: number;
  /**
   * Consecutive periods at or above the threshold before it fires.
   * @default 1
   */
  readonly evaluationPeriods?: number;
}

export interface AccessPart {
  /** The alarms this part's resources need. */
  readonly alarms: readonly AlarmSpec[];
  /** Called once for every API the construct protects: a part that serves routes adds them here. */
  onProtect?(protection: ApiProtection): void;
  /**
   * Called once for every HTTP API the construct protects: a part that serves routes adds them here, or
   * refuses the API saying why.
   */
  onProtectHttpApi?(protection: HttpApiProtection): void;
}
