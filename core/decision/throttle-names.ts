/**
 * Throttles that name a plan or metric as the platform does not: the hot path finds a plan's throttles
 * by the plan's name in the platform's answer, exactly, so a throttle of `basic` never throttles plan
 * `Basic`, silently. The authorizer says so, as the error it is (a log line and PlatformMisconfigured):
 *
 * - at start, of a throttle metric no mapping rule names while one names it in another case (a metric
 *   only the platform's hierarchy names, a parent, cannot be judged here);
 * - on the first answer naming a plan the throttles spell in another case, once per plan.
 *
 * A plan no answer names is not judged: the authorizer sees the plans of the applications that call.
 * The local stack refuses a stack file whose throttles name what its platform lacks (local/stack-throttles.ts).
 */
import { throttleEntries } from '../budget/throttles';
import { type LogPort, METRIC, type MetricsPort } from '../observability/observability';
import type { AccessConfig } from '../settings/config';

export class ThrottleNames {
  private readonly byFolded = new Map<string, string>();
  private readonly judged = new Set<string>();

  constructor(
    config: Pick<AccessConfig, 'throttles' | 'mappingRules'>,
    private readonly logger: LogPort,
    private readonly metrics: MetricsPort,
  ) {
    const plans = Object.keys(config.throttles);
    for (const plan of plans) this.byFolded.set(plan.toLowerCase(), plan);
    const ruled = new Set(config.mappingRules.map(({ metric }) => metric));
    const throttled = new Set(throttleEntries(config.throttles).flatMap(({ metric }) => metric ?? []));
    for (const metric of throttled) {
      if (ruled.has(metric)) continue;
      const spelled = [...ruled].find((name) => name.toLowerCase() === metric.toLowerCase());
      if (spelled !== undefined) {
        this.misnamed('a throttle names a metric the mapping rules spell otherwise: it never applies', {
          throttleMetric: metric,
          mappingRuleMetric: spelled,
        });
      }
    }
  }

  /** A platform answer named the plan `plan`. */
  onAnswerNaming(plan: string): void {
    if (plan === '' || this.judged.has(plan)) return;
    this.judged.add(plan);
    const throttled = this.byFolded.get(plan.toLowerCase());
    if (throttled === undefined || throttled === plan) return;
    this.misnamed('a throttle names a plan the platform spells otherwise: it never applies', {
      throttlePlan: throttled,
      platformPlan: plan,
    });
  }

  private misnamed(message: string, names: Record<string, string>): void {
    this.metrics.addMetric(METRIC.platformMisconfigured, 'Count', 1);
    this.logger.error(message, names);
  }
}
