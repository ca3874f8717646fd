/**
 * What `npm run bench` runs, as data: the project's set-ups (one per configuration the bench compares)
 * and the workloads, each with its sizes, designs, Redis, set-up and concurrency. A new workload is one
 * entry here; measure.ts wires whatever the table names.
 */
import type { AccessConfigInput } from '../core/settings/config';
import {
  BENCH_APP_ID_SERVICE_ID,
  BENCH_OAUTH_SERVICE_ID,
  BENCH_SERVICE_ID,
  type BenchServiceId,
  PLAN,
  SOAP_MAPPING_RULES,
} from './fixture';
import type { Design, WorkloadName } from './report';

/**
 * How a call reaches the project: the REQUEST authorizer (the key header, the app id header without a key,
 * or a Bearer token), the SOAP proxy, or an application's HTTP server (the plugin, app-system.ts).
 */
export type RequestShape = 'rest' | 'http-v2' | 'app-id' | 'bearer' | 'soap' | 'app';

export type SetupName =
  | 'rest'
  | 'http-v2'
  | 'app-id'
  | 'oauth'
  | 'soap'
  | 'alerts-on'
  | 'alerts-off'
  | 'throttled'
  | 'throttle-flood'
  | 'first-call-bound'
  | 'app';

export interface Setup {
  readonly request: RequestShape;
  readonly serviceId: BenchServiceId;
  /** Settings over the bench's configuration; `issuer` is the bench's token issuer URL. */
  readonly settings: (issuer: string) => Partial<AccessConfigInput>;
  /** The reporter publishes usage alerts to an alerts topic on the local SNS endpoint. */
  readonly alerts: boolean;
  /**
   * `held`: report messages wait until the flush, so the reporter's platform calls are counted apart.
   * `live`: delivered one report window after they are sent (the queue delay of the stack), so the
   * reporter runs during the measured calls and shares the process with the authorizer.
   */
  readonly delivery: 'held' | 'live';
}

/** The report window of the live set-ups: short, so the reporter runs several times during a run. */
export const LIVE_REPORT_WINDOW_SECONDS = 1;

/**
 * `unseenCredentialCallsPerSecond` of the flood-unknown-keys pair: half the default, and far below what a
 * flood of 32 callers makes, so the bound is what limits the platform calls.
 */
export const FLOOD_UNSEEN_CALLS_PER_SECOND = 50;

const live = { reportWindowSeconds: LIVE_REPORT_WINDOW_SECONDS };

export const SETUPS: Readonly<Record<SetupName, Setup>> = {
  rest: {
    request: 'rest',
    serviceId: BENCH_SERVICE_ID,
    settings: () => ({}),
    alerts: false,
    delivery: 'held',
  },
  // The same calls as rest, through an HTTP API's payload 2.0 adapter and its simple responses.
  'http-v2': {
    request: 'http-v2',
    serviceId: BENCH_SERVICE_ID,
    settings: () => ({}),
    alerts: false,
    delivery: 'held',
  },
  // What a token becomes once verified: an application id without a key.
  'app-id': {
    request: 'app-id',
    serviceId: BENCH_APP_ID_SERVICE_ID,
    settings: () => ({ credentialMode: 'app_id' }),
    alerts: false,
    delivery: 'held',
  },
  oauth: {
    request: 'bearer',
    serviceId: BENCH_OAUTH_SERVICE_ID,
    settings: (issuer) => ({ credentialMode: 'oauth', oidcIssuer: issuer }),
    alerts: false,
    delivery: 'held',
  },
  soap: {
    request: 'soap',
    serviceId: BENCH_SERVICE_ID,
    settings: () => ({ mappingRules: SOAP_MAPPING_RULES }),
    alerts: false,
    delivery: 'held',
  },
  // A throttle on the bench's plan that never refuses: what the GCRA in the script costs an allowed call.
  throttled: {
    request: 'rest',
    serviceId: BENCH_SERVICE_ID,
    settings: () => ({ throttles: { [PLAN]: { rate: 1_000_000, burst: 1_000_000 } } }),
    alerts: false,
    delivery: 'held',
  },
  /**
   * A throttle on the bench's plan that admits the key's first call and then refuses for 1,000 s (one call
   * at once, one per 1,000 s after): every measured call of the throttled flood is `rate_limited`.
   */
  'throttle-flood': {
    request: 'rest',
    serviceId: BENCH_SERVICE_ID,
    settings: () => ({ throttles: { [PLAN]: { rate: 0.001, burst: 1 } } }),
    alerts: false,
    delivery: 'held',
  },
  // The bound on platform calls for credentials never seen, set here so the flood's figure is read against it.
  'first-call-bound': {
    request: 'rest',
    serviceId: BENCH_SERVICE_ID,
    settings: () => ({ unseenCredentialCallsPerSecond: FLOOD_UNSEEN_CALLS_PER_SECOND }),
    alerts: false,
    delivery: 'held',
  },
  // An Express app called over HTTP, the key in the header: behind the plugin, the original plugin design or nothing.
  app: {
    request: 'app',
    serviceId: BENCH_SERVICE_ID,
    settings: () => ({}),
    alerts: false,
    delivery: 'held',
  },
  // The default levels (80 and 100 %), never reached: the fixture's limits are out of reach.
  'alerts-on': {
    request: 'rest',
    serviceId: BENCH_SERVICE_ID,
    settings: () => ({ ...live, alertLevels: [80, 100] }),
    alerts: true,
    delivery: 'live',
  },
  'alerts-off': {
    request: 'rest',
    serviceId: BENCH_SERVICE_ID,
    settings: () => ({ ...live, alertLevels: [] }),
    alerts: true,
    delivery: 'live',
  },
};

export interface WorkloadSize {
  readonly calls: number;
  readonly keys: number;
  readonly endpoints: number;
  readonly warmupCalls: number;
  readonly warmupKeys: number;
}

export interface Workload {
  readonly full: WorkloadSize;
  /** `--quick`. */
  readonly quick: WorkloadSize;
  readonly designs: readonly Design[];
  readonly redis: 'single' | 'cluster';
  /** The project's set-up (the baseline has one). */
  readonly setup: SetupName;
  /** Callers at once; 1 times each call alone, so a latency difference is a cost, not queueing. */
  readonly concurrency: number;
  /** The key's first call (the cache miss) is made apart, so every measured call is a cache hit. */
  readonly primed: boolean;
  /**
   * Workloads of one group are read against each other, so they run in alternating rounds (see
   * `interleavedChunks`): drift over the run (JIT, heap growth, other load) then weighs on each alike.
   */
  readonly group?: InterleaveGroup;
  /**
   * Every measured call must be refused. `over-limit`: its applications are on a plan that allows no call
   * (issue 23's refused flood, `limits_exceeded`); `throttled`: its set-up's throttle refuses every call
   * after the first (`rate_limited`).
   */
  readonly refused?: 'over-limit' | 'throttled';
  /**
   * Made-up keys, never issued, each called once by `callers` callers at the same time as the measured
   * calls, until they end (issue 23's flood of unknown keys); at most `keys` of them in a run.
   */
  readonly unknownKeyFlood?: {
    readonly keys: { readonly full: number; readonly quick: number };
    readonly callers: number;
  };
}

export type InterleaveGroup = 'serial' | 'alerts' | 'flood' | 'cold';

/** How many rounds a group runs in (full run, `--quick`): each member's calls are split into that many chunks. */
export const GROUP_ROUNDS: Readonly<
  Record<InterleaveGroup, { readonly full: number; readonly quick: number }>
> = {
  // Chunks of 500 (quick 200) calls of about a millisecond each.
  serial: { full: 40, quick: 5 },
  // Chunks of 6,000 (quick 5,000) calls: a chunk spans a few report windows, so the reporter runs inside it.
  alerts: { full: 20, quick: 4 },
  // Chunks of 1,000 (quick 500) calls of the hot key, with and without the flood beside it.
  flood: { full: 10, quick: 8 },
  // Chunks of 100 (quick 50) first calls of each design. The designs share the platform client, its XML
  // parser and the local platform: run one after the other, the second ran on code the first had warmed,
  // and its throughput read twice the first's whichever it was (docs/performance.md).
  cold: { full: 10, quick: 4 },
};

/** Where a member's calls start and how many it makes in one chunk. */
export interface Chunk<Member> {
  readonly member: Member;
  readonly from: number;
  readonly count: number;
}

/**
 * The order in which a group's members make their calls: `rounds` rounds, the members in order, then in
 * reverse order, and so on, so none is always first after the other (a run is one chunk when alone). A
 * member's calls are split as evenly as its count allows, every call in exactly one chunk.
 */
export function interleavedChunks<Member>(
  members: ReadonlyArray<{ readonly member: Member; readonly calls: number }>,
  rounds: number,
): Chunk<Member>[] {
  if (!Number.isInteger(rounds) || rounds < 1)
    throw new RangeError(`rounds must be a positive integer: ${rounds}`);
  const chunks: Chunk<Member>[] = [];
  for (let round = 0; round < rounds; round++) {
    const order = round % 2 === 0 ? members : [...members].reverse();
    for (const { member, calls } of order) {
      const from = Math.floor((calls * round) / rounds);
      const count = Math.floor((calls * (round + 1)) / rounds) - from;
      if (count > 0) chunks.push({ member, from, count });
    }
  }
  return chunks;
}

/** The concurrent workloads' callers (the serial ones have one). */
export const CONCURRENT = 32;
const SERIAL = 1;
const BOTH: readonly Design[] = ['project', 'baseline'];
/** The application: bare, behind the plugin, behind the original plugin design. */
const APP_DESIGNS: readonly Design[] = ['unprotected', 'project', 'baseline'];
const PROJECT: readonly Design[] = ['project'];

const hotKey = (calls: number, warmupCalls: number): WorkloadSize => ({
  calls,
  keys: 1,
  endpoints: 1,
  warmupCalls,
  warmupKeys: 1,
});

/** One caller at a time on one cached key: the per-call costs of the credential kinds and the SOAP proxy. */
const serialHotKey = {
  full: hotKey(20_000, 500),
  quick: hotKey(1_000, 200),
  designs: PROJECT,
  redis: 'single',
  concurrency: SERIAL,
  primed: true,
  group: 'serial',
} as const;

/** The alerts pair: long enough for the reporter to run every report window several times over. */
const liveHotKey = {
  full: hotKey(120_000, 2_000),
  quick: hotKey(20_000, 500),
  designs: PROJECT,
  redis: 'single',
  concurrency: CONCURRENT,
  primed: true,
  group: 'alerts',
} as const;

/** The hot key of the unknown-key flood pair: 32 callers, as the hot workload. */
const hotBesideFlood = {
  full: hotKey(10_000, 1_000),
  quick: hotKey(4_000, 500),
  designs: PROJECT,
  redis: 'single',
  setup: 'first-call-bound',
  concurrency: CONCURRENT,
  primed: true,
  group: 'flood',
} as const;

/** The original design's workloads: both designs side by side, 32 callers, keys in the header. */
const sideBySide = { designs: BOTH, setup: 'rest', concurrency: CONCURRENT } as const;

const spreadFull: WorkloadSize = {
  calls: 20_000,
  keys: 1_000,
  endpoints: 5,
  warmupCalls: 2_000,
  warmupKeys: 20,
};

/**
 * In run order; the members of a group run together, in rounds, where the first of them stands. spread-cluster
 * keeps its 1,000 keys in --quick.
 */
export const WORKLOADS: Readonly<Record<WorkloadName, Workload>> = {
  hot: {
    ...sideBySide,
    full: hotKey(20_000, 2_000),
    quick: hotKey(4_000, 500),
    redis: 'single',
    primed: true,
  },
  spread: {
    ...sideBySide,
    full: spreadFull,
    quick: { calls: 4_000, keys: 200, endpoints: 5, warmupCalls: 500, warmupKeys: 10 },
    redis: 'single',
    primed: false,
  },
  'spread-cluster': {
    ...sideBySide,
    full: spreadFull,
    quick: { calls: 6_000, keys: 1_000, endpoints: 5, warmupCalls: 500, warmupKeys: 10 },
    redis: 'cluster',
    primed: false,
  },
  cold: {
    ...sideBySide,
    full: { calls: 1_000, keys: 1_000, endpoints: 1, warmupCalls: 100, warmupKeys: 100 },
    quick: { calls: 200, keys: 200, endpoints: 1, warmupCalls: 50, warmupKeys: 50 },
    redis: 'single',
    primed: false,
    group: 'cold',
  },
  // The baseline awaits an SNS publish per call: one caller at a time would take minutes.
  'hot-serial': { ...serialHotKey, setup: 'rest' },
  'http-v2-serial': { ...serialHotKey, setup: 'http-v2' },
  'app-id-serial': { ...serialHotKey, setup: 'app-id' },
  oauth: { ...serialHotKey, setup: 'oauth' },
  soap: { ...serialHotKey, setup: 'soap' },
  'throttled-serial': { ...serialHotKey, setup: 'throttled' },
  'hot-alerts-off': { ...liveHotKey, setup: 'alerts-off' },
  'hot-alerts-on': { ...liveHotKey, setup: 'alerts-on' },
  // One application over its limit that keeps calling: read against the hot key's allowed calls.
  'flood-over-limit': {
    full: hotKey(20_000, 2_000),
    quick: hotKey(4_000, 500),
    designs: PROJECT,
    redis: 'single',
    setup: 'rest',
    concurrency: CONCURRENT,
    primed: true,
    refused: 'over-limit',
  },
  // One application over its per-second throttle that keeps calling (issue 34): refused from memory.
  'flood-throttled': {
    full: hotKey(20_000, 2_000),
    quick: hotKey(4_000, 500),
    designs: PROJECT,
    redis: 'single',
    setup: 'throttle-flood',
    concurrency: CONCURRENT,
    primed: true,
    refused: 'throttled',
  },
  // The hot key's calls while made-up keys flood, against the same hot key alone, in alternating rounds.
  'flood-unknown-keys': {
    ...hotBesideFlood,
    unknownKeyFlood: { keys: { full: 10_000, quick: 4_000 }, callers: CONCURRENT },
  },
  'hot-without-flood': hotBesideFlood,
  // One caller: what the plugin adds to the app's own p50, and the original design's p50 (an authrep each).
  'app-serial': {
    full: hotKey(2_000, 200),
    quick: hotKey(300, 100),
    designs: APP_DESIGNS,
    redis: 'single',
    setup: 'app',
    concurrency: SERIAL,
    primed: true,
    group: 'serial',
  },
  'app-hot': {
    full: hotKey(20_000, 2_000),
    quick: hotKey(3_000, 500),
    designs: APP_DESIGNS,
    redis: 'single',
    setup: 'app',
    concurrency: CONCURRENT,
    primed: true,
  },
  // One application over its limit that keeps calling the app: refused from the plugin's memory.
  'app-refused': {
    full: hotKey(20_000, 2_000),
    quick: hotKey(3_000, 300),
    designs: PROJECT,
    redis: 'single',
    setup: 'app',
    concurrency: CONCURRENT,
    primed: true,
    refused: 'over-limit',
  },
};

function workloadsWhere(refused: (workload: Workload) => boolean): ReadonlySet<string> {
  return new Set(
    Object.entries(WORKLOADS)
      .filter(([, workload]) => refused(workload))
      .map(([name]) => name),
  );
}

/** The workloads every measured call of which must be refused. */
export const REFUSED_WORKLOADS = workloadsWhere((workload) => workload.refused !== undefined);

/** The workloads whose applications are on the plan that allows no call. */
export const OVER_LIMIT_WORKLOADS = workloadsWhere((workload) => workload.refused === 'over-limit');

export const WORKLOAD_NAMES = Object.keys(WORKLOADS) as WorkloadName[];

/**
 * The baseline is the original design on the key header: the authorizer's (rest) or the plugin's (app); it
 * has no other set-ups. An unprotected design is the application's only.
 */
export function checkWorkloadTable(workloads: Readonly<Record<string, Workload>> = WORKLOADS): void {
  for (const [workload, spec] of Object.entries(workloads)) {
    if (spec.designs.includes('baseline') && spec.setup !== 'rest' && spec.setup !== 'app') {
      throw new Error(`bench workload ${workload}: the baseline runs the rest and app set-ups only`);
    }
    if (spec.designs.includes('unprotected') && spec.setup !== 'app') {
      throw new Error(`bench workload ${workload}: only the app set-up runs unprotected`);
    }
  }
}

/** A workload as one design runs it. */
export interface Run {
  readonly workload: WorkloadName;
  readonly design: Design;
}

/**
 * The selected workloads as the bench runs them: runs of one group together, where the first of them
 * stands; every other workload and design alone, in order.
 */
export function runGroups(selected: readonly WorkloadName[]): Run[][] {
  const groups: Run[][] = [];
  const byGroup = new Map<InterleaveGroup, Run[]>();
  for (const workload of selected) {
    const { designs, group } = WORKLOADS[workload];
    const runs = designs.map((design) => ({ workload, design }));
    if (group === undefined) {
      groups.push(...runs.map((run) => [run]));
      continue;
    }
    const members = byGroup.get(group);
    if (members) {
      members.push(...runs);
    } else {
      byGroup.set(group, runs);
      groups.push(runs);
    }
  }
  return groups;
}
