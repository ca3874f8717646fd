/**
 * The Redis topologies with replicas the chaos suite fails over, each with a `failover()` that kills a
 * primary with SIGKILL, has its replica promoted and starts the killed node again as a replica:
 * - `cluster`: a local Redis Cluster of three primaries with a replica each; the cluster promotes the
 *   replica itself (cluster-node-timeout), clients follow the slots;
 * - `primary-replica`: one primary and its replicas behind an endpoint (a TCP proxy), failed over as
 *   ElastiCache's primary endpoint is: the replica furthest in the stream promoted (`REPLICAOF NO ONE`),
 *   the others following it,
 *   the endpoint moved to it. Only this one can also cut the clients' network (`cut`), for the endpoint
 *   is their only way in. With one replica the promoted node has none until the killed one has synced
 *   again; the durable set-up runs two, so that a write can be confirmed right after a promotion, as a
 *   durable store's log (which does not live on the replicas) confirms it.
 */
import type { ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import Redis from 'ioredis';
import type { RedisSettings } from '../../../core/settings/config';
import {
  findOnPath,
  freePort,
  type LocalRedisCluster,
  spawnRedisServer,
  terminateProcess,
} from '../../../local/redis';
import { ClusterAdmin } from '../../support/cluster-admin';
import { startRedisTopology } from '../../support/redis-topology';
import { startTcpProxy } from './tcp-proxy';

export type ChaosTopology = 'cluster' | 'primary-replica';

export interface ChaosRedis {
  readonly topology: ChaosTopology;
  readonly settings: RedisSettings;
  /** Kills a primary (chosen by `pick`), waits for its replica's promotion, starts it again as a replica. */
  failover(pick: () => number): Promise<{ readonly promotedAfterMs: number }>;
  /** Cuts every client connection and refuses new ones for `ms` (primary-replica only). */
  cut?(ms: number): Promise<void>;
  /** The keys of every primary matching `pattern`. */
  keys(pattern: string): Promise<string[]>;
  /** Deletes keys by name, each on its primary. */
  del(keys: readonly string[]): Promise<void>;
  /** primary-replica only: `used_memory` of every node, the primary first (bytes). */
  usedMemory?(): Promise<number[]>;
  /** primary-replica only: the primary's keys that have no TTL (every key of ours must have one). */
  keysWithoutTtl?(): Promise<string[]>;
  stop(): Promise<void>;
}

const FAILOVER_TIMEOUT_MS = 30_000;
/** A promoted replica answers; a restarted node has caught up with its primary (it can be promoted next). */
const SYNC_TIMEOUT_MS = 30_000;

function redisServerBinary(): string {
  const binary = findOnPath('redis-server');
  if (binary === undefined) throw new Error('redis-server is not installed (apt-get install redis-server)');
  return binary;
}

async function waitUntil(what: string, timeoutMs: number, done: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await done().catch(() => false)) return;
    if (Date.now() > deadline) throw new Error(`${what} not within ${timeoutMs} ms`);
    await sleep(50);
  }
}

function adminConnection(port: number): Redis {
  const connection = new Redis({ host: '127.0.0.1', port, lazyConnect: true, maxRetriesPerRequest: 0 });
  connection.on('error', () => undefined);
  return connection;
}

async function replicaInSync(port: number): Promise<boolean> {
  const connection = adminConnection(port);
  try {
    return (await connection.info('replication')).includes('master_link_status:up');
  } finally {
    connection.disconnect();
  }
}

/** A replica's replication offset: how much of its primary's stream it has applied. */
async function replicationOffset(port: number): Promise<number> {
  const connection = adminConnection(port);
  try {
    const offset = /^slave_repl_offset:(\d+)/m.exec(await connection.info('replication'))?.[1];
    if (offset === undefined) throw new Error(`node ${port} reports no replication offset`);
    return Number(offset);
  } finally {
    connection.disconnect();
  }
}

/**
 * The replicas, the one with the greatest replication offset first: the one to promote, as Redis
 * Sentinel chooses (the replica that processed most of the primary's stream) and as a durable store
 * never loses a confirmed write. A write `WAIT 1` confirmed is on at least one replica, and every
 * replica holds a prefix of one stream, so the furthest holds them all; another promoted instead loses
 * them, and the furthest, following it, needs a full sync, during which no write is confirmed.
 */
async function byReplicationOffset(
  replicas: readonly ServerProcess[],
): Promise<[ServerProcess, ...ServerProcess[]]> {
  const offsets = await Promise.all(replicas.map((replica) => replicationOffset(replica.port)));
  const order = replicas.map((_, i) => i).sort((a, b) => (offsets[b] as number) - (offsets[a] as number));
  const [furthest, ...others] = order.map((i) => replicas[i] as ServerProcess);
  if (!furthest) throw new Error('no replica to promote');
  return [furthest, ...others];
}

export interface ChaosRedisOptions {
  /** primary-replica only: replicas of the primary (default 1). */
  readonly replicas?: number;
}

export async function startChaosRedis(
  topology: ChaosTopology,
  options: ChaosRedisOptions = {},
): Promise<ChaosRedis> {
  return topology === 'cluster' ? startChaosCluster() : startPrimaryReplica(options.replicas ?? 1);
}

async function startChaosCluster(): Promise<ChaosRedis> {
  const redis = await startRedisTopology('cluster', { replicasPerPrimary: 1, nodeTimeoutMs: 1000 });
  const cluster = redis.cluster as LocalRedisCluster;
  const admin = new ClusterAdmin(cluster.nodes);
  // The killed node of the last failover, starting again: the next failover waits for its sync, so
  // every shard has a replica to promote, while the callers and other faults go on meanwhile.
  let rejoining: Promise<void> = Promise.resolve();
  return {
    topology: 'cluster',
    settings: redis.settings,
    async failover(pick) {
      await rejoining;
      const primaries = await admin.primaries();
      const owner = primaries[pick() % primaries.length];
      const slot = owner?.slots[0]?.[0];
      if (!owner || slot === undefined) throw new Error('no primary serves a slot');
      const victim = cluster.nodes.find((node) => node.port === owner.port);
      if (!victim) throw new Error(`primary ${owner.port} is no node of ours`);
      const killedAt = performance.now();
      await terminateProcess(victim.child, 'SIGKILL');
      await admin.waitForFailover(slot, owner, FAILOVER_TIMEOUT_MS);
      const promotedAfterMs = performance.now() - killedAt;
      rejoining = cluster
        .restartNode(victim.port)
        .then(() =>
          waitUntil(`node ${victim.port} in sync as a replica`, SYNC_TIMEOUT_MS, () =>
            replicaInSync(victim.port),
          ),
        );
      rejoining.catch(() => undefined);
      return { promotedAfterMs };
    },
    keys: (pattern) => redis.keys(pattern),
    async del(keys) {
      // A client made now: one made at the start has seen every failover, and a redirection to a node it
      // knew before that node's restart can find the connection closed (CI: "Connection is closed.").
      const fresh = await redis.client();
      try {
        for (const key of keys) await fresh.del(key);
      } finally {
        fresh.disconnect();
      }
    },
    async stop() {
      await rejoining.catch(() => undefined);
      admin.close();
      await redis.stop();
    },
  };
}

interface ServerProcess {
  readonly port: number;
  child: ChildProcess;
}

async function startPrimaryReplica(replicaCount: number): Promise<ChaosRedis> {
  const binary = redisServerBinary();
  // A replica's full sync writes an RDB file, which a node started again would load: each server keeps
  // its files in a folder of this run's own, removed at stop, never the working directory.
  const directory = await mkdtemp(join(tmpdir(), 'redis-chaos-'));
  const spawnServer = async (port: number, replicaOf?: number): Promise<ServerProcess> => ({
    port,
    child: await spawnRedisServer(binary, port, [
      ...['--dir', directory, '--dbfilename', `dump-${port}.rdb`],
      ...(replicaOf === undefined ? [] : ['--replicaof', '127.0.0.1', String(replicaOf)]),
    ]),
  });
  let primary = await spawnServer(await freePort());
  let replicas: ServerProcess[] = [];
  for (let i = 0; i < replicaCount; i++) replicas.push(await spawnServer(await freePort(), primary.port));
  for (const replica of replicas) {
    await waitUntil('replica in sync', SYNC_TIMEOUT_MS, () => replicaInSync(replica.port));
  }
  const endpoint = await startTcpProxy('127.0.0.1', primary.port);
  const inspector = () => adminConnection(primary.port);
  const command = async (port: number, ...args: string[]) => {
    const connection = adminConnection(port);
    try {
      await connection.call(args[0] as string, ...args.slice(1));
    } finally {
      connection.disconnect();
    }
  };
  return {
    topology: 'primary-replica',
    settings: { mode: 'standalone', host: endpoint.host, port: endpoint.port, tls: false },
    async failover() {
      const killedAt = performance.now();
      await terminateProcess(primary.child, 'SIGKILL');
      const [promoted, ...others] = await byReplicationOffset(replicas);
      await command(promoted.port, 'REPLICAOF', 'NO', 'ONE');
      // The other replicas follow the promoted node (a partial resync: it keeps the replication id).
      for (const other of others) await command(other.port, 'REPLICAOF', '127.0.0.1', String(promoted.port));
      // The endpoint's name moves to the promoted node: connections to the old one are gone with it.
      endpoint.retarget('127.0.0.1', promoted.port);
      const promotedAfterMs = performance.now() - killedAt;
      // Started again empty, as a replaced node is (no RDB file of an earlier sync).
      await rm(join(directory, `dump-${primary.port}.rdb`), { force: true });
      const restarted = await spawnServer(primary.port, promoted.port);
      [primary, replicas] = [promoted, [...others, restarted]];
      for (const replica of replicas) {
        await waitUntil('replicas in sync', SYNC_TIMEOUT_MS, () => replicaInSync(replica.port));
      }
      return { promotedAfterMs };
    },
    async usedMemory() {
      return Promise.all(
        [primary, ...replicas].map(async (server) => {
          const connection = adminConnection(server.port);
          try {
            return Number(/used_memory:(\d+)/.exec(await connection.info('memory'))?.[1]);
          } finally {
            connection.disconnect();
          }
        }),
      );
    },
    async keysWithoutTtl() {
      const connection = inspector();
      try {
        const keys = await connection.keys('*');
        const ttls = await Promise.all(keys.map((key) => connection.pttl(key)));
        return keys.filter((_, i) => ttls[i] === -1);
      } finally {
        connection.disconnect();
      }
    },
    async cut(ms) {
      endpoint.cut();
      await sleep(ms);
      endpoint.restore();
    },
    async keys(pattern) {
      const connection = inspector();
      try {
        return (await connection.keys(pattern)).sort();
      } finally {
        connection.disconnect();
      }
    },
    async del(keys) {
      const connection = inspector();
      try {
        for (const key of keys) await connection.del(key);
      } finally {
        connection.disconnect();
      }
    },
    async stop() {
      await endpoint.stop();
      await Promise.all([primary, ...replicas].map((server) => terminateProcess(server.child, 'SIGTERM')));
      await rm(directory, { recursive: true, force: true });
    },
  };
}
