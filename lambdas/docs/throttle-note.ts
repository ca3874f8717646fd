/** The Swagger document's note on an operation some plans throttle (docs/throttling.md). */
import type { Usage } from '../core/platform/types';
import type { Throttle, Throttles } from '../core/throttles';

function rateText({ rate, burst }: Throttle): string {
  return `${rate} per second, ${burst} at once`;
}

/**
 * The throttles that cover an operation counting `metrics` (every call's throttle, and those of the
 * metrics it counts directly), by plan; '' when none does.
 */
export function throttleNote(throttles: Throttles | undefined, metrics: readonly string[]): string {
  const lines = Object.entries(throttles ?? {}).flatMap(([plan, throttle]) => [
    ...(throttle.rate !== undefined && throttle.burst !== undefined
      ? [`- plan \`${plan}\`: ${rateText({ rate: throttle.rate, burst: throttle.burst })}`]
      : []),
    ...Object.entries(throttle.metrics ?? {})
      .filter(([metric]) => metrics.includes(metric))
      .map(([metric, perMetric]) => `- plan \`${plan}\`, \`${metric}\`: ${rateText(perMetric)}`),
  ]);
  if (lines.length === 0) return '';
  return `\n\nThrottled (calls beyond are refused with 403 \`rate_limited\`; \`reset\` says in how many seconds to retry):\n${lines.join('\n')}`;
}

/** The metrics some paths of an operation count. */
export function countedMetrics(counted: readonly { readonly metrics: Usage | null }[]): string[] {
  return [...new Set(counted.flatMap(({ metrics }) => Object.keys(metrics ?? {})))];
}
