/**
 * `npm run bench`: the project's authorizer and the original design (baseline.ts), side by side on one
 * real redis-server (and, for spread-cluster, a local Redis Cluster of three primaries), one in-process
 * local platform and one SNS endpoint with the same simulated publish latency. Prints the tables,
 * writes bench/results/latest.json, and with --check exits 1 on any FAIL.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { applicationsOf, overLimitApplicationsOf } from './applications';
import { type BenchOptions, parseBenchArgs, UsageError } from './args';
import { measureAuthorizerBundles } from './authorizer-bundle';
import { accessConfig } from './authorizer-system';
import { errorSamples } from './callers';
import { comparisonTargets, evaluateComparisons } from './comparisons';
import { BENCH_PROVIDER_KEY } from './fixture';
import { hotLogBytes } from './hot-log-bytes';
import { runOn } from './measure';
import { otherCpuPerCore, readCpu } from './other-load';
import { pinBench, pinProcess, placementText } from './placement';
import { measurePortal } from './portal';
import { CLUSTER_PRIMARIES, redisVersionOf, startCluster, stopRedis } from './redis-under-test';
import {
  type BenchReport,
  describeMachine,
  formatReport,
  machineLine,
  portalLines,
  type WorkloadName,
} from './report';
import { startServers, stopServers } from './servers';
import { soundnessProblems } from './soundness';
import type { Servers } from './system';
import { comparedFigures, resultsBy, targetInputsOf } from './target-figures';
import { evaluateTargets } from './targets';
import { CONCURRENT, checkWorkloadTable, REFUSED_WORKLOADS, SETUPS, WORKLOADS } from './workloads';

const PROJECT_ROOT = path.resolve(__dirname, '..');
const RESULTS_DIR = path.join(PROJECT_ROOT, 'bench', 'results');
/** The whole run is bounded: a hang fails the benchmark instead of blocking CI. */
const WATCHDOG_MS = 30 * 60 * 1000;

/** Warm calls of each portal page. */
const PORTAL_CALLS = { full: 1_000, quick: 200 } as const;

function measurePortalLambda(servers: Servers, options: BenchOptions, initRuns: number) {
  console.log('bench: bundling the portal, timing its module init and its pages warm ...');
  return measurePortal({
    projectRoot: PROJECT_ROOT,
    outDirectory: RESULTS_DIR,
    config: accessConfig(servers, servers.redis, 'bench-portal', SETUPS.rest, options.reportWindowSeconds),
    providerKey: BENCH_PROVIDER_KEY,
    initRuns,
    callsPerPage: options.quick ? PORTAL_CALLS.quick : PORTAL_CALLS.full,
  });
}

/** `--portal-only`: the portal's figures alone, printed; no workload, no target, latest.json kept. */
async function portalOnly(options: BenchOptions, initRuns: number): Promise<number> {
  const loadAverageAtStart = os.loadavg()[0] as number;
  const servers = await startServers({}, new Set(), undefined, options.platformLatencyMs);
  try {
    await mkdir(RESULTS_DIR, { recursive: true });
    const portal = await measurePortalLambda(servers, options, initRuns);
    const machine = describeMachine(await redisVersionOf(servers.redis), loadAverageAtStart, 'not pinned');
    console.log(`\nMachine: ${machineLine(machine)}\n\n${portalLines(portal).join('\n')}`);
    return 0;
  } finally {
    await stopServers(servers);
  }
}

async function main(): Promise<number> {
  const argv = process.argv.slice(2);
  const options = parseBenchArgs(argv);
  checkWorkloadTable();
  const initRuns = options.quick ? 5 : 15;
  if (options.portalOnly) return portalOnly(options, initRuns);
  const startedAt = new Date().toISOString();
  const loadAverageAtStart = os.loadavg()[0] as number;
  const cpuAtStart = readCpu();
  const applications = applicationsOf(options.workloads, options.quick);
  console.log(
    `bench: report window ${options.reportWindowSeconds} s, SNS publish latency ${options.snsLatencyMs} ms, ` +
      `platform latency of the application workloads ${options.platformLatencyMs} ms, ` +
      `concurrency ${CONCURRENT} (1 for the serial workloads)${options.quick ? ', quick run' : ''}`,
  );
  const placement = pinBench(console.log);
  console.log(`bench: ${placementText(placement)}`);
  const servers = await startServers(
    applications,
    overLimitApplicationsOf(options.workloads, options.quick),
    placement,
    options.platformLatencyMs,
  );
  try {
    const redisVersion = await redisVersionOf(servers.redis);
    const onCluster = (workload: WorkloadName) => WORKLOADS[workload].redis === 'cluster';
    const results = await runOn(
      servers.redis,
      servers,
      options.workloads.filter((workload) => !onCluster(workload)),
      options.quick,
      options,
    );
    const logBytes = options.workloads.includes('hot')
      ? await hotLogBytes(servers, options, options.quick)
      : undefined;
    const clusterWorkloads = options.workloads.filter(onCluster);
    if (clusterWorkloads.length > 0) {
      console.log(`bench: starting a local Redis cluster of ${CLUSTER_PRIMARIES} primaries ...`);
      const cluster = await startCluster(placement);
      try {
        results.push(...(await runOn(cluster, servers, clusterWorkloads, options.quick, options)));
      } finally {
        await stopRedis(cluster);
      }
    }
    const workloads = options.workloads.flatMap((workload) =>
      results.filter((result) => result.workload === workload),
    );
    if (placement !== undefined) pinProcess(process.pid, placement.allCpus);
    console.log('bench: bundling the authorizer and timing its module init ...');
    const bundles = await measureAuthorizerBundles({
      projectRoot: PROJECT_ROOT,
      outDirectory: RESULTS_DIR,
      config: accessConfig(servers, servers.redis, 'bench-project', SETUPS.rest, options.reportWindowSeconds),
      initRuns,
    });
    const portal = await measurePortalLambda(servers, options, initRuns);

    const find = resultsBy(workloads);
    const comparisons = evaluateComparisons(comparedFigures(find));
    const cpuAtEnd = readCpu();
    const otherCpu =
      cpuAtStart && cpuAtEnd ? otherCpuPerCore(cpuAtStart, cpuAtEnd, os.cpus().length) : undefined;
    const targets = evaluateTargets(
      targetInputsOf({
        reportWindowSeconds: options.reportWindowSeconds,
        find,
        bundles,
        ...(logBytes && { logBytes }),
        loadPerCore: {
          start: loadAverageAtStart / os.cpus().length,
          end: (os.loadavg()[0] as number) / os.cpus().length,
        },
        ...(otherCpu !== undefined && { otherCpuPerCore: otherCpu }),
      }),
    ).concat(comparisonTargets(comparisons));
    const report: BenchReport = {
      startedAt,
      command: ['npm run bench', ...(argv.length > 0 ? ['--', ...argv] : [])].join(' '),
      machine: describeMachine(redisVersion, loadAverageAtStart, placementText(placement), otherCpu),
      settings: {
        quick: options.quick,
        snsLatencyMs: options.snsLatencyMs,
        reportWindowSeconds: options.reportWindowSeconds,
        concurrency: CONCURRENT,
        initRuns,
      },
      workloads,
      bundles,
      portal,
      comparisons,
      targets,
      soundness: soundnessProblems(workloads, REFUSED_WORKLOADS),
      errorSamples,
    };
    console.log(`\n${formatReport(report)}`);
    await mkdir(RESULTS_DIR, { recursive: true });
    const latest = path.join(RESULTS_DIR, 'latest.json');
    await writeFile(latest, `${JSON.stringify(report, null, 2)}\n`);
    console.log(`\nbench: results written to ${path.relative(PROJECT_ROOT, latest)}`);
    const failed = targets.filter((target) => !target.pass);
    return options.check && (failed.length > 0 || report.soundness.length > 0) ? 1 : 0;
  } finally {
    await stopServers(servers);
  }
}

const watchdog = setTimeout(() => {
  console.error(`bench: still running after ${WATCHDOG_MS / 60_000} minutes; giving up`);
  process.exit(2);
}, WATCHDOG_MS);
watchdog.unref();

main().then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    console.error(error instanceof UsageError ? error.message : error);
    process.exitCode = error instanceof UsageError ? 64 : 1;
  },
);
