/**
 * The Redis servers the workloads run on: one redis-server, or a local cluster of primaries only, each
 * with an admin connection of its own and pinned to the placement's CPUs (placement.ts).
 */
import Redis from 'ioredis';
import { findOnPath, startRedisCluster, startRedisServer } from '../local/redis';
import { type Placement, pinProcess } from './placement';
import type { Primary, RedisUnderTest } from './system';

export const CLUSTER_PRIMARIES = 3;

function redisServerBinary(): string {
  const binary = findOnPath('redis-server');
  if (binary === undefined) throw new Error('redis-server is not installed (apt-get install redis-server)');
  return binary;
}

async function adminOf(host: string, port: number): Promise<Redis> {
  const admin = new Redis({ host, port, lazyConnect: true, commandTimeout: 10_000 });
  await admin.connect();
  return admin;
}

/** Pins each Redis process (its pid as INFO tells it) to the placement's CPUs. */
async function pinRedis(primaries: readonly Primary[], placement: Placement | undefined): Promise<void> {
  if (placement === undefined) return;
  for (const { admin } of primaries) {
    const pid = /process_id:(\d+)/.exec(await admin.info('server'))?.[1];
    if (pid === undefined) throw new Error('redis-server INFO names no process_id');
    pinProcess(Number(pid), placement.redisCpus);
  }
}

export async function startSingle(placement: Placement | undefined): Promise<RedisUnderTest> {
  const server = await startRedisServer(redisServerBinary());
  const primaries = [
    { address: `${server.host}:${server.port}`, admin: await adminOf(server.host, server.port) },
  ];
  await pinRedis(primaries, placement);
  return { name: 'single', server, settings: server.settings, primaries };
}

/** A local cluster of primaries only: each one's share of the work is the figure. */
export async function startCluster(placement: Placement | undefined): Promise<RedisUnderTest> {
  const server = await startRedisCluster(redisServerBinary(), { primaries: CLUSTER_PRIMARIES });
  const primaries = await Promise.all(
    server.nodes.map(async (node) => ({
      address: `${node.host}:${node.port}`,
      admin: await adminOf(node.host, node.port),
    })),
  );
  await pinRedis(primaries, placement);
  return { name: 'cluster', server, settings: server.settings, primaries };
}

export async function stopRedis(redis: RedisUnderTest): Promise<void> {
  for (const { admin } of redis.primaries) admin.disconnect();
  await redis.server.stop();
}

/** The redis-server version, as its first primary's INFO names it, for the machine line. */
export async function redisVersionOf(redis: RedisUnderTest): Promise<string> {
  const [first] = redis.primaries as [Primary];
  return /redis_version:(\S+)/.exec(await first.admin.info('server'))?.[1] ?? 'unknown';
}
