/**
 * Per-application throttles (docs/throttling.md): a rate per second and a burst per plan, optionally per
 * metric, enforced at the edge by GCRA inside the hot-path script (scripts/throttle-script.ts). This file holds the
 * setting's shape, its check and the text the script reads the table from.
 */
import { ConfigError, knownFields } from '../settings/validation';

/** `rate` calls per second sustained, `burst` calls at once. */
export interface Throttle {
  readonly rate: number;
  readonly burst: number;
}

/**
 * A plan's throttles: `rate` and `burst` count every call of the plan's applications; `metrics` count
 * the usage of a metric (its descendants' usage included, as for limits).
 */
export interface PlanThrottle {
  readonly rate?: number;
  readonly burst?: number;
  readonly metrics?: Readonly<Record<string, Throttle>>;
}

/** Throttles by plan system name, as the platform's answer names the plan. */
export type Throttles = Readonly<Record<string, PlanThrottle>>;

/** Bounds that keep the script's arithmetic in whole microseconds and a bucket's horizon in days. */
const MIN_RATE = 0.001;
const MAX_RATE = 1_000_000;
const MAX_BURST = 1_000_000;

/** Plan and metric names travel tab- and newline-separated to the script. */
const NAME = /^[^\t\n]+$/;

function rateOf(at: string, value: unknown): number {
  if (typeof value !== 'number' || !Number.isFinite(value) || value < MIN_RATE || value > MAX_RATE) {
    throw new ConfigError(
      `${at}.rate`,
      `must be a number of calls per second from ${MIN_RATE} to ${MAX_RATE} (got ${JSON.stringify(value)})`,
    );
  }
  return value;
}

function burstOf(at: string, value: unknown): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 1 || value > MAX_BURST) {
    throw new ConfigError(
      `${at}.burst`,
      `must be a whole number of calls from 1 to ${MAX_BURST} (got ${JSON.stringify(value)})`,
    );
  }
  return value;
}

function throttleOf(at: string, value: unknown): Throttle {
  const given = knownFields(at, value, ['rate', 'burst']);
  return { rate: rateOf(at, given.rate), burst: burstOf(at, given.burst) };
}

function nameOf(at: string, name: string): string {
  if (!NAME.test(name)) throw new ConfigError(at, 'must be a non-empty name without tabs or line breaks');
  return name;
}

function planThrottleOf(at: string, value: unknown): PlanThrottle {
  const given = knownFields(at, value, ['rate', 'burst', 'metrics']);
  const hasCallThrottle = given.rate !== undefined || given.burst !== undefined;
  if (!hasCallThrottle && given.metrics === undefined) {
    throw new ConfigError(at, 'must give rate and burst, or metrics, or both');
  }
  if (!hasCallThrottle && Object.keys(knownMetrics(`${at}.metrics`, given.metrics)).length === 0) {
    throw new ConfigError(`${at}.metrics`, 'names no metric: the plan would be throttled by nothing');
  }
  const metrics =
    given.metrics === undefined
      ? undefined
      : Object.fromEntries(
          Object.entries(knownMetrics(`${at}.metrics`, given.metrics)).map(([metric, throttle]) => [
            nameOf(`${at}.metrics`, metric),
            throttleOf(`${at}.metrics.${metric}`, throttle),
          ]),
        );
  return {
    ...(hasCallThrottle && throttleOf(at, { rate: given.rate, burst: given.burst })),
    ...(metrics !== undefined && { metrics }),
  };
}

function knownMetrics(at: string, value: unknown): Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new ConfigError(at, 'must be an object of metric system names to { "rate", "burst" }');
  }
  return value as Record<string, unknown>;
}

/** Checks the `throttles` setting; a bad value throws a ConfigError naming the plan (and metric). */
export function validateThrottles(value: unknown, setting = 'throttles'): Throttles {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new ConfigError(setting, 'must be an object of plan system names to { "rate", "burst" }');
  }
  return Object.fromEntries(
    Object.entries(value).map(([plan, throttle]) => [
      nameOf(setting, plan),
      planThrottleOf(`${setting}.${plan}`, throttle),
    ]),
  );
}

/** What a throttle check needs of a mapping rule (settings.ts MappingRule). */
interface RuleDelta {
  readonly method: string;
  readonly pattern: string;
  readonly metric: string;
  readonly delta: number;
}

/**
 * Refuses a metric's throttle whose burst is below the delta of a mapping rule on that metric: a call
 * matching the rule adds more than the bucket ever holds, so it could never pass, whatever the wait.
 */
export function checkThrottlesAgainstRules(
  throttles: Throttles,
  rules: readonly RuleDelta[],
  setting = 'throttles',
): void {
  for (const { plan, metric, burst } of throttleEntries(throttles)) {
    if (metric === undefined) continue;
    const rule = rules.find((candidate) => candidate.metric === metric && candidate.delta > burst);
    if (rule === undefined) continue;
    throw new ConfigError(
      `${setting}.${plan}.metrics.${metric}.burst`,
      `is ${burst}, below the delta ${rule.delta} of the mapping rule ${rule.method} ${rule.pattern}: such calls could never pass`,
    );
  }
}

/** One throttle of the table: of every call of a plan (no metric), or of one metric's usage. */
export interface ThrottleEntry extends Throttle {
  readonly plan: string;
  readonly metric?: string;
}

/** Every throttle of the table, a plan's throttle of every call before its metrics'. */
export function throttleEntries(throttles: Throttles): ThrottleEntry[] {
  return Object.entries(throttles).flatMap(([plan, throttle]) => [
    ...(throttle.rate !== undefined && throttle.burst !== undefined
      ? [{ plan, rate: throttle.rate, burst: throttle.burst }]
      : []),
    ...Object.entries(throttle.metrics ?? {}).map(([metric, { rate, burst }]) => ({
      plan,
      metric,
      rate,
      burst,
    })),
  ]);
}

/** A throttle as people read it (the banner of npm start, the Swagger document). */
export function throttleText({ rate, burst }: Throttle): string {
  return `${rate} per second, ${burst} at once`;
}

/**
 * The snapshot hash field that holds a throttle's state: its scope (every call, or one metric) and its
 * rate, so that a changed rate is a new field, which the script converts from the old one once.
 */
export function throttleField({ metric, rate }: ThrottleEntry): string {
  return `throttle:${metric === undefined ? 'call' : `metric:${metric}`}@${rate}`;
}

/** The throttles as the scripts take them, and as their replies name them. */
export interface ThrottleTable {
  /**
   * One line per throttle, `plan<TAB>metric<TAB>field<TAB>emission interval µs<TAB>burst`, the metric
   * empty for a throttle of every call, each line after a newline (the script finds a plan's lines by
   * searching for `\n<plan>\t`). '' for no throttles, so an unthrottled deployment's script finds
   * nothing to do.
   */
  readonly text: string;
  /** The throttle a reply names by its plan and field (plans may share a field: the same scope and rate). */
  entryOf(plan: string, field: string): ThrottleEntry | undefined;
  /** The state fields of a plan's throttles, in the table's order; none for a plan without throttles. */
  fieldsOf(plan: string): readonly string[];
  /**
   * The rest of each of those throttles' line, in the same order, three items each: its metric ('' for
   * every call), emission interval µs and burst, as the text writes them. The check script's hit path
   * takes them as arguments instead of searching the text and splitting lines.
   */
  paramsOf(plan: string): readonly string[];
}

const NONE: readonly string[] = [];

export function throttleTable(throttles: Throttles): ThrottleTable {
  const lines = throttleEntries(throttles).map((entry) => {
    const field = throttleField(entry);
    return {
      entry,
      field,
      params: [entry.metric ?? '', String(1_000_000 / entry.rate), String(entry.burst)],
    };
  });
  // Names hold no line breaks (validateThrottles), so a newline joins plan and field unambiguously.
  const byPlanAndField = new Map(lines.map(({ entry, field }) => [`${entry.plan}\n${field}`, entry]));
  const ofPlan = (plan: string) => lines.filter(({ entry }) => entry.plan === plan);
  const fieldsByPlan = new Map(
    Object.keys(throttles).map((plan) => [plan, ofPlan(plan).map(({ field }) => field)]),
  );
  const paramsByPlan = new Map(
    Object.keys(throttles).map((plan) => [plan, ofPlan(plan).flatMap(({ params }) => params)]),
  );
  return {
    text: lines
      .map(({ entry: { plan }, field, params: [metric, interval, burst] }) =>
        [`\n${plan}`, metric, field, interval, burst].join('\t'),
      )
      .join(''),
    entryOf: (plan, field) => byPlanAndField.get(`${plan}\n${field}`),
    fieldsOf: (plan) => fieldsByPlan.get(plan) ?? NONE,
    paramsOf: (plan) => paramsByPlan.get(plan) ?? NONE,
  };
}
