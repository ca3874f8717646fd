/**
 * The applications the run's platform must know: every design's warm-up and measured keys of each selected
 * workload, on the service its set-up uses, and those of the refused floods on the plan that allows no call.
 * Made-up keys are left out: they were never issued.
 */
import { type BenchServiceId, keysOf } from './fixture';
import type { WorkloadName } from './report';
import { OVER_LIMIT_WORKLOADS, SETUPS, WORKLOADS } from './workloads';

/** Every application of the run, by the service its workload's set-up uses (user keys, app ids, client ids). */
export function applicationsOf(
  workloads: readonly WorkloadName[],
  quick: boolean,
): Partial<Record<BenchServiceId, string[]>> {
  const applications: Partial<Record<BenchServiceId, string[]>> = {};
  for (const workload of workloads) {
    const { serviceId } = SETUPS[WORKLOADS[workload].setup];
    const into = applications[serviceId] ?? [];
    applications[serviceId] = into;
    into.push(...applicationNamesOf(workload, quick));
  }
  return applications;
}

/** The applications of one workload: every design's warm-up and measured keys. */
function applicationNamesOf(workload: WorkloadName, quick: boolean): string[] {
  const spec = WORKLOADS[workload];
  const size = quick ? spec.quick : spec.full;
  return spec.designs.flatMap((design) => [
    ...keysOf(design, workload, 'warmup', size.warmupKeys),
    ...keysOf(design, workload, 'measured', size.keys),
  ]);
}

/** The applications of the selected refused-flood workloads: on the plan that allows no call. */
export function overLimitApplicationsOf(workloads: readonly WorkloadName[], quick: boolean): Set<string> {
  return new Set(
    workloads
      .filter((workload) => OVER_LIMIT_WORKLOADS.has(workload))
      .flatMap((w) => applicationNamesOf(w, quick)),
  );
}
