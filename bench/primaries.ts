/**
 * What each primary of the Redis under test did, read from its own INFO around a measured chunk, and which
 * primary owns each of a workload's keys (a credential's keys share one hash tag, so one primary runs all
 * of its calls).
 */
import { credentialKeys } from '../core/budget/keys';
import { credentialIdOf } from '../core/credentials';
import { type CommandStats, diffCommandStats, parseCommandStats, serverCpuSeconds } from './commandstats';
import { BENCH_SERVICE_ID } from './fixture';
import type { Primary, RedisUnderTest } from './system';

export interface PrimarySnapshot {
  readonly commands: CommandStats;
  readonly cpuSeconds: number;
}

/** Commands executed (calls and time) and CPU used so far, per primary (INFO commandstats and cpu). */
export function snapshot(redis: RedisUnderTest): Promise<PrimarySnapshot[]> {
  return Promise.all(
    redis.primaries.map(async ({ admin }) => ({
      commands: parseCommandStats(await admin.info('commandstats')),
      cpuSeconds: serverCpuSeconds(await admin.info('cpu')),
    })),
  );
}

export function primaryDeltas(before: readonly PrimarySnapshot[], after: readonly PrimarySnapshot[]) {
  return after.map((end, i) => {
    const start = before[i] as PrimarySnapshot;
    return {
      executed: diffCommandStats(start.commands, end.commands),
      cpuSeconds: end.cpuSeconds - start.cpuSeconds,
    };
  });
}

/** Which primary (`host:port`) owns each key, and how many slots each primary holds. */
export interface KeyPlacement {
  readonly owners: ReadonlyMap<string, string>;
  readonly slotsOf: ReadonlyMap<string, number>;
}

/** Which primary owns each of the workload's keys: CLUSTER KEYSLOT of its credential, CLUSTER SLOTS. */
export async function primaryOfKeys(redis: RedisUnderTest, keys: readonly string[]): Promise<KeyPlacement> {
  const [first] = redis.primaries as [Primary];
  const ranges = (await first.admin.call('CLUSTER', 'SLOTS')) as [number, number, [string, number]][];
  const ownerOf = (slot: number) => {
    const range = ranges.find(([start, end]) => slot >= start && slot <= end);
    return range ? `${range[2][0]}:${range[2][1]}` : 'unowned';
  };
  const slotsOf = new Map<string, number>();
  for (const [start, end, [host, port]] of ranges) {
    slotsOf.set(`${host}:${port}`, (slotsOf.get(`${host}:${port}`) ?? 0) + end - start + 1);
  }
  const owners = new Map<string, string>();
  for (const key of keys) {
    const credential = credentialKeys(
      BENCH_SERVICE_ID,
      credentialIdOf(BENCH_SERVICE_ID, { kind: 'user_key', userKey: key }),
    );
    owners.set(key, ownerOf(Number(await first.admin.call('CLUSTER', 'KEYSLOT', credential.app))));
  }
  return { owners, slotsOf };
}
