/**
 * The measuring loop: each group of workloads (workloads.ts `runGroups`) on an emptied Redis, its members
 * prepared in turn, then measured chunk by chunk, each chunk followed by the flush of what it left pending.
 */
import { startAppSystem } from './app-system';
import { startAuthorizerSystem } from './authorizer-system';
import { drive } from './driver';
import { floodBeside } from './flood';
import { type Prepared, prepare } from './prepare';
import { primaryDeltas, snapshot } from './primaries';
import type { Design, WorkloadName, WorkloadResult } from './report';
import type { RedisUnderTest, Servers, System, SystemOptions } from './system';
import { addPlatformCalls, platformCallsBetween, platformCallsOf } from './tally';
import { resultOf } from './workload-result';
import {
  GROUP_ROUNDS,
  interleavedChunks,
  type Run,
  runGroups,
  SETUPS,
  type SetupName,
  WORKLOADS,
} from './workloads';

/** Calls `from` .. `from + count - 1` of a prepared workload, timed, then the flush of what they left pending. */
async function measureChunk(
  redis: RedisUnderTest,
  servers: Servers,
  prepared: Prepared,
  from: number,
  count: number,
): Promise<void> {
  const { system, caller, spec, flood } = prepared;
  const statsBefore = await snapshot(redis);
  const sentBefore = system.redisCommandsSent();
  const platformBefore = platformCallsOf(system.platform);
  const publishedBefore = servers.sns.stats().published;
  const cpuBefore = process.cpuUsage();
  const flooding = flood && floodBeside(flood);
  const run = await drive(caller, from, count, spec.concurrency);
  await flooding?.stop();
  const cpu = process.cpuUsage(cpuBefore);
  prepared.spanEnd = process.hrtime.bigint();
  const sent = system.redisCommandsSent() - sentBefore;
  const platformAfter = platformCallsOf(system.platform);
  if (flood)
    flood.platformCalls = addPlatformCalls(
      flood.platformCalls,
      platformCallsBetween(platformBefore, platformAfter),
    );
  const published = servers.sns.stats().published - publishedBefore;
  const perPrimary = primaryDeltas(statsBefore, await snapshot(redis));

  const flushStart = process.hrtime.bigint();
  await system.flush();
  const flushMs = Number(process.hrtime.bigint() - flushStart) / 1e6;
  prepared.tally.add({
    from,
    latenciesNs: run.latenciesNs,
    outcomes: run.outcomes,
    durationMs: run.durationMs,
    cpuMicros: cpu.user + cpu.system,
    redisCommandsSent: sent,
    snsPublishes: published,
    platformCalls: platformCallsBetween(platformBefore, platformAfter),
    primaries: perPrimary.map((delta) => ({
      byCommand: delta.executed.byCommand,
      cpuSeconds: delta.cpuSeconds,
      scriptMicros: delta.executed.scriptMicros,
    })),
    flush: {
      durationMs: flushMs,
      platformCalls: platformCallsBetween(platformAfter, platformCallsOf(system.platform)),
    },
  });
}

/**
 * Runs `workloads` on `redis` (see `runGroups`), each design and set-up with its own clients (made at first
 * use). A group starts from an empty Redis; its members are prepared in turn, then measured in the chunks of
 * `interleavedChunks` (one chunk for a run alone), each chunk followed by its flush.
 */
export async function runOn(
  redis: RedisUnderTest,
  servers: Servers,
  workloads: readonly WorkloadName[],
  quick: boolean,
  options: SystemOptions,
): Promise<WorkloadResult[]> {
  const systems = new Map<string, System>();
  const systemFor = (design: Design, setupName: SetupName) => {
    const key = `${design}/${setupName}`;
    const setup = SETUPS[setupName];
    const system =
      systems.get(key) ??
      (setup.request === 'app'
        ? startAppSystem(servers, redis, design, setup, options)
        : startAuthorizerSystem(servers, redis, design, setupName, options));
    systems.set(key, system);
    return system;
  };
  const results: WorkloadResult[] = [];
  try {
    for (const group of runGroups(workloads)) {
      console.log(`bench: ${group.map(({ workload, design }) => `${workload} / ${design}`).join(', ')} ...`);
      await Promise.all(redis.primaries.map(({ admin }) => admin.flushall()));
      const prepared: Prepared[] = [];
      for (const { workload, design } of group) {
        const spec = WORKLOADS[workload];
        const system = systemFor(design, spec.setup);
        prepared.push(await prepare(redis, system, workload, spec, quick));
      }
      const { group: groupName } = WORKLOADS[(group[0] as Run).workload];
      const rounds = groupName === undefined ? 1 : GROUP_ROUNDS[groupName][quick ? 'quick' : 'full'];
      const members = prepared.map((member) => ({ member, calls: member.size.calls }));
      for (const { member, from, count } of interleavedChunks(members, rounds)) {
        await measureChunk(redis, servers, member, from, count);
      }
      results.push(...prepared.map((member) => resultOf(redis, member)));
    }
  } finally {
    await Promise.all([...systems.values()].map((system) => system.close()));
  }
  return results;
}
