/**
 * `npm run bench:first-call-scripts [-- <rounds> <calls per round>]`: the script time of a first call,
 * the bench's cold workload in Redis: the check that finds no snapshot and claims the budget's first-call
 * lock, then the store of the platform's answer (docs/performance.md).
 *
 * A budget on the bench's plan (hits limited per hour and per day, five methods under hits) is checked and
 * stored once through AccessCache, which gives both scripts' KEYS and ARGV as the authorizer sends them (a
 * lock token, a deadline, so TIME runs). Then each script, and `return 1` with its arguments, is called
 * with EVALSHA, one call at a time, every call on a budget of its own (the credential id in the keys made
 * new), as every call of the cold workload is; before a round of the store, each of its budgets' locks is
 * taken, as the check left it. Rounds alternate their order; per round, the EVALSHA usec per call of
 * `INFO commandstats`, and each figure is the median over the rounds, with the median of its differences
 * with its script in the same rounds.
 */
import type Redis from 'ioredis';
import { AccessCache } from '../core/budget/cache';
import { CHECK_SCRIPT } from '../core/budget/scripts/check-script';
import type { ScriptDefinition } from '../core/budget/scripts/lua';
import { STORE_SCRIPT } from '../core/budget/scripts/store-script';
import { BENCH_SERVICE_ID } from './fixture';
import { pairedFigures } from './hit-script-steps';
import { evalshaMicros, figureLine, startScriptBench } from './script-rounds';

const HOUR_MS = 3_600_000;
const DAY_MS = 24 * HOUR_MS;
const METHODS = ['word_read', 'word_write', 'word_list', 'word_delete', 'word_search'];
const TEMPLATE_ID = 'b'.repeat(64);
const LOCK_TOKEN = 'first-call-scripts';

interface SentScript {
  readonly definition: ScriptDefinition;
  readonly keys: readonly string[];
  readonly argv: readonly string[];
}

/** The KEYS and ARGV of a first call's check (a miss) and store, as AccessCache sends them. */
async function firstCallArguments(redis: Redis): Promise<{ check: SentScript; store: SentScript }> {
  const cache = new AccessCache(redis, {
    serviceId: BENCH_SERVICE_ID,
    negativeTtlMs: 60_000,
    leaseMs: 30_000,
    hotPathDeadlineMs: 60_000,
  });
  const commands = redis as unknown as Record<string, (...args: unknown[]) => Promise<unknown>>;
  const sent = new Map<string, unknown[]>();
  const senders = new Map<string, (...args: unknown[]) => Promise<unknown>>();
  for (const { name } of [CHECK_SCRIPT, STORE_SCRIPT]) {
    const send = commands[name] as (...args: unknown[]) => Promise<unknown>;
    senders.set(name, send);
    commands[name] = (...args: unknown[]) => {
      sent.set(name, args);
      return send.apply(redis, args);
    };
  }
  const now = Date.now();
  const limit = (period: 'hour' | 'day', length: number) => ({
    metric: 'hits',
    period,
    periodStart: Math.floor(now / length) * length,
    periodEnd: Math.floor(now / length) * length + length,
    maxValue: 1e12,
    currentValue: 0,
    exceeded: false,
  });
  const usage = { word_read: 1 };
  const miss = await cache.check({
    credentialId: TEMPLATE_ID,
    keyId: '',
    usage,
    now,
    windowMs: 60_000,
    softLimits: false,
    firstCallLock: { token: LOCK_TOKEN, ttlMs: 5_000 },
  });
  if (miss.kind !== 'miss' || !miss.claimed)
    throw new Error(`the check did not claim a miss: ${JSON.stringify(miss)}`);
  await cache.storeAnswer({
    credentialId: TEMPLATE_ID,
    keyId: '',
    sealedCredential: 's'.repeat(123),
    now,
    firstCallToken: LOCK_TOKEN,
    admittedUsage: usage,
    answer: {
      kind: 'authorized',
      plan: 'basic',
      hierarchy: { hits: METHODS },
      usageReports: [limit('hour', HOUR_MS), limit('day', DAY_MS)],
    },
  });
  const of = (definition: ScriptDefinition): SentScript => {
    const args = (sent.get(definition.name) ?? []).map(String);
    if (args.length === 0) throw new Error(`${definition.name} was not sent`);
    return {
      definition,
      keys: args.slice(0, definition.numberOfKeys),
      argv: args.slice(definition.numberOfKeys),
    };
  };
  for (const [name, send] of senders) commands[name] = send;
  return { check: of(CHECK_SCRIPT), store: of(STORE_SCRIPT) };
}

async function main(): Promise<void> {
  const [rounds = 15, calls = 400] = process.argv.slice(2).map(Number);
  const bench = await startScriptBench();
  const { redis } = bench;
  try {
    const { check, store } = await firstCallArguments(redis);
    const firstCallLockKey = check.keys[7] as string;
    const runs = [
      { name: 'check (a miss)', script: check, lua: check.definition.lua },
      { name: 'check: return 1', script: check, lua: 'return 1' },
      { name: 'store', script: store, lua: store.definition.lua },
      { name: 'store: return 1', script: store, lua: 'return 1' },
    ];
    const shas = new Map<string, string>();
    for (const run of runs) shas.set(run.name, String(await redis.script('LOAD', run.lua)));
    let budgets = 0;
    const round = async (run: (typeof runs)[number], count: number) => {
      const ids = Array.from({ length: count }, () => (budgets++).toString(16).padStart(64, '0'));
      const keysOf = (id: string) => run.script.keys.map((key) => key.replace(TEMPLATE_ID, id));
      if (run.script === store) {
        for (const id of ids)
          await redis.set(firstCallLockKey.replace(TEMPLATE_ID, id), LOCK_TOKEN, 'PX', 60_000);
      }
      const args = ids.map((id) => [...keysOf(id), ...run.script.argv]);
      return evalshaMicros(
        redis,
        shas.get(run.name) as string,
        count,
        run.script.keys.length,
        (call) => args[call] as string[],
      );
    };
    for (const run of runs) await round(run, 100);
    const micros = new Map<string, number[]>(runs.map((run) => [run.name, []]));
    for (let r = 0; r < rounds; r++) {
      for (const run of r % 2 === 0 ? runs : [...runs].reverse())
        micros.get(run.name)?.push(await round(run, calls));
      await redis.flushall();
    }
    console.log(
      `first call: the check ${check.keys.length} keys and ${check.argv.length} arguments, the store ` +
        `${store.keys.length} keys and ${store.argv.length} arguments; ${rounds} rounds of ${calls} calls`,
    );
    console.log(bench.description);
    for (const reference of ['check (a miss)', 'store']) {
      const pair = new Map(
        [...micros].filter(([name]) => name.startsWith(reference.split(' ')[0] as string)),
      );
      for (const figure of pairedFigures(pair, reference)) {
        console.log(figureLine(figure, reference, 18));
      }
    }
  } finally {
    await bench.stop();
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
