/**
 * The check script's hints (see CHECK_SCRIPT's ARGV): what a call of each metric needs of a snapshot,
 * as this instance last saw it, and the script arguments that carry them.
 */
import type { Usage } from '../platform/types';
import type { ThrottleTable } from './throttles';

/** A snapshot's limit field, `limit:<period>:<metric>` (the metric's name may hold anything). */
export const LIMIT_FIELD = /^limit:([^:]+):(.+)$/s;
/**
 * A limit named by its limit field or by its count field, `count:<period>:<metric>` (keys.ts): the check
 * script's hit path reads and names the count.
 */
export const LIMIT_OR_COUNT_FIELD = /^(?:limit|count):([^:]+):(.+)$/s;

/** The count field of a limit field (keys.ts). */
function countFieldOf(limitField: string): string {
  return `count${limitField.slice('limit'.length)}`;
}

/** A `need:<metric>` field (snapshot.ts) as the check script takes it pre-parsed. */
interface Need {
  readonly text: string;
  /** The metric's ancestors, nearest first. */
  readonly ancestors: readonly string[];
  /** Field and metric of each limit field it lists. */
  readonly limits: readonly (readonly [string, string])[];
}

function parseNeed(text: string): Need {
  const ancestors: string[] = [];
  const limits: [string, string][] = [];
  for (const token of text.split(' ')) {
    if (token === '') continue;
    const limit = LIMIT_FIELD.exec(token);
    if (limit) limits.push([token, limit[2] as string]);
    else ancestors.push(token);
  }
  return { text, ancestors, limits };
}

/**
 * What a call of each metric needs of a snapshot (its `need:<metric>` field), as this instance last saw
 * it: the check script reads the limit fields a hint lists with the snapshot's head, in one HMGET, takes
 * the hint's parse instead of parsing the need, and answers with the needs a hint missed. A hint only
 * chooses what is read, never what is decided (the script compares it with the need it read), so a stale
 * one costs a second HMGET and a parse, nothing else. One entry per metric the mapping rules name, so
 * bounded by the configuration; budgets of other plans share it, and a plan whose limits differ in a
 * metric makes that hint flip between them, which costs the same.
 */
export class NeedHints {
  private readonly byMetric = new Map<string, Need>();
  /**
   * The plan of the last allowed call: its throttle fields are read with the snapshot (a guess, checked),
   * and a hit on it leaves the plan out of its reply.
   */
  plan = '';

  constructor(private readonly throttles: ThrottleTable) {}

  /**
   * The script's hint arguments for the call's metrics, in the order of usagePairs, and for the plan's
   * throttles (see CHECK_SCRIPT's ARGV): the counts and the plan, the fields to read by name, then what
   * the hints say of them and the plan's throttles' parameters.
   */
  argsFor(usage: Usage): string[] {
    const metrics = Object.keys(usage);
    const needs = metrics.map((metric) => this.byMetric.get(metric));
    const fields = new Map<string, readonly [string, string]>();
    const parents = new Map<string, string>();
    metrics.forEach((metric, index) => {
      const need = needs[index];
      for (const limit of need?.limits ?? []) fields.set(limit[0], limit);
      let child = metric;
      for (const ancestor of need?.ancestors ?? []) {
        parents.set(child, ancestor);
        child = ancestor;
      }
    });
    const { throttles, plan } = this;
    const throttleFields = throttles.fieldsOf(plan);
    return [
      String(metrics.length),
      String(fields.size),
      String(throttleFields.length),
      plan,
      ...metrics.map((metric) => `need:${metric}`),
      ...[...fields.keys()].map(countFieldOf),
      ...throttleFields,
      ...needs.map((need) => need?.text ?? ''),
      ...[...fields.values()].map(([, metric]) => metric),
      ...throttles.paramsOf(plan),
      ...[...parents.entries()].flat(),
    ];
  }

  /** Takes an allowed call's plan and the metric/need pairs its reply carries. */
  learn(plan: string, pairs: readonly string[]): void {
    this.plan = plan;
    for (let i = 0; i + 1 < pairs.length; i += 2) {
      this.byMetric.set(pairs[i] as string, parseNeed(pairs[i + 1] as string));
    }
  }
}
