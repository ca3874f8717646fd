/**
 * The Redis the suites run on, whichever its topology: one redis-server, a local Redis Cluster of three
 * primaries (cluster mode, as ElastiCache runs it with cluster mode enabled or Serverless), or the
 * in-memory stand-in. A suite gets the product's own clients from it and the inspection that has to
 * visit every primary (flush, keys), so the same suite runs unchanged on each.
 */
import { afterAll, beforeAll, describe } from 'vitest';
import {
  createRedisClient,
  ensureConnected,
  onEveryPrimary,
  type RedisClientOptions,
  type RedisConnection,
} from '../../core/budget/redis-client';
import type { RedisSettings } from '../../core/settings/config';
import {
  findOnPath,
  type LocalRedis,
  type LocalRedisCluster,
  type RedisClusterOptions,
  startInMemoryRedis,
  startRedisCluster,
  startRedisServer,
} from '../../local/redis';

export type RedisTopology = 'redis-server' | 'cluster' | 'in-memory';

/** The topologies of real Redis every Redis-backed suite runs on. */
export const REAL_REDIS_TOPOLOGIES: readonly RedisTopology[] = ['redis-server', 'cluster'];

export interface TestRedis {
  readonly topology: RedisTopology;
  /** What a configuration's `redis` takes to reach it. */
  readonly settings: RedisSettings;
  /** The cluster's node processes (topology 'cluster'). */
  readonly cluster?: LocalRedisCluster;
  /** A new product client (createRedisClient, or an in-memory one), connected; stop() closes it. */
  client(options?: RedisClientOptions): Promise<RedisConnection>;
  /** FLUSHALL on every primary. */
  flushAll(): Promise<void>;
  /** The keys of every primary matching `pattern`, sorted. */
  keys(pattern?: string): Promise<string[]>;
  /** Closes every client made so far (the server keeps running). */
  closeClients(): Promise<void>;
  stop(): Promise<void>;
}

function redisServerBinary(): string {
  const binary = findOnPath('redis-server');
  if (binary === undefined) throw new Error('redis-server is not installed (apt-get install redis-server)');
  return binary;
}

const STARTERS: Readonly<Record<RedisTopology, (options: RedisClusterOptions) => Promise<LocalRedis>>> = {
  'redis-server': () => startRedisServer(redisServerBinary()),
  cluster: (options) => startRedisCluster(redisServerBinary(), options),
  'in-memory': () => startInMemoryRedis(),
};

/** Starts the topology; `options` shape a cluster (replicas, node timeout). */
export async function startRedisTopology(
  topology: RedisTopology,
  options: RedisClusterOptions = {},
): Promise<TestRedis> {
  const server = await STARTERS[topology](options);
  const clients: RedisConnection[] = [];
  const client = async (clientOptions: RedisClientOptions = {}) => {
    const made = server.createInMemoryClient?.() ?? createRedisClient(server.settings, clientOptions);
    clients.push(made);
    await ensureConnected(made);
    return made;
  };
  let admin: Promise<RedisConnection> | undefined;
  const adminClient = () => {
    admin ??= client();
    return admin;
  };
  const closeClients = async () => {
    admin = undefined;
    await Promise.all(clients.splice(0).map((made) => made.quit().catch(() => made.disconnect())));
  };
  return {
    topology,
    settings: server.settings,
    ...(server.kind === 'redis-cluster' && { cluster: server as LocalRedisCluster }),
    client,
    async flushAll() {
      await onEveryPrimary(await adminClient(), (primary) => primary.flushall());
    },
    async keys(pattern = '*') {
      const perPrimary = await onEveryPrimary(await adminClient(), (primary) => primary.keys(pattern));
      return perPrimary.flat().sort();
    },
    closeClients,
    async stop() {
      await closeClients();
      await server.stop();
    },
  };
}

/**
 * Declares `suite` once per topology, each in a describe block named after it, with its Redis started
 * before the block's tests and stopped after them. `redis()` is that Redis while the tests run.
 */
export function describeOnTopologies(
  topologies: readonly RedisTopology[],
  suite: (redis: () => TestRedis) => void,
  options: RedisClusterOptions = {},
): void {
  describe.each(topologies)('on %s', (topology) => {
    let started: TestRedis | undefined;
    beforeAll(async () => {
      started = await startRedisTopology(topology, options);
    });
    afterAll(async () => {
      await started?.stop();
    });
    suite(() => {
      if (!started) throw new Error(`the ${topology} Redis has not started`);
      return started;
    });
  });
}
