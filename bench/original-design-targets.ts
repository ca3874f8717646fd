/**
 * The project against the original design on the same machine in the same run, workload by workload
 * (issue 23): Redis CPU per authorization on the hot key, spread and cold, and cold first calls' throughput.
 */
import { LIMITS } from './limits';
import { fixed, grouped, type TargetResult } from './target-result';

/** One design's figures in a workload both designs ran. */
export interface DesignFigures {
  readonly authorizationsPerSecond: number;
  /** The Redis server's CPU time per authorization (INFO cpu). */
  readonly redisCpuMicrosPerCall: number;
}

/** The workloads whose project figures are judged against the original design's of the same run. */
export type SideBySideWorkload = 'hot' | 'spread' | 'cold';

export interface SideBySideFigures {
  readonly project: DesignFigures;
  readonly baseline: DesignFigures;
}

/** Each side-by-side workload the run had (`--workloads` may leave some out): the others are not judged. */
export type SideBySideDesigns = Readonly<Partial<Record<SideBySideWorkload, SideBySideFigures>>>;

/** The targets of each side-by-side workload the run had. */
export function againstOriginalDesign({ hot, spread, cold }: SideBySideDesigns): TargetResult[] {
  return [
    ...(hot ? [redisCpuOfBaselineTarget('hot', hot, LIMITS.hotRedisCpuOfBaseline)] : []),
    ...(spread ? [redisCpuOfBaselineTarget('spread', spread, LIMITS.spreadRedisCpuOfBaseline)] : []),
    ...(cold
      ? [
          throughputOfBaselineTarget('cold', cold, LIMITS.coldThroughputOfBaseline),
          redisCpuOfBaselineTarget('cold', cold, LIMITS.coldRedisCpuOfBaseline),
        ]
      : []),
  ];
}

function throughputOfBaselineTarget(
  workload: SideBySideWorkload,
  { project, baseline }: SideBySideFigures,
  limit: number,
): TargetResult {
  const ratio = project.authorizationsPerSecond / baseline.authorizationsPerSecond;
  return {
    id: `${workload}-throughput`,
    target: `${workload}: throughput >= ${fixed(limit, 1)} x the original design (same run)`,
    measured:
      `${grouped(project.authorizationsPerSecond)}/s against ` +
      `${grouped(baseline.authorizationsPerSecond)}/s (${fixed(ratio)}x)`,
    pass: project.authorizationsPerSecond >= limit * baseline.authorizationsPerSecond,
  };
}

function redisCpuOfBaselineTarget(
  workload: SideBySideWorkload,
  { project, baseline }: SideBySideFigures,
  limit: number,
): TargetResult {
  const ratio = project.redisCpuMicrosPerCall / baseline.redisCpuMicrosPerCall;
  return {
    id: `${workload}-redis-cpu`,
    target: `${workload}: Redis CPU per authorization <= ${fixed(limit, 1)} x the original design (same run)`,
    measured:
      `${fixed(project.redisCpuMicrosPerCall, 1)} against ` +
      `${fixed(baseline.redisCpuMicrosPerCall, 1)} µs (${fixed(ratio)}x)`,
    pass: project.redisCpuMicrosPerCall <= limit * baseline.redisCpuMicrosPerCall,
  };
}
