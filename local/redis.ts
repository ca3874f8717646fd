/**
 * Redis for the local stack: a real redis-server on a free loopback port when one is installed (no
 * persistence, stopped with the stack), a local Redis Cluster of redis-servers, or an in-memory
 * stand-in (ioredis-mock) that the handlers use through the same ioredis interface.
 */
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { accessSync, constants } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { delimiter, dirname, join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';
import Redis, { type RedisOptions } from 'ioredis';
import type { RedisNode, RedisSettings } from '../core/settings/config';
import { LOOPBACK } from './http-server';

export type LocalRedisKind = 'redis-server' | 'redis-cluster' | 'in-memory' | 'external' | 'external-cluster';

export interface LocalRedis {
  readonly kind: LocalRedisKind;
  /** The server, or a cluster's first node. */
  readonly host: string;
  readonly port: number;
  /** How the handlers reach it (for a cluster: cluster mode, every node a seed). */
  readonly settings: RedisSettings;
  /** Only for kind 'in-memory': a new client on the shared in-memory data set. */
  readonly createInMemoryClient?: () => Redis;
  stop(): Promise<void>;
}

const READY_TIMEOUT_MS = 10_000;
const STOP_TIMEOUT_MS = 5_000;
const START_ATTEMPTS = 3;
/** How long a new cluster may take to agree on its slots and to sync its replicas. */
const CLUSTER_READY_TIMEOUT_MS = 30_000;
/** Persistence off: a local Redis starts empty and leaves nothing on disk. */
const NO_PERSISTENCE = ['--save', '', '--appendonly', 'no'];

function standalone(host: string, port: number): RedisSettings {
  return { mode: 'standalone', host, port, tls: false };
}

/** The first executable `name` on PATH, or undefined. */
export function findOnPath(name: string, path = process.env.PATH ?? ''): string | undefined {
  for (const directory of path.split(delimiter)) {
    if (directory === '') continue;
    const candidate = join(directory, name);
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // not in this directory
    }
  }
  return undefined;
}

/** A TCP port nothing listens on at the moment of asking (another process may take it before use). */
export async function freePort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve, reject) => {
    probe.once('error', reject);
    probe.listen(0, LOOPBACK, resolve);
  });
  const address = probe.address();
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  if (address === null || typeof address === 'string') throw new Error('the OS gave no free TCP port');
  return address.port;
}

/**
 * Spawns `binary` on loopback `port` with persistence off and resolves once it accepts connections. A
 * server that exits or is not ready in time is killed, and the error carries the end of its output.
 */
export function spawnRedisServer(
  binary: string,
  port: number,
  extraArgs: readonly string[] = [],
): Promise<ChildProcess> {
  const child = spawn(
    binary,
    ['--port', String(port), '--bind', LOOPBACK, ...NO_PERSISTENCE, ...extraArgs],
    // A process group of its own: a terminal's Ctrl-C signals the whole foreground group, and redis-server
    // would shut down at once, under the flush that needs it. Its owner stops it instead.
    { stdio: ['ignore', 'pipe', 'pipe'], detached: true },
  );
  return new Promise((resolve, reject) => {
    let output = '';
    const done = (error?: Error) => {
      clearTimeout(timer);
      child.stdout?.removeListener('data', onData);
      child.removeListener('exit', onExit);
      child.removeListener('error', done);
      if (error) {
        child.kill('SIGKILL');
        reject(new Error(`${error.message}\n${output.slice(-2000)}`));
        return;
      }
      // Keep draining its output so a full pipe never blocks the server.
      child.stdout?.resume();
      child.stderr?.resume();
      resolve(child);
    };
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      if (output.includes('Ready to accept connections')) done();
    };
    const onExit = (code: number | null) => done(new Error(`redis-server exited with code ${code}`));
    const timer = setTimeout(
      () => done(new Error(`redis-server not ready after ${READY_TIMEOUT_MS} ms`)),
      READY_TIMEOUT_MS,
    );
    child.stdout?.on('data', onData);
    child.once('exit', onExit);
    child.once('error', done);
  });
}

/** Sends `signal` and waits for the exit; a process still running after STOP_TIMEOUT_MS gets SIGKILL. */
export async function terminateProcess(child: ChildProcess, signal: NodeJS.Signals): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill(signal);
  const timer = setTimeout(() => child.kill('SIGKILL'), STOP_TIMEOUT_MS);
  await exited;
  clearTimeout(timer);
}

/**
 * Spawns `binary` on loopback with persistence off, on `port` or else a free port (a new one when
 * another process took the probed port first). `extraArgs(port)` adds settings of its own.
 */
async function spawnOnFreePort(
  binary: string,
  port: number | undefined,
  extraArgs: (port: number) => readonly string[] = () => [],
): Promise<{ readonly port: number; readonly child: ChildProcess }> {
  let lastError: unknown;
  // A fixed port is tried once: a retry would find it as taken as before.
  const attempts = port === undefined ? START_ATTEMPTS : 1;
  for (let attempt = 0; attempt < attempts; attempt++) {
    const candidate = port ?? (await freePort());
    try {
      return { port: candidate, child: await spawnRedisServer(binary, candidate, extraArgs(candidate)) };
    } catch (error) {
      lastError = error;
    }
  }
  throw lastError;
}

/** Kills the processes with SIGKILL if this process exits without stopping them; returns the undo. */
function killOnExit(children: () => readonly ChildProcess[]): () => void {
  const kill = () => {
    for (const child of children()) child.kill('SIGKILL');
  };
  process.once('exit', kill);
  return () => process.removeListener('exit', kill);
}

/**
 * Spawns `binary` on loopback with persistence off, on `port` or else a free port; it is killed when this
 * process exits.
 */
export async function startRedisServer(
  binary: string,
  options: { readonly port?: number } = {},
): Promise<LocalRedis> {
  const { port, child } = await spawnOnFreePort(binary, options.port);
  const forget = killOnExit(() => [child]);
  return {
    kind: 'redis-server',
    host: LOOPBACK,
    port,
    settings: standalone(LOOPBACK, port),
    async stop() {
      forget();
      await terminateProcess(child, 'SIGTERM');
    },
  };
}

export interface RedisClusterOptions {
  /** Default 3. */
  readonly primaries?: number;
  /** Default 0. */
  readonly replicasPerPrimary?: number;
  /** cluster-node-timeout: how long a silent node takes to be declared failed (and a replica promoted). */
  readonly nodeTimeoutMs?: number;
  /** TLS and ACL users, as Amazon MemoryDB runs a cluster. Default: plain TCP, no AUTH. */
  readonly security?: ClusterSecurity;
}

/** An ACL user every node of a secured cluster has from its start (a restarted node too). */
export interface ClusterUser {
  readonly name: string;
  readonly password: string;
  /** ACL rules after `on` and the password: key patterns, command categories and commands. */
  readonly rules: readonly string[];
}

/**
 * TLS on every link (clients, cluster bus, replication) and AUTH on every connection, as MemoryDB
 * requires. The certificate is its own CA and names `serverName`, never an address: the nodes announce
 * addresses, and a client checks each node against the endpoint's name, as with MemoryDB's.
 */
export interface ClusterSecurity {
  /** PEM certificate and private key of every node. */
  readonly certificate: string;
  readonly privateKey: string;
  /** The name the certificate gives: the host of the cluster's settings. */
  readonly serverName: string;
  /** The `default` user's password: redis-cli, the replicas and the readiness checks use it. */
  readonly adminPassword: string;
  readonly users?: readonly ClusterUser[];
}

/** The arguments that secure a node: TLS on its only port, AUTH, and the ACL users. */
function securityArgs(security: ClusterSecurity, directory: string, port: number): string[] {
  const certFile = join(directory, 'cert.pem');
  return [
    ...['--port', '0', '--tls-port', String(port), '--tls-cluster', 'yes', '--tls-replication', 'yes'],
    ...['--tls-cert-file', certFile, '--tls-key-file', join(directory, 'key.pem')],
    ...['--tls-ca-cert-file', certFile, '--tls-auth-clients', 'no'],
    ...['--requirepass', security.adminPassword, '--masterauth', security.adminPassword],
    ...(security.users ?? []).flatMap((user) => [
      '--user',
      user.name,
      'on',
      `>${user.password}`,
      ...user.rules,
    ]),
  ];
}

/** How redis-cli and the readiness checks reach a secured node as the default user. */
function adminConnection(security: ClusterSecurity | undefined): Partial<RedisOptions> {
  if (!security) return {};
  return {
    password: security.adminPassword,
    tls: { ca: security.certificate, servername: security.serverName },
  };
}

export const DEFAULT_CLUSTER_NODE_TIMEOUT_MS = 5000;

export interface ClusterNodeProcess extends RedisNode {
  readonly child: ChildProcess;
}

export interface LocalRedisCluster extends LocalRedis {
  readonly kind: 'redis-cluster';
  /** Every node; which are primaries, and which slots each serves, changes with failovers and resharding. */
  readonly nodes: readonly ClusterNodeProcess[];
  /** The nodes' cluster files (nothing else is written); removed on stop. */
  readonly directory: string;
  /**
   * Starts a stopped (killed) node again on its port, empty (no persistence) but with its cluster file:
   * it rejoins the cluster, as a replica of whichever node took its slots. Replaces it in `nodes`.
   */
  restartNode(port: number): Promise<ClusterNodeProcess>;
}

const execFileAsync = promisify(execFile);

/**
 * A Redis Cluster of redis-servers on free loopback ports, persistence off, its node files in a
 * temporary folder removed on stop: `primaries` primaries sharing the 16384 slots evenly, each with
 * `replicasPerPrimary` replicas. Slots and replicas are assigned by `redis-cli --cluster create`
 * (installed with redis-server); resolves once every node sees the cluster ok and every replica is in
 * sync. Every node leads its own process group, as startRedisServer's does.
 */
export async function startRedisCluster(
  binary: string,
  options: RedisClusterOptions = {},
): Promise<LocalRedisCluster> {
  const primaries = options.primaries ?? 3;
  const replicas = options.replicasPerPrimary ?? 0;
  const nodeTimeoutMs = options.nodeTimeoutMs ?? DEFAULT_CLUSTER_NODE_TIMEOUT_MS;
  const directory = await mkdtemp(join(tmpdir(), 'redis-cluster-'));
  const nodes: ClusterNodeProcess[] = [];
  const forget = killOnExit(() => nodes.map((node) => node.child));
  const stop = async () => {
    forget();
    await Promise.all(nodes.map((node) => terminateProcess(node.child, 'SIGTERM')));
    await rm(directory, { recursive: true, force: true });
  };
  const { security } = options;
  if (security) {
    await writeFile(join(directory, 'cert.pem'), security.certificate);
    await writeFile(join(directory, 'key.pem'), security.privateKey, { mode: 0o600 });
  }
  const nodeArgs = (port: number) => [
    ...(security ? securityArgs(security, directory, port) : []),
    '--dir',
    directory,
    '--cluster-enabled',
    'yes',
    '--cluster-config-file',
    `nodes-${port}.conf`,
    // A replica's full sync writes an RDB file even with persistence off: one per node, never shared.
    '--dbfilename',
    `dump-${port}.rdb`,
    '--cluster-node-timeout',
    String(nodeTimeoutMs),
  ];
  try {
    for (let i = 0; i < primaries * (1 + replicas); i++) {
      const { port, child } = await spawnOnFreePort(binary, undefined, nodeArgs);
      nodes.push({ host: LOOPBACK, port, child });
    }
    const cli = findOnPath('redis-cli') ?? join(dirname(binary), 'redis-cli');
    await execFileAsync(
      cli,
      [
        ...(security ? ['--tls', '--cacert', join(directory, 'cert.pem'), '--sni', security.serverName] : []),
        ...(security ? ['-a', security.adminPassword, '--no-auth-warning'] : []),
        '--cluster',
        'create',
        ...nodes.map((node) => `${node.host}:${node.port}`),
        '--cluster-replicas',
        String(replicas),
        '--cluster-yes',
      ],
      { timeout: CLUSTER_READY_TIMEOUT_MS },
    );
    await waitForClusterReady(nodes, primaries, adminConnection(security));
  } catch (error) {
    await stop();
    throw error;
  }
  const [first] = nodes as [ClusterNodeProcess];
  return {
    kind: 'redis-cluster',
    host: first.host,
    port: first.port,
    settings: security
      ? { ...clusterSettings(nodes), host: security.serverName, tls: true }
      : clusterSettings(nodes),
    nodes,
    directory,
    stop,
    async restartNode(port) {
      const index = nodes.findIndex((node) => node.port === port);
      const old = nodes[index];
      if (!old) throw new Error(`no node of this cluster listens on ${port}`);
      await terminateProcess(old.child, 'SIGKILL');
      // Empty, as a replaced node is: the RDB file of its last sync as a replica stays behind.
      await rm(join(directory, `dump-${port}.rdb`), { force: true });
      const restarted = { host: LOOPBACK, port, child: await spawnRedisServer(binary, port, nodeArgs(port)) };
      nodes[index] = restarted;
      return restarted;
    },
  };
}

/** Cluster mode, reached through the first node, every other node a seed. */
export function clusterSettings(nodes: readonly RedisNode[]): RedisSettings {
  const [first, ...others] = nodes;
  if (!first) throw new Error('a cluster needs at least one node');
  return {
    mode: 'cluster',
    host: first.host,
    port: first.port,
    seeds: others.map(({ host, port }) => ({ host, port })),
    tls: false,
  };
}

/** Every node says cluster_state:ok and knows `primaries` primaries; every replica's link is up. */
async function waitForClusterReady(
  nodes: readonly RedisNode[],
  primaries: number,
  connection: Partial<RedisOptions>,
): Promise<void> {
  const clients = nodes.map(
    (node) =>
      new Redis({ host: node.host, port: node.port, lazyConnect: true, commandTimeout: 2000, ...connection }),
  );
  const deadline = Date.now() + CLUSTER_READY_TIMEOUT_MS;
  try {
    for (;;) {
      const views = await Promise.all(
        clients.map(async (client) => ({
          info: await client.cluster('INFO'),
          replication: await client.info('replication'),
        })),
      );
      const ready = views.every(
        ({ info, replication }) =>
          info.includes('cluster_state:ok') &&
          info.includes(`cluster_size:${primaries}`) &&
          (replication.includes('role:master') || replication.includes('master_link_status:up')),
      );
      if (ready) return;
      if (Date.now() > deadline)
        throw new Error(`the local Redis cluster was not ready after ${CLUSTER_READY_TIMEOUT_MS} ms`);
      await sleep(100);
    }
  } finally {
    for (const client of clients) client.disconnect();
  }
}

/** An in-memory data set: every client made by createInMemoryClient shares it, as clients of one server do. */
export async function startInMemoryRedis(): Promise<LocalRedis> {
  const { default: RedisMock } = await import('ioredis-mock');
  // ioredis-mock shares data between instances with the same host and port; a free port keeps stacks apart.
  const port = await freePort();
  const clients: Redis[] = [];
  return {
    kind: 'in-memory',
    host: LOOPBACK,
    port,
    settings: standalone(LOOPBACK, port),
    createInMemoryClient() {
      const client = new RedisMock({ host: LOOPBACK, port }) as unknown as Redis;
      clients.push(client);
      return client;
    },
    async stop() {
      await Promise.all(clients.map((client) => client.flushall().then(() => client.disconnect())));
    },
  };
}

export type RedisChoice =
  /** redis-server from PATH when installed, else in-memory (the default). */
  | 'auto'
  | 'in-memory'
  /** A local cluster of three primaries started from the installed redis-server. */
  | 'cluster'
  /** An already running server the stack neither starts nor stops. */
  | { readonly host: string; readonly port: number }
  /** An already running cluster, by its seed nodes; the stack neither starts nor stops it. */
  | { readonly cluster: readonly RedisNode[] };

/**
 * Starts the Redis the choice asks for; `warn` hears about the in-memory fallback. `searchPath` is where
 * 'auto' looks for redis-server (default PATH).
 */
export async function startLocalRedis(
  choice: RedisChoice,
  warn: (line: string) => void,
  searchPath = process.env.PATH ?? '',
): Promise<LocalRedis> {
  if (typeof choice === 'object') return externalRedis(choice);
  const binary = choice === 'in-memory' ? undefined : findOnPath('redis-server', searchPath);
  if (choice === 'cluster') {
    if (binary === undefined) throw new Error(`a local Redis cluster needs redis-server: ${INSTALL_HINT}`);
    return startRedisCluster(binary);
  }
  if (binary !== undefined) return startRedisServer(binary);
  if (choice === 'auto') {
    warn(
      `redis-server is not installed: using an in-memory Redis stand-in (ioredis-mock). ${INSTALL_HINT} to run on real Redis.`,
    );
  }
  return startInMemoryRedis();
}

const INSTALL_HINT = 'Install redis-server (apt-get install redis-server, or brew install redis)';

function externalRedis(choice: Exclude<RedisChoice, string>): LocalRedis {
  const stop = async () => undefined;
  if ('cluster' in choice) {
    const settings = clusterSettings(choice.cluster);
    return { kind: 'external-cluster', host: settings.host, port: settings.port, settings, stop };
  }
  return {
    kind: 'external',
    host: choice.host,
    port: choice.port,
    settings: standalone(choice.host, choice.port),
    stop,
  };
}
