/**
 * What the cache keeps of a platform answer: the credential's state, and the usage-report snapshot
 * with the metric hierarchy, flattened into hash fields the Lua scripts read (see keys.ts).
 */
import type {
  AuthOutcome,
  AuthorizationStatus,
  DenialReason,
  InvalidCredentialCode,
  UsageReport,
} from '../platform/types';

export type CredentialState =
  | { readonly kind: 'active' }
  | { readonly kind: 'denied'; readonly reason: DenialReason }
  | { readonly kind: 'invalid'; readonly code: InvalidCredentialCode };

export const ACTIVE: CredentialState = { kind: 'active' };

export function encodeState(state: CredentialState): string {
  switch (state.kind) {
    case 'active':
      return 'active';
    case 'denied':
      return `denied:${state.reason}`;
    case 'invalid':
      return `invalid:${state.code}`;
  }
}

/** Decodes a state the scripts stored; an unknown value counts as a denial, never as access. */
export function decodeState(encoded: string): CredentialState {
  if (encoded === 'active') return ACTIVE;
  const at = encoded.indexOf(':');
  const kind = encoded.slice(0, at);
  const detail = encoded.slice(at + 1);
  if (kind === 'invalid') return { kind: 'invalid', code: detail as InvalidCredentialCode };
  return { kind: 'denied', reason: (kind === 'denied' ? detail : encoded) as DenialReason };
}

/** The platform's answers about the credential itself (not about its availability or our configuration). */
export type CredentialAnswer = Extract<AuthOutcome, { kind: 'authorized' | 'denied' | 'invalid_credential' }>;

export function isCredentialAnswer(outcome: AuthOutcome): outcome is CredentialAnswer {
  return outcome.kind === 'authorized' || outcome.kind === 'denied' || outcome.kind === 'invalid_credential';
}

/**
 * Whether the answer refuses the presented app key only: the platform checks the key first and stops
 * there, so it says nothing of the application's state or limits.
 */
export function isKeyRefusal(answer: CredentialAnswer): boolean {
  return (
    (answer.kind === 'invalid_credential' && answer.code === 'application_key_invalid') ||
    (answer.kind === 'denied' && answer.reason === 'application_key_invalid')
  );
}

/**
 * The state an answer gives the credential. Limits never make a state: a `limits_exceeded` denial
 * keeps the credential active and its snapshot decides each call, so a new period lets calls through
 * again without asking the platform. A wrong app key is an invalid credential (401), as a wrong user key is.
 */
export function stateOf(answer: CredentialAnswer): CredentialState {
  if (answer.kind === 'authorized') return ACTIVE;
  if (answer.kind === 'invalid_credential') return { kind: 'invalid', code: answer.code };
  if (answer.reason === 'limits_exceeded') return ACTIVE;
  if (answer.reason === 'application_key_invalid')
    return { kind: 'invalid', code: 'application_key_invalid' };
  return { kind: 'denied', reason: answer.reason };
}

/** The periods a pending bucket may span, shortest first (see bucketPeriodOf). */
const BUCKET_PERIODS = ['minute', 'hour', 'day'] as const;

/**
 * The period of the budget's pending buckets: the shortest period the plan limits of minute, hour and
 * day, a day when it limits none of them (days nest in weeks, months and years; weeks do not nest in
 * months), so every limited period holds each bucket whole.
 */
export function bucketPeriodOf(status: AuthorizationStatus): (typeof BUCKET_PERIODS)[number] {
  const limited = new Set<string>(status.usageReports.map((report) => report.period));
  return BUCKET_PERIODS.find((period) => limited.has(period)) ?? 'day';
}

/**
 * What a call of each metric needs of the snapshot, as the hot path reads it by name: `need:<metric>` ->
 * its ancestors, nearest first, then the limit fields of it and of them (in the answer's order), all
 * separated by spaces. A metric the snapshot neither limits nor places in the tree has none.
 */
function needFields(
  status: AuthorizationStatus,
  limitFieldOf: (report: UsageReport) => string,
): [string, string][] {
  const parentOf = new Map<string, string>();
  for (const [parent, children] of Object.entries(status.hierarchy)) {
    for (const child of children) parentOf.set(child, parent);
  }
  const metrics = new Set([
    ...status.usageReports.map((report) => report.metric),
    ...parentOf.keys(),
    ...parentOf.values(),
  ]);
  return [...metrics].map((metric) => {
    const ancestors: string[] = [];
    // The platform's tree is shallow; the bound keeps a cycle from looping (the scripts add up 16 levels).
    for (
      let parent = parentOf.get(metric);
      parent !== undefined && ancestors.length < 16;
      parent = parentOf.get(parent)
    ) {
      ancestors.push(parent);
    }
    const chain = new Set([metric, ...ancestors]);
    const limits = status.usageReports.filter((report) => chain.has(report.metric)).map(limitFieldOf);
    return [`need:${metric}`, [...ancestors, ...limits].join(' ')];
  });
}

/**
 * The hash fields of a snapshot: `limit:<period>:<metric>` -> `<period start> <period end> <max> <current>`
 * (-1 -1 for eternity), `parent:<metric>` -> parent, and for the hot path, which reads by name what a call
 * needs instead of the whole hash: `bucket` -> the period of its pending buckets (bucketPeriodOf) and
 * `need:<metric>` (needFields).
 */
export function snapshotFields(status: AuthorizationStatus): [string, string][] {
  const limitFieldOf = (report: UsageReport) => `limit:${report.period}:${report.metric}`;
  const fields: [string, string][] = [];
  for (const report of status.usageReports) {
    const window =
      report.periodEnd === undefined
        ? '-1 -1'
        : `${Math.trunc(report.periodStart ?? -1)} ${Math.trunc(report.periodEnd)}`;
    fields.push([
      limitFieldOf(report),
      `${window} ${Math.trunc(report.maxValue)} ${Math.trunc(report.currentValue)}`,
    ]);
  }
  for (const [parent, children] of Object.entries(status.hierarchy)) {
    for (const child of children) fields.push([`parent:${child}`, parent]);
  }
  fields.push(['bucket', bucketPeriodOf(status)], ...needFields(status, limitFieldOf));
  return fields;
}
