/**
 * Throttles of a stack file that could never apply, refused when the file is read (docs/throttling.md):
 *
 * - a plan or a metric the local platform's service does not have. The platform names a plan in its
 *   answers exactly as it was created, and the hot path finds a throttle by that name: `basic` never
 *   throttles plan `Basic`, so names are compared exactly, as the platform compares them;
 * - gateways of one service with different throttles: throttles describe the service's plans, and the
 *   budgets are the service's, so an API of the service without them would let through what another
 *   refuses.
 */
import type { Throttles } from '../core/budget/throttles';
import { ConfigError } from '../core/settings/validation';
import type { MetricConfig, PlatformConfig } from './platform/config';

/** What the checks need of a gateway of the stack file. */
export interface ThrottledGateway {
  readonly setting: string;
  readonly externalPlatform: boolean;
  readonly configInput: { readonly serviceId?: unknown; readonly throttles?: unknown };
}

function metricNames(metrics: readonly MetricConfig[]): string[] {
  return metrics.flatMap((metric) => [metric.name, ...metricNames(metric.children)]);
}

/** Refuses a throttle of a plan or metric the local platform's service lacks. */
export function checkThrottlesOnPlatform(gateway: ThrottledGateway, platform: PlatformConfig): void {
  const throttles = (gateway.configInput.throttles ?? {}) as Throttles;
  const service = platform.services.find(({ id }) => id === gateway.configInput.serviceId);
  if (gateway.externalPlatform || service === undefined) return;
  const plans = service.plans.map(({ name }) => name);
  const metrics = new Set(metricNames(service.metrics));
  for (const [plan, throttle] of Object.entries(throttles)) {
    const at = `${gateway.setting}.throttles.${plan}`;
    if (!plans.includes(plan)) {
      throw new ConfigError(
        at,
        `cannot apply: service ${service.id} has no plan ${JSON.stringify(plan)} (its plans: ${plans.join(', ')}; names are compared exactly, as the platform does)`,
      );
    }
    for (const metric of Object.keys(throttle.metrics ?? {})) {
      if (metrics.has(metric)) continue;
      throw new ConfigError(
        `${at}.metrics.${metric}`,
        `cannot apply: service ${service.id} has no metric ${JSON.stringify(metric)} (its metrics: ${[...metrics].join(', ')})`,
      );
    }
  }
}

/** A table's text with its keys in order, so two tables that say the same compare equal. */
function canonical(value: unknown): string {
  if (typeof value !== 'object' || value === null) return JSON.stringify(value);
  const entries = Object.entries(value).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return `{${entries.map(([key, inner]) => `${JSON.stringify(key)}:${canonical(inner)}`).join(',')}}`;
}

/** Refuses gateways of one service whose throttles differ. */
export function checkThrottlesAgree(gateways: readonly ThrottledGateway[]): void {
  const first = new Map<unknown, ThrottledGateway>();
  for (const gateway of gateways) {
    const serviceId = gateway.configInput.serviceId;
    const earlier = first.get(serviceId);
    if (earlier === undefined) {
      first.set(serviceId, gateway);
      continue;
    }
    const table = (entry: ThrottledGateway) => canonical(entry.configInput.throttles ?? {});
    if (table(gateway) === table(earlier)) continue;
    throw new ConfigError(
      `${gateway.setting}.throttles`,
      `differ from ${earlier.setting}.throttles, on the same service ${String(serviceId)}: throttles describe the service's plans, so every gateway of a service takes the same table`,
    );
  }
}
