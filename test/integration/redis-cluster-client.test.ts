/**
 * The product's cluster-mode client (redis-client.ts clusterOptions) against real Redis Clusters on
 * loopback: redirections run a command once, a command cut off by a dropped connection is never sent
 * again, and the TLS + AUTH shape of ElastiCache (a certificate that names the configuration endpoint,
 * nodes announced by address) connects to every primary.
 */

import { setTimeout as sleep } from 'node:timers/promises';
import { Cluster, type ClusterOptions } from 'ioredis';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  CLUSTER_RETRY_DELAY_MS,
  clusterOptions,
  createRedisClient,
  ensureConnected,
  onEveryPrimary,
  REDIS_COMMAND_TIMEOUT_MS,
  REDIS_CONNECT_TIMEOUT_MS,
  type RedisConnection,
} from '../../core/budget/redis-client';
import type { RedisSettings } from '../../core/settings/config';
import {
  type ClusterNodeProcess,
  findOnPath,
  type LocalRedisCluster,
  startRedisCluster,
  terminateProcess,
} from '../../local/redis';
import { startTcpProxy, type TcpProxy } from '../reliability/support/tcp-proxy';
import { certificateFor } from '../support/certificate';
import { ClusterAdmin, type ClusterMember } from '../support/cluster-admin';
import { startRedisTopology, type TestRedis } from '../support/redis-topology';

const clients: Cluster[] = [];
afterEach(() => {
  for (const client of clients.splice(0)) client.disconnect();
});

function track(client: Cluster): Cluster {
  client.on('error', () => undefined);
  client.on('node error', () => undefined);
  clients.push(client);
  return client;
}

describe('cluster client on a three-primary cluster', () => {
  let redis: TestRedis;
  let admin: ClusterAdmin;

  beforeAll(async () => {
    redis = await startRedisTopology('cluster');
    admin = new ClusterAdmin(redis.cluster?.nodes ?? []);
  });

  afterAll(async () => {
    admin?.close();
    await redis?.stop();
  });

  it('runs a command redirected by MOVED or ASK exactly once', async () => {
    const client = await redis.client();
    const key = 'am:{redirected}:count';
    expect(await client.incr(key)).toBe(1);
    const slot = await admin.slotOf(key);
    const owner = await admin.ownerOf(slot);
    const target = (await admin.primaries()).find((primary) => primary.id !== owner.id);
    if (!target) throw new Error('no other primary');
    // While the slot is open the key is already on the target: the old owner answers ASK.
    await admin.moveSlot(slot, target, async () => {
      expect(await client.incr(key)).toBe(2);
    });
    // Once moved, the old owner answers MOVED.
    expect(await client.incr(key)).toBe(3);
    expect(await admin.node(target).get(key)).toBe('3');
  });

  /**
   * ioredis sends a command refused with TRYAGAIN again to a random node, after the retry delay: one
   * cycle can cost three redirections (MOVED from a third primary, ASK from the source, TRYAGAIN from
   * the target), and ioredis gives up after 16. So at the product's timeout a long move fails the call by
   * either bound; these tests name the one they need.
   */
  async function splitScriptDuringMove(
    commandTimeoutMs: number,
    whileRefused: (call: () => Promise<unknown>) => Promise<void>,
  ): Promise<{
    counted: string;
    missing: string;
    script: string;
    client: RedisConnection;
    target: ClusterMember;
  }> {
    const client = await redis.client({ commandTimeoutMs });
    const [counted, missing] = [
      `am:{late${commandTimeoutMs}}:pending`,
      `am:{late${commandTimeoutMs}}:inflight`,
    ];
    await client.set(counted, '0');
    const slot = await admin.slotOf(counted);
    const owner = await admin.ownerOf(slot);
    const target = (await admin.primaries()).find((primary) => primary.id !== owner.id);
    if (!target) throw new Error('no other primary');
    // Two keys of a slot being migrated, one of them absent: Redis answers TRYAGAIN until the move ends.
    const script = "redis.call('incr', KEYS[1]); return redis.call('exists', KEYS[2])";
    await admin.moveSlot(slot, target, () => whileRefused(() => client.eval(script, 2, counted, missing)));
    return { counted, missing, script, client, target };
  }

  it('never sends a redirected command again once its caller has given up on it', async () => {
    // A timeout that ends within two retry cycles: the command is still being retried when it fires.
    const commandTimeoutMs = 2 * CLUSTER_RETRY_DELAY_MS;
    const { counted, missing, script, client, target } = await splitScriptDuringMove(
      commandTimeoutMs,
      async (call) => {
        const startedAt = performance.now();
        await expect(call()).rejects.toThrow('Command timed out');
        expect(performance.now() - startedAt).toBeLessThan(commandTimeoutMs + 200);
        // The move ends while ioredis would still be retrying: a late resend would now run.
        await sleep(80);
      },
    );
    await sleep(500);
    expect(await admin.node(target).get(counted)).toBe('0');
    expect(await client.eval(script, 2, counted, missing)).toBe(0);
    expect(await client.get(counted)).toBe('1');
  });

  it('fails a script refused for longer than the command timeout within it, counting nothing', async () => {
    const { counted, target } = await splitScriptDuringMove(REDIS_COMMAND_TIMEOUT_MS, async (call) => {
      const startedAt = performance.now();
      await expect(call()).rejects.toThrow(/Command timed out|Too many Cluster redirections/);
      expect(performance.now() - startedAt).toBeLessThan(REDIS_COMMAND_TIMEOUT_MS + 200);
      await sleep(REDIS_COMMAND_TIMEOUT_MS);
    });
    await sleep(500);
    expect(await admin.node(target).get(counted)).toBe('0');
  });

  it('leaves no unhandled rejection when the ASKING before a redirected command times out', async () => {
    const unhandled: unknown[] = [];
    const collect = (reason: unknown) => unhandled.push(reason);
    process.on('unhandledRejection', collect);
    try {
      const client = await redis.client();
      const key = 'am:{asking}:count';
      await client.set(key, '0');
      const slot = await admin.slotOf(key);
      const owner = await admin.ownerOf(slot);
      const target = (await admin.primaries()).find((primary) => primary.id !== owner.id);
      if (!target) throw new Error('no other primary');
      await admin.moveSlot(slot, target, async () => {
        // The key is on the target, which answers nothing for a while: the old owner answers ASK, and
        // both the ASKING ioredis sends first and the command itself outlive the command timeout.
        await admin.node(target).call('CLIENT', 'PAUSE', String(3 * REDIS_COMMAND_TIMEOUT_MS), 'ALL');
        await expect(client.incr(key)).rejects.toThrow('Command timed out');
        await sleep(3 * REDIS_COMMAND_TIMEOUT_MS);
      });
      await sleep(50);
      expect(unhandled).toEqual([]);
    } finally {
      process.off('unhandledRejection', collect);
    }
  });

  it('never sends again a command cut off by a dropped connection, even once the line is back', async () => {
    const nodes = redis.cluster?.nodes ?? [];
    const proxies = new Map<number, TcpProxy>();
    for (const node of nodes) proxies.set(node.port, await startTcpProxy(node.host, node.port));
    try {
      const client = track(clusterThroughProxies(redis.settings, nodes, proxies));
      await ensureConnected(client);
      const key = 'am:{dropped}:count';
      await client.set(key, '0');
      const owner = await admin.ownerOf(await admin.slotOf(key));
      const line = proxies.get(owner.port) as TcpProxy;
      // The owner holds the write; the connection drops under it, then the line comes back at once.
      await admin.node(owner).call('CLIENT', 'PAUSE', '1500', 'WRITE');
      const cut = client.incr(key).then(
        () => 'answered',
        (error: Error) => error.message,
      );
      await sleep(100);
      line.cut();
      await sleep(20);
      line.restore();
      expect(await cut).not.toBe('answered');
      await admin.node(owner).call('CLIENT', 'UNPAUSE');
      await sleep(500);
      // A resend would have reached the owner through the restored line and run after the pause.
      expect(await admin.node(owner).get(key)).toBe('0');
      expect(await client.incr(key)).toBe(1);
    } finally {
      for (const proxy of proxies.values()) await proxy.stop();
    }
  });
});

describe('cluster client on a cluster with a dead primary', () => {
  let redis: TestRedis;

  beforeAll(async () => {
    redis = await startRedisTopology('cluster');
  });

  afterAll(async () => {
    await redis?.stop();
  });

  it('a client whose first connect failed is not stuck: a later call connects once a seed answers', async () => {
    const [seed] = (redis.cluster?.nodes ?? []) as [ClusterNodeProcess];
    const proxy = await startTcpProxy(seed.host, seed.port);
    proxy.cut();
    const client = createRedisClient({ mode: 'cluster', host: proxy.host, port: proxy.port, tls: false });
    try {
      // A cold Lambda whose only seed does not answer: this invocation fails, within its bound.
      const startedAt = performance.now();
      await expect(ensureConnected(client)).rejects.toThrow();
      expect(performance.now() - startedAt).toBeLessThan(2 * 2 * REDIS_CONNECT_TIMEOUT_MS);
      proxy.restore();
      // The next invocation, on the same client: it waits for the client's own reconnect.
      await ensureConnected(client);
      expect(await client.set('am:{first-connect-retried}:since', '1')).toBe('OK');
    } finally {
      client.disconnect();
      await proxy.stop();
    }
  });

  it('connects through the live nodes, and serves the live shards', async () => {
    const nodes = redis.cluster?.nodes ?? [];
    const admin = new ClusterAdmin(nodes);
    try {
      const keys = Array.from({ length: 30 }, (_, i) => `am:{dead-${i}}:since`);
      const owners = await Promise.all(
        keys.map(async (key) => (await admin.ownerOf(await admin.slotOf(key))).port),
      );
      const [dead] = nodes as [ClusterNodeProcess];
      await terminateProcess(dead.child, 'SIGKILL');
      // A new client (a cold Lambda) while the shard has no primary: each connect picks nodes at random.
      for (let attempt = 0; attempt < 5; attempt++) {
        const client = await redis.client();
        for (const [i, key] of keys.entries()) {
          if (owners[i] !== dead.port) expect(await client.set(key, '1')).toBe('OK');
        }
        await redis.closeClients();
      }
    } finally {
      admin.close();
    }
  });
});

/** The product's cluster client, with every node reached through its proxy (natMap), as NAT would. */
function clusterThroughProxies(
  settings: RedisSettings,
  nodes: readonly ClusterNodeProcess[],
  proxies: ReadonlyMap<number, TcpProxy>,
): Cluster {
  const natMap = Object.fromEntries(
    nodes.map((node) => {
      const proxy = proxies.get(node.port) as TcpProxy;
      return [`${node.host}:${node.port}`, { host: proxy.host, port: proxy.port }];
    }),
  );
  const [first] = nodes as [ClusterNodeProcess];
  const seed = proxies.get(first.port) as TcpProxy;
  return new Cluster([{ host: seed.host, port: seed.port }], { ...clusterOptions(settings), natMap });
}

describe('cluster client on a TLS + AUTH cluster, as ElastiCache runs one', () => {
  const TOKEN = 'local-auth-token-0123456789';
  /** The certificate names `localhost` only, as ElastiCache's names its endpoints, never an address. */
  const ENDPOINT = 'localhost';
  let certificate: string;
  let cluster: LocalRedisCluster | undefined;
  let nodes: readonly ClusterNodeProcess[] = [];

  beforeAll(async () => {
    const pems = await certificateFor(ENDPOINT);
    certificate = pems.certificate;
    cluster = await startRedisCluster(findOnPath('redis-server') ?? '/usr/bin/redis-server', {
      security: {
        ...pems,
        serverName: ENDPOINT,
        adminPassword: TOKEN,
      },
    });
    nodes = cluster.nodes;
  });

  afterAll(async () => {
    await cluster?.stop();
  });

  /** The product's options for the endpoint, plus trust in the local certificate (ElastiCache's is public). */
  function elastiCacheClient(
    settings: Partial<RedisSettings>,
    trust: (options: ClusterOptions) => ClusterOptions,
  ) {
    const [first] = nodes as [ClusterNodeProcess];
    const full: RedisSettings = { mode: 'cluster', host: ENDPOINT, port: first.port, tls: true, ...settings };
    return track(new Cluster([{ host: full.host, port: full.port }], trust(clusterOptions(full))));
  }

  const trustLocalCa = (options: ClusterOptions): ClusterOptions => ({
    ...options,
    redisOptions: { ...options.redisOptions, tls: { ...options.redisOptions?.tls, ca: certificate } },
  });

  it('reaches every primary by the addresses the cluster announces, checked against the endpoint name', async () => {
    const client = elastiCacheClient({ password: TOKEN }, trustLocalCa);
    await ensureConnected(client);
    const keys = Array.from({ length: 30 }, (_, i) => `am:{tls-${i}}:since`);
    for (const key of keys) await client.set(key, key);
    for (const key of keys) expect(await client.get(key)).toBe(key);
    const primaries = client.nodes('master');
    expect(primaries).toHaveLength(3);
    for (const primary of primaries) {
      expect(primary.options.host).toBe('127.0.0.1');
      expect(primary.status).toBe('ready');
    }
  });

  it('fails on nodes announced by address when the certificate is checked against the address', async () => {
    const client = elastiCacheClient({ password: TOKEN }, (options) => ({
      ...options,
      redisOptions: { ...options.redisOptions, tls: { ca: certificate } },
    }));
    expect(await firstWrite(client, 'am:{no-servername}:since')).not.toBe('answered');
  });

  it('is refused without the AUTH token', async () => {
    const client = elastiCacheClient({}, trustLocalCa);
    expect(await firstWrite(client, 'am:{no-auth}:since')).not.toBe('answered');
  });
});

/** 'answered', or why the connect or the write failed. */
function firstWrite(client: Cluster, key: string): Promise<string> {
  return ensureConnected(client)
    .then(() => client.set(key, '1'))
    .then(
      () => 'answered',
      (error: Error) => error.message,
    );
}

describe('cluster client through a failover', () => {
  /**
   * How soon after the cluster is healthy again the client must serve every shard, the promoted one
   * included, and scan every primary: a few slot refreshes' worth, far below the lease a reporter would
   * otherwise leave behind (a minute). A functional bound, not a speed target: a client that never
   * refreshes its view fails it by minutes.
   */
  const RECOVERY_BOUND_MS = 5000;
  const FAILOVERS = 4;
  let redis: TestRedis;
  let admin: ClusterAdmin;

  beforeAll(async () => {
    redis = await startRedisTopology('cluster', { replicasPerPrimary: 1, nodeTimeoutMs: 1000 });
    admin = new ClusterAdmin(redis.cluster?.nodes ?? []);
  });

  afterAll(async () => {
    admin?.close();
    await redis?.stop();
  });

  it('serves every shard and primary within seconds of the cluster being healthy, killed nodes back as replicas', {
    timeout: 120_000,
  }, async () => {
    const client = await redis.client();
    const keys = Array.from({ length: 12 }, (_, i) => `am:{failover-${i}}:since`);
    for (const key of keys) expect(await client.set(key, '0')).toBe('OK');
    const cluster = redis.cluster as LocalRedisCluster;
    // The reporter keeps using its client while a shard has no primary, as it does under traffic:
    // scripts on each budget's keys, and a scan of every primary (the sweep).
    let stop = false;
    const failures: { at: number; message: string }[] = [];
    const user = (async () => {
      while (!stop) {
        const round = await Promise.allSettled([
          ...keys.map(async (key) => {
            await ensureConnected(client);
            return client.eval("return redis.call('INCR', KEYS[1])", 1, key);
          }),
          onEveryPrimary(client, (primary) => primary.dbsize()).then((sizes) => {
            if (sizes.length < 3) throw new Error(`${sizes.length} primaries answered`);
          }),
        ]);
        for (const outcome of round) {
          if (outcome.status === 'rejected')
            failures.push({ at: performance.now(), message: (outcome.reason as Error).message });
        }
        await sleep(100);
      }
    })();
    // Each round kills the primary of another budget's shard, waits for its replica's promotion and
    // starts the killed node again (it rejoins as a replica), then watches the client for a while.
    const healthy: { from: number; to: number }[] = [];
    for (const key of keys.slice(0, FAILOVERS)) {
      const slot = await admin.slotOf(key);
      const owner = await admin.ownerOf(slot);
      const victim = cluster.nodes.find((node) => node.port === owner.port) as ClusterNodeProcess;
      await terminateProcess(victim.child, 'SIGKILL');
      await admin.waitForFailover(slot, owner, 30_000);
      await cluster.restartNode(victim.port);
      const from = performance.now();
      await sleep(2 * RECOVERY_BOUND_MS);
      healthy.push({ from, to: performance.now() });
    }
    stop = true;
    await user;
    // A failure is late when the cluster had been ok for longer than the bound, before the next kill.
    const late = failures.filter(({ at }) =>
      healthy.some(({ from, to }) => at > from + RECOVERY_BOUND_MS && at < to),
    );
    console.log(
      `[cluster failover] ${FAILOVERS} failovers; failures ${failures.length}, past ${RECOVERY_BOUND_MS} ms ` +
        `of a healthy cluster: ${late.length} ${JSON.stringify([...new Set(late.map(({ message }) => message))])}`,
    );
    expect(late.map(({ message }) => message)).toEqual([]);
  });
});
