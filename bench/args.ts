/** Command-line flags of `npm run bench`. */
import { defaultOf, MAX_REPORT_WINDOW_SECONDS } from '../core/settings/settings';
import type { WorkloadName } from './report';
import { WORKLOAD_NAMES } from './workloads';

export interface BenchOptions {
  /** Exit non-zero when a target fails. */
  readonly check: boolean;
  /** Simulated SNS publish latency, applied identically to the project and the baseline. */
  readonly snsLatencyMs: number;
  /**
   * How long the application workloads' platform takes to answer (a same-Region round trip), for the
   * plugin's first calls and the original plugin design's every call.
   */
  readonly platformLatencyMs: number;
  /** A smaller run for a quick look; its figures are noisier. */
  readonly quick: boolean;
  readonly reportWindowSeconds: number;
  /** The workloads to run, in the table's order; default all of them. */
  readonly workloads: readonly WorkloadName[];
  /** Measure the portal's Lambda alone (module init, warm pages), no workload and no target. */
  readonly portalOnly: boolean;
}

/** A same-Region round trip to the platform. */
export const DEFAULT_PLATFORM_LATENCY_MS = 20;

export const USAGE = `Usage: npm run bench -- [--check] [--quick] [--sns-latency-ms N] [--report-window-seconds N]
  --check                    exit non-zero when any target FAILs
  --quick                    a smaller run (noisier figures)
  --sns-latency-ms N         simulated SNS publish latency, same for project and baseline (default 10)
  --platform-latency-ms N    the application workloads' platform answers after N ms (default ${DEFAULT_PLATFORM_LATENCY_MS})
  --report-window-seconds N  the authorizer's report window (default ${defaultOf('reportWindowSeconds')}, the config default)
  --workloads a,b            run only these workloads (default all: ${WORKLOAD_NAMES.join(', ')})
  --portal-only              measure only the portal's Lambda (module init, warm p95 of its pages)`;

export class UsageError extends Error {
  constructor(problem: string) {
    super(`${problem}\n${USAGE}`);
    this.name = 'UsageError';
  }
}

function integerFlag(flag: string, raw: string | undefined, max: number): number {
  if (raw === undefined || !/^\d+$/.test(raw) || Number(raw) > max) {
    throw new UsageError(`${flag} needs an integer from 0 to ${max} (got ${JSON.stringify(raw)})`);
  }
  return Number(raw);
}

function workloadsFlag(raw: string | undefined): WorkloadName[] {
  const names = (raw ?? '').split(',').map((name) => name.trim());
  const unknown = names.filter((name) => !(WORKLOAD_NAMES as readonly string[]).includes(name));
  if (raw === undefined || unknown.length > 0) {
    throw new UsageError(`--workloads takes workload names separated by commas (got ${JSON.stringify(raw)})`);
  }
  return WORKLOAD_NAMES.filter((name) => names.includes(name));
}

export function parseBenchArgs(argv: readonly string[]): BenchOptions {
  let check = false;
  let quick = false;
  let snsLatencyMs = 10;
  let platformLatencyMs = DEFAULT_PLATFORM_LATENCY_MS;
  let reportWindowSeconds: number = defaultOf('reportWindowSeconds');
  let workloads: readonly WorkloadName[] = WORKLOAD_NAMES;
  let portalOnly = false;
  for (let i = 0; i < argv.length; i++) {
    const [flag, inlineValue] = (argv[i] as string).split(/=(.*)/s, 2) as [string, string | undefined];
    const value = () => inlineValue ?? argv[++i];
    switch (flag) {
      case '--check':
        check = true;
        break;
      case '--quick':
        quick = true;
        break;
      case '--sns-latency-ms':
        snsLatencyMs = integerFlag(flag, value(), 10_000);
        break;
      case '--platform-latency-ms':
        platformLatencyMs = integerFlag(flag, value(), 10_000);
        break;
      case '--report-window-seconds':
        reportWindowSeconds = integerFlag(flag, value(), MAX_REPORT_WINDOW_SECONDS);
        break;
      case '--workloads':
        workloads = workloadsFlag(value());
        break;
      case '--portal-only':
        portalOnly = true;
        break;
      default:
        throw new UsageError(`unknown argument ${JSON.stringify(argv[i])}`);
    }
  }
  return { check, quick, snsLatencyMs, platformLatencyMs, reportWindowSeconds, workloads, portalOnly };
}
