/** What a benchmark run found, and how it is printed: the console table is the README's table. */
import os from 'node:os';
import { type BundleComposition, MODE_LAZY_PACKAGES } from './bundle';
import type { ComparisonResult } from './comparisons';
import type { PortalResult } from './portal';
import type { LatencySummary } from './stats';
import type { TargetResult } from './target-result';

/**
 * `project`: this project (the authorizer, or the application behind the plugin); `baseline`: the original
 * design of the same integration; `unprotected`: the application with no access check at all.
 */
export type Design = 'project' | 'baseline' | 'unprotected';
export type WorkloadName =
  | 'hot'
  | 'spread'
  | 'spread-cluster'
  | 'cold'
  | 'hot-serial'
  | 'http-v2-serial'
  | 'app-id-serial'
  | 'oauth'
  | 'soap'
  | 'hot-alerts-off'
  | 'hot-alerts-on'
  | 'throttled-serial'
  | 'flood-over-limit'
  | 'flood-throttled'
  | 'flood-unknown-keys'
  | 'hot-without-flood'
  | 'app-serial'
  | 'app-hot'
  | 'app-refused';

/** One primary of a cluster run: what it served and what that cost it. */
export interface PrimaryFigures {
  readonly address: string;
  /** Hash slots it owns. */
  readonly slots: number;
  /** Workload keys whose credential hashes to its slots. */
  readonly keys: number;
  /** Authorizations of the workload on those keys: each runs its scripts on this primary only. */
  readonly authorizations: number;
  /** Commands it executed (INFO commandstats, those inside scripts included). */
  readonly commandsExecuted: number;
  /** Its server CPU time (INFO cpu) over the run. */
  readonly serverCpuMicros: number;
}

export interface WorkloadResult {
  readonly workload: WorkloadName;
  readonly design: Design;
  readonly calls: number;
  readonly keys: number;
  readonly endpoints: number;
  readonly concurrency: number;
  readonly warmupCalls: number;
  readonly durationMs: number;
  /** From the first call of the workload's keys (the hot key's priming call included) to the end of the run. */
  readonly spanMs: number;
  readonly authorizationsPerSecond: number;
  /** An interleaved workload's throughput in each round (calls per second of its chunk), in round order. */
  readonly roundThroughputs?: readonly number[];
  /** An interleaved workload's Redis server CPU per authorization in each round (µs, of its chunk), in round order. */
  readonly roundRedisCpuMicrosPerCall?: readonly number[];
  /** The same of its Redis script time per authorization (µs, INFO commandstats), in round order. */
  readonly roundScriptMicrosPerCall?: readonly number[];
  readonly latency: LatencySummary;
  /**
   * CPU time of the bench process over the measured calls, per call: the authorizer's or proxy's own work,
   * and the in-process platform and SNS endpoint's. Less skewed by other load on the machine than latency.
   */
  readonly processCpuMicrosPerCall: number;
  /** allow / deny / unauthorized / error counts, as API Gateway would read the answers. */
  readonly outcomes: Readonly<Partial<Record<string, number>>>;
  readonly redis: {
    /** Commands the authorizer's client sent (round trips, pipelines counted per command). */
    readonly sentPerAuthorization: number;
    /** INFO commandstats: commands the server executed, those run inside Lua scripts included. */
    readonly executedPerAuthorization: number;
    readonly executedByCommand: ReadonlyArray<readonly [string, number]>;
    /** Redis server CPU time (INFO cpu) over the run, per authorization. */
    readonly serverCpuMicrosPerAuthorization: number;
    /**
     * The server's own time executing scripts (INFO commandstats usec of EVALSHA and the like, their
     * commands included: bench/commandstats.ts `SCRIPT_COMMANDS`) over the run, per authorization.
     */
    readonly scriptMicrosPerAuthorization: number;
  };
  readonly snsPublishes: number;
  readonly platformCalls: PlatformCalls;
  readonly flush: { readonly durationMs: number; readonly platformCalls: PlatformCalls };
  /** Usage the platform recorded for the workload's keys after the flush, against the allowed calls. */
  readonly reportedUsage: { readonly allowed: number; readonly reported: number };
  /** Hot workload: the first call of the key, made before the measured calls. */
  readonly prime?: { readonly latencyMs: number; readonly platformCalls: number };
  /** Cluster workloads, project design: each primary's part. */
  readonly primaries?: readonly PrimaryFigures[];
  /** flood-unknown-keys: the made-up keys called beside the measured calls. */
  readonly unknownKeyFlood?: UnknownKeyFloodFigures;
}

export interface UnknownKeyFloodFigures {
  /** Made-up keys the run had; each is called at most once. */
  readonly keys: number;
  readonly calls: number;
  readonly callers: number;
  /** By reason: `deny platform_busy` for the calls refused at once. */
  readonly outcomes: Readonly<Partial<Record<string, number>>>;
  /** Counted at the local platform while the flood ran. */
  readonly platformCalls: PlatformCalls;
  /** Distinct seconds (epoch, the first-call bound's own) the flood's chunks touched. */
  readonly gateSeconds: number;
  /** Every key was used: calls beside the flood may have gone on without it. */
  readonly ranOut: boolean;
}

export interface PlatformCalls {
  readonly total: number;
  readonly byEndpoint: Readonly<Record<string, number>>;
}

export interface BundleResult {
  readonly sdk: 'external' | 'bundled';
  /** The Node.js binary init was measured on. */
  readonly node: string;
  /** Bytes module init reads. */
  readonly minifiedBytes: number;
  /** Bytes of each package loaded on first use. */
  readonly lazyBytes: Readonly<Record<string, number>>;
  readonly initMedianMs: number;
  readonly initSamplesMs: readonly number[];
  /** The old module init: the bundle, the SNS SDK and every lazy package loaded at once (same processes). */
  readonly eagerInitMedianMs: number;
  /** What the first publish adds: the SNS SDK and its client. */
  readonly firstPublishMedianMs: number;
  /** What each lazily loaded package adds on its first use. */
  readonly lazyMedianMs: Readonly<Record<string, number>>;
  readonly largestModules: readonly BundleComposition[];
}

export interface Machine {
  readonly cpuModel: string;
  readonly cpuCount: number;
  readonly memoryGiB: number;
  readonly node: string;
  readonly os: string;
  readonly redis: string;
  /** 1-minute load average when the run started and when it ended: other work on the machine skews every figure. */
  readonly loadAverage: { readonly atStart: number; readonly atEnd: number };
  /**
   * Other processes' CPU during the run, per core (other-load.ts): the end's load average mostly counts the
   * bench itself. Absent where /proc cannot say.
   */
  readonly otherCpuPerCore?: number;
  /** Which CPUs Redis and the bench ran on (placement.ts). */
  readonly placement: string;
}

export interface BenchReport {
  /** The portal's Lambda (bench/portal.ts); absent from reports written before it was measured. */
  readonly portal?: PortalResult;
  readonly startedAt: string;
  readonly command: string;
  readonly machine: Machine;
  readonly settings: {
    readonly quick: boolean;
    readonly snsLatencyMs: number;
    readonly reportWindowSeconds: number;
    readonly concurrency: number;
    readonly initRuns: number;
  };
  readonly workloads: readonly WorkloadResult[];
  readonly bundles: readonly BundleResult[];
  /** Workloads read against others of the same run (the SOAP proxy's overhead, the token's, the alerts'). */
  readonly comparisons: readonly ComparisonResult[];
  readonly targets: readonly TargetResult[];
  /** Why the figures cannot be trusted (calls not allowed, usage not reported); empty in a sound run. */
  readonly soundness: readonly string[];
  /** The first few unexpected errors or malformed answers; none in a sound run. */
  readonly errorSamples: readonly string[];
}

/** Called at the end of the run, with the load average read at its start. */
export function describeMachine(
  redisVersion: string,
  loadAverageAtStart: number,
  placement: string,
  otherCpuPerCore?: number,
): Machine {
  const cpus = os.cpus();
  return {
    cpuModel: cpus[0]?.model.trim() ?? 'unknown',
    cpuCount: cpus.length,
    memoryGiB: Math.round((os.totalmem() / 2 ** 30) * 10) / 10,
    node: process.version,
    os: `${os.type()} ${os.release()} ${os.arch()}`,
    redis: redisVersion,
    loadAverage: { atStart: loadAverageAtStart, atEnd: os.loadavg()[0] as number },
    ...(otherCpuPerCore !== undefined && { otherCpuPerCore }),
    placement,
  };
}

export function markdownTable(headers: readonly string[], rows: ReadonlyArray<readonly string[]>): string {
  const widths = headers.map((header, i) =>
    Math.max(header.length, ...rows.map((row) => (row[i] ?? '').length)),
  );
  const line = (cells: readonly string[]) =>
    `| ${cells.map((cell, i) => cell.padEnd(widths[i] as number)).join(' | ')} |`;
  return [line(headers), line(widths.map((width) => '-'.repeat(width))), ...rows.map(line)].join('\n');
}

const number = (value: number, digits = 0) =>
  value.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });

function outcomesText(outcomes: Readonly<Partial<Record<string, number>>>): string {
  return Object.entries(outcomes)
    .filter((entry): entry is [string, number] => entry[1] !== undefined)
    .sort((a, b) => b[1] - a[1])
    .map(([outcome, count]) => `${outcome} ${number(count)}`)
    .join(', ');
}

export function workloadTable(workloads: readonly WorkloadResult[]): string {
  return markdownTable(
    [
      'workload',
      'design',
      'calls',
      'callers',
      'auth/s',
      'p50 ms',
      'p99 ms',
      'process CPU µs/call',
      'Redis cmds/auth sent',
      'Redis cmds/auth executed',
      'Redis CPU µs/auth',
      'SNS publishes',
      'platform calls',
      'platform calls in flush',
      'reported / allowed',
      'answers',
    ],
    workloads.map((w) => [
      w.workload,
      w.design,
      number(w.calls),
      String(w.concurrency),
      number(w.authorizationsPerSecond),
      number(w.latency.p50Ms, 3),
      number(w.latency.p99Ms, 3),
      number(w.processCpuMicrosPerCall, 1),
      number(w.redis.sentPerAuthorization, 3),
      number(w.redis.executedPerAuthorization, 3),
      number(w.redis.serverCpuMicrosPerAuthorization, 1),
      number(w.snsPublishes),
      number(w.platformCalls.total),
      number(w.flush.platformCalls.total),
      `${number(w.reportedUsage.reported)} / ${number(w.reportedUsage.allowed)}`,
      outcomesText(w.outcomes),
    ]),
  );
}

/** Each primary's part of the cluster runs (project design), beside the even split it should be near. */
export function primaryTable(workloads: readonly WorkloadResult[]): string[] {
  return workloads.flatMap((w) => {
    if (!w.primaries) return [];
    const total = w.primaries.reduce((sum, p) => sum + p.authorizations, 0);
    const even = total / w.primaries.length;
    return [
      `${w.workload} / ${w.design}, per primary (${number(w.keys)} keys):`,
      '',
      markdownTable(
        [
          'primary',
          'slots',
          'keys',
          'authorizations',
          'share',
          'vs even split',
          'Redis cmds executed',
          'Redis CPU µs/auth',
        ],
        w.primaries.map((p) => [
          p.address,
          number(p.slots),
          number(p.keys),
          number(p.authorizations),
          `${number((100 * p.authorizations) / total, 1)}%`,
          `${p.authorizations >= even ? '+' : ''}${number((100 * (p.authorizations - even)) / even, 1)}%`,
          number(p.commandsExecuted),
          number(p.serverCpuMicros / Math.max(p.authorizations, 1), 1),
        ]),
      ),
      '',
    ];
  });
}

const kilobytes = (bytes: number) => `${number(bytes / 1000, 1)} KB`;

export function bundleTable(bundles: readonly BundleResult[]): string {
  return markdownTable(
    [
      'authorizer bundle',
      'node',
      'read at init',
      'module init (median)',
      'all at init, as before (median)',
      'first publish adds',
      'first use adds',
      'largest parts',
    ],
    bundles.map((b) => [
      b.sdk === 'external' ? '@aws-sdk/* external (the Lambda runtime’s SDK)' : '@aws-sdk/* bundled',
      b.node,
      kilobytes(b.minifiedBytes),
      `${number(b.initMedianMs, 1)} ms`,
      `${number(b.eagerInitMedianMs, 1)} ms`,
      `${number(b.firstPublishMedianMs, 1)} ms`,
      Object.entries(b.lazyMedianMs)
        .map(([name, ms]) => `${name} ${number(ms, 1)} ms`)
        .join(', '),
      b.largestModules
        .slice(0, 5)
        .map((m) => `${m.module} ${number(m.bytes / 1000, 1)} KB`)
        .join(', '),
    ]),
  );
}

/** The portal's Lambda: its shipped bundle's module init on each Node.js, and its main pages warm. */
export function portalLines(portal: PortalResult): string[] {
  return [
    markdownTable(
      ['portal bundle (@aws-sdk/* external)', 'node', 'read at init', 'module init (median)'],
      portal.init.map((i) => [
        'lambdas/portal',
        i.node,
        kilobytes(i.minifiedBytes),
        `${number(i.initMedianMs, 1)} ms`,
      ]),
    ),
    '',
    markdownTable(
      ['portal page, warm (GET through its handler)', 'calls', 'p50', 'p95'],
      portal.pages.map((p) => [
        p.page,
        String(p.calls),
        `${number(p.p50Ms, 2)} ms`,
        `${number(p.p95Ms, 2)} ms`,
      ]),
    ),
    '',
  ];
}

/** Each credential mode's bytes: what init reads, what its first calls add. */
export function modeBundleTable(bundle: BundleResult): string {
  return markdownTable(
    ['credential mode', 'read at init', 'loaded on first use', 'total'],
    Object.entries(MODE_LAZY_PACKAGES).map(([mode, packages]) => {
      const lazy = packages.reduce((sum, name) => sum + (bundle.lazyBytes[name] ?? 0), 0);
      return [
        mode,
        kilobytes(bundle.minifiedBytes),
        packages.map((name) => `${name} ${kilobytes(bundle.lazyBytes[name] ?? 0)}`).join(', '),
        kilobytes(bundle.minifiedBytes + lazy),
      ];
    }),
  );
}

export function comparisonTable(comparisons: readonly ComparisonResult[]): string {
  return markdownTable(
    ['same run', 'workload', 'figure', 'against', 'figure', 'difference', 'target'],
    comparisons.map((c) => [
      c.what,
      c.workload,
      c.figures[0],
      c.against,
      c.figures[1],
      c.difference,
      c.target ? `${c.target.text}: ${c.target.pass ? 'PASS' : 'FAIL'}` : '(figure only)',
    ]),
  );
}

export function targetTable(targets: readonly TargetResult[]): string {
  return markdownTable(
    ['target', 'measured', 'result'],
    targets.map((t) => [
      t.target,
      t.notJudged === undefined ? t.measured : `${t.measured} (${t.notJudged})`,
      t.notJudged !== undefined ? 'NOT JUDGED' : t.pass ? 'PASS' : 'FAIL',
    ]),
  );
}

/**
 * The hot key's first call, and what each of its later authorizations ran inside Redis (a script's own
 * commands show up next to its EVALSHA); a Markdown list, like the tables.
 */
export function hotKeyLines(workloads: readonly WorkloadResult[]): string[] {
  return workloads
    .filter((w) => w.workload === 'hot')
    .flatMap((w) => [
      ...(w.prime
        ? [
            `- Hot key first call (the cache miss, before the measured calls), ${w.design}: ` +
              `${number(w.prime.latencyMs, 3)} ms, ${w.prime.platformCalls} platform call(s)`,
          ]
        : []),
      `- Redis commands executed per hot-key authorization, ${w.design}: ` +
        w.redis.executedByCommand
          .map(([command, calls]) => `${command} ${number(calls / w.calls, 2)}`)
          .join(', '),
    ]);
}

/** The made-up keys called beside a workload: their answers and the platform calls they made. */
export function unknownKeyFloodLines(workloads: readonly WorkloadResult[]): string[] {
  return workloads.flatMap(({ workload, design, unknownKeyFlood: flood }) =>
    flood
      ? [
          `- Made-up keys beside ${workload}, ${design}: ${number(flood.calls)} calls of ${number(flood.keys)} keys ` +
            `(${flood.callers} callers): ${outcomesText(flood.outcomes)}; ${number(flood.platformCalls.total)} ` +
            `platform calls over ${flood.gateSeconds} s (${number(flood.platformCalls.total / flood.gateSeconds, 1)} per second)`,
        ]
      : [],
  );
}

export function machineLine(machine: Machine): string {
  return (
    `${machine.cpuModel} x ${machine.cpuCount}, ${machine.memoryGiB} GiB, ${machine.os}, ` +
    `Node ${machine.node}, redis-server ${machine.redis}; 1-min load average ` +
    `${machine.loadAverage.atStart.toFixed(2)} at start, ${machine.loadAverage.atEnd.toFixed(2)} at end` +
    (machine.otherCpuPerCore === undefined
      ? ''
      : `; other processes' CPU during the run ${machine.otherCpuPerCore.toFixed(2)} per core`)
  );
}

export function formatReport(report: BenchReport): string {
  const { settings } = report;
  return [
    `Machine: ${machineLine(report.machine)}`,
    `Placement: ${report.machine.placement}`,
    `Command: ${report.command}`,
    `Settings: report window ${settings.reportWindowSeconds} s, simulated SNS publish latency ` +
      `${settings.snsLatencyMs} ms (project and baseline alike), concurrency ${settings.concurrency}` +
      `${settings.quick ? ', QUICK run (smaller, noisier)' : ''}. Warm-up calls (other keys) run before each ` +
      'measured run and are excluded; the hot key’s first call (the cache miss) is made before its measured calls.',
    '',
    workloadTable(report.workloads),
    '',
    ...primaryTable(report.workloads),
    ...hotKeyLines(report.workloads),
    ...unknownKeyFloodLines(report.workloads),
    '',
    bundleTable(report.bundles),
    '',
    ...(report.bundles[0] ? [modeBundleTable(report.bundles[0]), ''] : []),
    ...(report.portal ? portalLines(report.portal) : []),
    comparisonTable(report.comparisons),
    '',
    targetTable(report.targets),
    '',
    report.soundness.length === 0
      ? 'Soundness: every measured call was allowed, and after the flush the platform recorded exactly the allowed calls.'
      : `UNSOUND RUN, the figures above cannot be trusted:\n- ${report.soundness.join('\n- ')}`,
    ...(report.errorSamples.length > 0 ? ['', `Errors seen: ${report.errorSamples.join(' | ')}`] : []),
  ].join('\n');
}
