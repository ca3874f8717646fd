/** The Swagger document's note on an operation some plans throttle (docs/throttling.md). */

import { type Throttles, throttleEntries, throttleText } from '../../core/budget/throttles';
import type { Usage } from '../../core/platform/types';

/**
 * The throttles that cover an operation counting `metrics` (each plan's throttle of every call, and
 * those of the metrics it counts directly); '' when none does.
 */
export function throttleNote(throttles: Throttles | undefined, metrics: readonly string[]): string {
  const lines = throttleEntries(throttles ?? {})
    .filter(({ metric }) => metric === undefined || metrics.includes(metric))
    .map(
      (entry) =>
        `- plan \`${entry.plan}\`${entry.metric === undefined ? '' : `, \`${entry.metric}\``}: ${throttleText(entry)}`,
    );
  if (lines.length === 0) return '';
  return `\n\nThrottled (calls beyond are refused with 403 \`rate_limited\`; \`reset\` says in how many seconds to retry):\n${lines.join('\n')}`;
}

/** The metrics some paths of an operation count. */
export function countedMetrics(counted: readonly { readonly metrics: Usage | null }[]): string[] {
  return [...new Set(counted.flatMap(({ metrics }) => Object.keys(metrics ?? {})))];
}
