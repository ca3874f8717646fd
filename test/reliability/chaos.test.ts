/**
 * Chaos: the product under steady load (hits, first calls, refused calls, many applications, several
 * authorizers and reporters) while faults land at random and again: a primary killed with SIGKILL and
 * its replica promoted, a reporter killed before its POST, inside it (after the platform's 202) or after
 * its sent mark, a report delivered twice (an SQS redelivery), the platform down a while, the network
 * to Redis cut a while. Each run prints its figures as one line with its seed
 * (`RELIABILITY_SEED=<seed>` replays the faults' order; timing differs). Every set-up asserts no
 * error, nothing left in flight and no allowed call recorded nowhere. The durable one (writes confirmed
 * by a replica, two replicas) also asserts the targets:
 * - 0 lost;
 * - counted twice at most the units of the reports a reporter died inside of (one report per such
 *   crash; none for a crash before the POST or after the mark, none for a redelivery), plus 0.05 % of
 *   the allowed calls, or the calls answered through the platform whose script may have run where
 *   that is more (a slow machine's timeouts; command-fate.ts).
 * Without durable writes what a promotion loses or counts twice depends on the calls a second and the
 * replication lag: printed, not bounded (docs/reliability.md). Wrong allows over a hard limit are printed.
 * CI runs 20 failovers and 20 reporter crashes on the cluster, 10 of each on the primary and replica
 * (with and without durable writes); `RELIABILITY_LONG=1` runs 200 of each on every set-up.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { type ChaosTopology, startChaosRedis } from './support/chaos-redis';
import { stoppedAfterEach } from './support/chaos-run';
import { type CrashPoint, startChaosWorld } from './support/chaos-world';
import { reliabilitySeed, seededRandom } from './support/seed';

const LONG = process.env.RELIABILITY_LONG === '1';
/** The share of the allowed calls failovers may count twice (the target). */
const FAILOVER_DOUBLE_SHARE = 0.0005;
const HARD_LIMIT = 150;
const CALLERS = 8;
const CRASH_POINTS: readonly CrashPoint[] = ['before-post', 'inside-post', 'after-mark'];

const run = stoppedAfterEach();

type Fault = 'failover' | 'crash' | 'platform-down' | 'cut';

interface ChaosRun {
  readonly topology: ChaosTopology;
  /** Writes acknowledged only once a replica has them (the durable store's promise, emulated). */
  readonly durable: boolean;
  /** Primaries killed, and reporters killed (CI; RELIABILITY_LONG=1 runs 200 of each). */
  readonly faults: number;
}

/** CI: 40 failovers and 40 reporter crashes in all, 20 of each on the cluster. */
const RUNS: readonly ChaosRun[] = [
  { topology: 'cluster', durable: false, faults: 20 },
  { topology: 'primary-replica', durable: false, faults: 10 },
  { topology: 'primary-replica', durable: true, faults: 10 },
];

describe.each(RUNS)('chaos on $topology (durable writes: $durable)', ({ topology, durable, faults }) => {
  const FAILOVERS = LONG ? 200 : faults;
  const CRASHES = LONG ? 200 : faults;
  it(`${FAILOVERS} failovers and ${CRASHES} reporter crashes among other faults: lost and counted twice within the targets`, {
    timeout: LONG ? 3_600_000 : 600_000,
  }, async () => {
    const name = `${topology}${durable ? ' durable' : ''}`;
    const seed = reliabilitySeed(`chaos ${name}`);
    const random = seededRandom(seed);
    // The durable store's log does not live on the replicas: two keep a replica to confirm writes right
    // after a promotion, where one would leave the promoted node without any until the killed one synced.
    const redis = await startChaosRedis(topology, { replicas: durable ? 2 : 1 });
    run.redis = redis;
    const chaos = await startChaosWorld({
      redis,
      apps: 40,
      limitedApps: 4,
      hardLimit: HARD_LIMIT,
      authorizers: 3,
      queues: 2,
      random,
      duplicateDelivery: 0.05,
      durable,
    });
    run.world = chaos;
    chaos.startTraffic(CALLERS);
    await sleep(1000);
    // Two fault lines at once, each in a seeded order: Redis failovers, and everything else between
    // them (reporter crashes, platform outages, network cuts), so a crash may land inside a failover.
    const others: Fault[] = [
      ...Array<Fault>(CRASHES).fill('crash'),
      ...Array<Fault>(Math.ceil(FAILOVERS / 5)).fill('platform-down'),
      ...(redis.cut ? Array<Fault>(Math.ceil(FAILOVERS / 5)).fill('cut') : []),
    ];
    for (let i = others.length - 1; i > 0; i--) {
      const j = Math.floor(random() * (i + 1));
      [others[i], others[j]] = [others[j] as Fault, others[i] as Fault];
    }
    const pauses = () => sleep(200 + Math.floor(random() * 300));
    const spent = new Map<string, number>();
    const timed = async (fault: Fault, work: () => Promise<unknown>) => {
      const faultStartedAt = performance.now();
      await work();
      spent.set(fault, (spent.get(fault) ?? 0) + performance.now() - faultStartedAt);
    };
    const startedAt = performance.now();
    await Promise.all([
      (async () => {
        for (let i = 0; i < FAILOVERS; i++) {
          await timed('failover', () => redis.failover(() => Math.floor(random() * 1000)));
          await pauses();
        }
      })(),
      (async () => {
        for (const fault of others) {
          if (fault === 'crash') {
            const point = CRASH_POINTS[Math.floor(random() * CRASH_POINTS.length)] as CrashPoint;
            await timed(fault, () => chaos.crashReporter(point));
          } else if (fault === 'platform-down') {
            await timed(fault, async () => {
              chaos.platformLine.setFault('unavailable');
              await sleep(500 + Math.floor(random() * 1000));
              chaos.platformLine.setFault('pass');
            });
          } else {
            await timed(fault, () => redis.cut?.(300 + Math.floor(random() * 700)) ?? Promise.resolve());
          }
          await pauses();
        }
      })(),
    ]);
    await chaos.stopTraffic();
    const settleStartedAt = performance.now();
    const left = await chaos.settle();
    spent.set('settle', performance.now() - settleStartedAt);
    const figures = chaos.figures();
    const seconds = (performance.now() - startedAt) / 1000;
    console.log(
      `[chaos ${name}] seed ${seed}: ${FAILOVERS} failovers, crashes ${JSON.stringify(figures.crashes)}, ` +
        `${figures.duplicates} redeliveries, ${others.filter((f) => f === 'platform-down').length} platform outages, ` +
        `${others.filter((f) => f === 'cut').length} network cuts in ${seconds.toFixed(0)} s; ` +
        `calls ${figures.calls} (first calls ${figures.firstCalls}, refused ${figures.refused}); ` +
        `allowed ${figures.allowed}, at the platform ${figures.atPlatform}, lost ${figures.lost}, ` +
        `counted twice ${figures.countedTwice} (${((100 * figures.countedTwice) / Math.max(1, figures.allowed)).toFixed(3)} %), ` +
        `wrong allows over a hard limit ${figures.wrongAllows}; resent maybe-sent ${figures.resentMaybeSent} ` +
        `batches (${figures.unitsResentMaybeSent} units), settled by the sent mark ${figures.settledByMark}, ` +
        `units in crashed POSTs ${figures.unitsInCrashedPosts}, calls answered through the platform for a ` +
        `Redis failure ${figures.cacheFallbacks} (script may have run ${figures.cacheAnswersLost}), ` +
        `counted twice beyond the crashed POSTs ${Math.max(0, figures.countedTwice - figures.unitsInCrashedPosts)}, allowed with usage recorded nowhere ${figures.unrecorded}; seconds spent ${JSON.stringify(Object.fromEntries([...spent].map(([k, v]) => [k, Math.round(v / 1000)])))}`,
    );
    expect(chaos.errors).toEqual([]);
    expect(left).toEqual([]);
    expect(Object.values(figures.crashes).reduce((sum, n) => sum + n, 0)).toBe(CRASHES);
    expect(figures.unrecorded).toBe(0);
    // Replication is asynchronous by default: what a primary acknowledged and had not yet sent to its
    // replica is gone after the promotion (a usage count, or an acknowledgement, which then counts a
    // report twice), in proportion to the calls a second and the replication lag: 11 units in 20
    // failovers at about 4,900 calls a second on the cluster, 4,196 in 10 at about 6,250 on the
    // primary and replica (docs/reliability.md). No bound holds for it whatever the machine's speed, so
    // the default layout's figures are printed, and the bounds are the durable layout's.
    if (!durable) return;
    expect(figures.lost).toBe(0);
    // The reporter's share: a crash inside a POST counts that report twice at most; nothing else it
    // does (a crash before the POST or after the mark, a redelivery, an outage, a failover) counts
    // twice. The hot path's share: 0.05 % of the allowed calls (the target), or, on a machine too slow
    // for it, the calls answered through the platform whose script may have run (a timeout, a connection
    // closed after the write), each counted twice at most once; a call whose script certainly did not
    // run (never sent, refused by Redis, past its deadline) counts once (command-fate.ts).
    const failoverAllowance = Math.max(
      Math.floor(FAILOVER_DOUBLE_SHARE * figures.allowed),
      figures.cacheAnswersLost,
    );
    expect(figures.countedTwice).toBeLessThanOrEqual(figures.unitsInCrashedPosts + failoverAllowance);
  });
});
