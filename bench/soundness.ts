/**
 * What makes a run's figures meaningless whatever they are: pure, so it is unit-tested. `--check` fails on
 * any of it, whatever the targets read.
 */

export interface RunFigures {
  readonly workload: string;
  readonly design: string;
  readonly calls: number;
  readonly outcomes: Readonly<Partial<Record<string, number>>>;
  readonly reportedUsage: { readonly allowed: number; readonly reported: number };
  readonly unknownKeyFlood?: {
    readonly outcomes: Readonly<Partial<Record<string, number>>>;
    readonly ranOut: boolean;
  };
}

/** How a made-up key refused at once is counted; the others are refused as the platform's 401 is. */
export const PLATFORM_BUSY = 'deny platform_busy';

/**
 * What makes a run's figures meaningless whatever they are: calls that were not all allowed (an error,
 * a denial: the fixture's limits are out of reach) or allowed usage the flush did not report.
 */
export function soundnessProblems(
  runs: readonly RunFigures[],
  /** Workloads every call of which must be refused (an explicit Deny) instead. */
  refusedWorkloads: ReadonlySet<string> = new Set(),
): string[] {
  const problems: string[] = [];
  for (const run of runs) {
    const name = `${run.workload}/${run.design}`;
    const expected = refusedWorkloads.has(run.workload) ? 'explicit_deny' : 'allow';
    const asExpected = run.outcomes[expected] ?? 0;
    if (asExpected !== run.calls) {
      const others = Object.entries(run.outcomes)
        .filter(([outcome, count]) => outcome !== expected && count)
        .map(([outcome, count]) => `${outcome} ${count}`)
        .join(', ');
      const verb = expected === 'allow' ? 'allowed' : 'refused';
      problems.push(`${name}: ${run.calls - asExpected} of ${run.calls} calls not ${verb} (${others})`);
    }
    if (run.unknownKeyFlood) problems.push(...unknownKeyFloodProblems(name, run.unknownKeyFlood));
    if (run.reportedUsage.reported !== run.reportedUsage.allowed) {
      problems.push(
        `${name}: the platform recorded ${run.reportedUsage.reported} hits for ${run.reportedUsage.allowed} allowed calls`,
      );
    }
  }
  return problems;
}

/**
 * What makes a flood of made-up keys no test of the bound: one of them allowed or an error, no call refused
 * at once (the bound never reached), or keys that ran out before the calls beside them ended.
 */
function unknownKeyFloodProblems(name: string, flood: NonNullable<RunFigures['unknownKeyFlood']>): string[] {
  const problems: string[] = [];
  const wrong = Object.entries(flood.outcomes).filter(
    ([outcome, count]) => count && outcome !== 'unauthorized' && !outcome.startsWith('deny '),
  );
  if (wrong.length > 0) {
    const text = wrong.map(([outcome, count]) => `${outcome} ${count}`).join(', ');
    problems.push(`${name}: made-up keys not refused (${text})`);
  }
  if (!flood.outcomes[PLATFORM_BUSY]) problems.push(`${name}: no made-up key was refused platform_busy`);
  if (flood.ranOut) problems.push(`${name}: the made-up keys ran out before the calls beside them ended`);
  return problems;
}
