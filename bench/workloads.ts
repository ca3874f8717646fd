/**
 * What `npm run bench` runs, as data: the project's set-ups (one per configuration the bench compares)
 * and the workloads, each with its sizes, designs, Redis, set-up and concurrency. A new workload is one
 * entry here; run.ts wires whatever the table names.
 */
import type { AccessConfigInput } from '../lambdas/core/config';
import { BENCH_OAUTH_SERVICE_ID, BENCH_SERVICE_ID, SOAP_MAPPING_RULES } from './fixture';
import type { Design, WorkloadName } from './report';

/** How a call reaches the project: the REQUEST authorizer (key header or Bearer token) or the SOAP proxy. */
export type RequestShape = 'rest' | 'bearer' | 'soap';

export type SetupName = 'rest' | 'oauth' | 'soap' | 'alerts-on' | 'alerts-off';

export interface Setup {
  readonly request: RequestShape;
  readonly serviceId: string;
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

const live = { reportWindowSeconds: LIVE_REPORT_WINDOW_SECONDS };

export const SETUPS: Readonly<Record<SetupName, Setup>> = {
  rest: {
    request: 'rest',
    serviceId: BENCH_SERVICE_ID,
    settings: () => ({}),
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
}

const CONCURRENT = 32;
const SERIAL = 1;
const BOTH: readonly Design[] = ['project', 'baseline'];
const PROJECT: readonly Design[] = ['project'];

const hotKey = (calls: number, warmupCalls: number): WorkloadSize => ({
  calls,
  keys: 1,
  endpoints: 1,
  warmupCalls,
  warmupKeys: 1,
});

/** One caller at a time on one cached key: the per-call cost beside which oauth and soap are read. */
const serialHotKey = {
  full: hotKey(5_000, 500),
  quick: hotKey(1_000, 200),
  redis: 'single',
  concurrency: SERIAL,
  primed: true,
} as const;

/** The alerts pair: long enough for the reporter to run every report window several times over. */
const liveHotKey = {
  full: hotKey(60_000, 2_000),
  quick: hotKey(20_000, 500),
  designs: PROJECT,
  redis: 'single',
  concurrency: CONCURRENT,
  primed: true,
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

/** In run order: the workloads a comparison reads together run close together. spread-cluster keeps its 1,000 keys in --quick. */
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
  },
  // The baseline awaits an SNS publish per call: one caller at a time would take minutes.
  'hot-serial': { ...serialHotKey, designs: PROJECT, setup: 'rest' },
  oauth: { ...serialHotKey, designs: PROJECT, setup: 'oauth' },
  soap: { ...serialHotKey, designs: PROJECT, setup: 'soap' },
  'hot-alerts-off': { ...liveHotKey, setup: 'alerts-off' },
  'hot-alerts-on': { ...liveHotKey, setup: 'alerts-on' },
};

export const WORKLOAD_NAMES = Object.keys(WORKLOADS) as WorkloadName[];
