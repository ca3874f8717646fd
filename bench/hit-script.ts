/**
 * `npm run bench:hit-script [-- <rounds> <calls per round>]`: a cache hit's script time, and where it goes.
 *
 * One budget on the bench's plan (hits limited per hour and per day, five methods under hits) is answered
 * and hit once through AccessCache, which gives the hit's KEYS and ARGV as the authorizer sends them (the
 * hints learnt, a deadline set, so TIME runs); a second budget on the same plan throttled (one throttle
 * on every call that never refuses, as the bench's throttled-serial) gives a throttled hit's. Then the
 * hit's script, the throttled hit's, the same script cut short after each of its steps
 * (hit-script-steps.ts) and `return 1` with the same arguments are called with EVALSHA, one
 * call at a time, in rounds that alternate their order; per round, CONFIG RESETSTAT and the `EVALSHA`
 * usec_per_call of `INFO commandstats`. Each figure is the median over the rounds, and the median of its
 * differences with the whole script in the same rounds. redis-server is pinned apart from this process
 * when taskset allows (placement.ts); the load average is printed at the start and the end.
 */
import type Redis from 'ioredis';
import { AccessCache } from '../core/budget/cache';
import { CHECK_SCRIPT } from '../core/budget/scripts/check-script';
import { BENCH_SERVICE_ID } from './fixture';
import { HIT_FLOOR_DESIGNS, type HitFloorDesign } from './hit-script-floors';
import { cutShortBefore, HIT_SCRIPT_STEPS, pairedFigures } from './hit-script-steps';
import { evalshaMicros, figureLine, startScriptBench } from './script-rounds';

const HOUR_MS = 3_600_000;
const DAY_MS = 24 * HOUR_MS;
/** The whole script on the same plan throttled: paired with the whole script, what a throttle adds. */
const THROTTLED = 'whole script, throttled';
const METHODS = ['word_read', 'word_write', 'word_list', 'word_delete', 'word_search'];

/** The throttle of the bench's `throttled` set-up (workloads.ts): one on every call that never refuses. */
const NEVER_REFUSING_THROTTLE = { rate: 1_000_000, burst: 1_000_000 };

/**
 * The hit's KEYS and ARGV as AccessCache sends them, after a first hit taught it the hints; with
 * `throttled`, of its own budget on the plan throttled as the bench's throttled-serial workload is.
 */
async function hitArguments(
  redis: Redis,
  throttled: boolean,
  credentialId: string,
): Promise<{ keys: string[]; argv: string[] }> {
  const cache = new AccessCache(redis, {
    serviceId: BENCH_SERVICE_ID,
    negativeTtlMs: 60_000,
    leaseMs: 30_000,
    // Long enough for every round: a deadline passed would have the script answer 'expired' after TIME.
    hotPathDeadlineMs: HOUR_MS,
    ...(throttled && { throttles: { basic: NEVER_REFUSING_THROTTLE } }),
  });
  const now = Date.now();
  const hour = Math.floor(now / HOUR_MS) * HOUR_MS;
  const day = Math.floor(now / DAY_MS) * DAY_MS;
  const limit = (period: 'hour' | 'day', start: number, length: number) => ({
    metric: 'hits',
    period,
    periodStart: start,
    periodEnd: start + length,
    maxValue: 1e12,
    currentValue: 0,
    exceeded: false,
  });
  await cache.storeAnswer({
    credentialId,
    keyId: '',
    sealedCredential: 's'.repeat(123),
    now,
    answer: {
      kind: 'authorized',
      plan: 'basic',
      hierarchy: { hits: METHODS },
      usageReports: [limit('hour', hour, HOUR_MS), limit('day', day, DAY_MS)],
    },
  });
  const request = {
    credentialId,
    keyId: '',
    usage: { word_read: 1 },
    now,
    windowMs: 60_000,
    softLimits: false,
  };
  await cache.check(request);
  const commands = redis as unknown as Record<string, (...args: unknown[]) => Promise<unknown>>;
  const send = commands[CHECK_SCRIPT.name] as (...args: unknown[]) => Promise<unknown>;
  let sent: unknown[] = [];
  commands[CHECK_SCRIPT.name] = (...args: unknown[]) => {
    sent = args;
    return send.apply(redis, args);
  };
  const result = await cache.check(request);
  commands[CHECK_SCRIPT.name] = send;
  if (result.kind !== 'allow') throw new Error(`the hit was not allowed: ${JSON.stringify(result)}`);
  const keys = sent.slice(0, CHECK_SCRIPT.numberOfKeys).map(String);
  return { keys, argv: sent.slice(CHECK_SCRIPT.numberOfKeys).map(String) };
}

/**
 * The KEYS (app, pending, since) and ARGV of a floor design (hit-script-floors.ts), on a budget of its own
 * that the product stored and hit: its counts are there.
 */
async function floorArguments(
  redis: Redis,
  credentialId: string,
  design: HitFloorDesign,
): Promise<{ keys: string[]; argv: string[] }> {
  const hit = await hitArguments(redis, false, credentialId);
  const [, app = '', , pending = '', , since = ''] = hit.keys;
  const now = Date.now();
  return {
    keys: [app, pending, since],
    argv: [
      String(now),
      design.withoutDeadline ? '0' : String(now + HOUR_MS),
      '60000',
      'basic',
      'need:word_read',
      'count:hour:hits',
      'count:day:hits',
      (await redis.hget(app, 'need:word_read')) ?? '',
      String(Math.floor(now / HOUR_MS) * HOUR_MS),
      'word_read',
      '1',
    ],
  };
}

/** A floor design's name among the tool's figures. */
const floorName = (design: HitFloorDesign) => `floor: ${design.name}`;

interface FloorRun {
  readonly design: HitFloorDesign;
  readonly keys: string[];
  readonly argv: string[];
}

/** The hourly count of the budget of each floor design that decides its calls. */
async function hourlyCounts(
  redis: Redis,
  floors: ReadonlyMap<string, FloorRun>,
): Promise<Map<string, number>> {
  const counts = new Map<string, number>();
  for (const [name, floor] of floors) {
    if (!floor.design.decides) continue;
    const count = await redis.hget(floor.keys[0] as string, 'count:hour:hits');
    counts.set(name, Number(count?.split(' ')[2]));
  }
  return counts;
}

async function main(): Promise<void> {
  const [rounds = 30, calls = 500] = process.argv.slice(2).map(Number);
  const bench = await startScriptBench();
  const { redis } = bench;
  try {
    const { keys, argv } = await hitArguments(redis, false, 'b'.repeat(64));
    const throttledHit = await hitArguments(redis, true, 'c'.repeat(64));
    const floors = new Map<string, FloorRun>();
    for (const [index, design] of HIT_FLOOR_DESIGNS.entries()) {
      const floor = await floorArguments(redis, `d${index}`.repeat(32), design);
      floors.set(floorName(design), { design, ...floor });
    }
    const scripts = new Map<string, string>([
      ['whole script', CHECK_SCRIPT.lua],
      [THROTTLED, CHECK_SCRIPT.lua],
      ...HIT_SCRIPT_STEPS.map((step): [string, string] => [
        `up to ${step.name}`,
        cutShortBefore(CHECK_SCRIPT.lua, step.before),
      ]),
      ['return 1', 'return 1'],
      ...HIT_FLOOR_DESIGNS.map((design): [string, string] => [floorName(design), design.lua]),
    ]);
    const shas = new Map<string, string>();
    for (const [name, lua] of scripts) shas.set(name, String(await redis.script('LOAD', lua)));
    const round = (name: string, count: number) => {
      const hit = floors.get(name) ?? (name === THROTTLED ? throttledHit : { keys, argv });
      const args = [...hit.keys, ...hit.argv];
      return evalshaMicros(redis, shas.get(name) as string, count, hit.keys.length, () => args);
    };
    const names = [...shas.keys()];
    const countsBefore = await hourlyCounts(redis, floors);
    for (const name of names) await round(name, 200);
    const micros = new Map<string, number[]>(names.map((name) => [name, []]));
    for (let r = 0; r < rounds; r++) {
      for (const name of r % 2 === 0 ? names : [...names].reverse()) {
        micros.get(name)?.push(await round(name, calls));
      }
    }
    // The product's hit still allowed when the rounds ended, and each design decided every call it was
    // given: its count went up by as many.
    const last = await redis.evalsha(shas.get('whole script') as string, keys.length, ...keys, ...argv);
    if (!String(last).startsWith('allow'))
      throw new Error(`the hit was not allowed: ${JSON.stringify(last)}`);
    const countsAfter = await hourlyCounts(redis, floors);
    for (const [name, before] of countsBefore) {
      const counted = (countsAfter.get(name) ?? 0) - before;
      const made = 200 + rounds * calls;
      if (counted !== made) {
        throw new Error(`${name} counted ${counted} of its ${made} calls`);
      }
    }
    console.log(
      `hit script: ${keys.length} keys, ${argv.length} arguments; ${rounds} rounds of ${calls} calls`,
    );
    console.log(bench.description);
    for (const figure of pairedFigures(micros, 'whole script')) {
      const step = HIT_SCRIPT_STEPS.find((candidate) => `up to ${candidate.name}` === figure.name);
      const note = step?.adds ?? floors.get(figure.name)?.design.does;
      console.log(figureLine(figure, 'the whole script', 28) + (note ? `  [${note}]` : ''));
    }
  } finally {
    await bench.stop();
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
