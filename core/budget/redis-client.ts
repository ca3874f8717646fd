/**
 * The one ioredis client of a container (Lambda, local stack, bench), with settings fit for Lambda:
 * a command fails fast instead of waiting in an offline queue, so the authorizer can fall back to the
 * platform within its own timeout (invariant 8). One client per connection mode (config.ts RedisMode):
 * a standalone `Redis`, or a `Cluster` that holds one such connection per node.
 */
import Redis, { Cluster, type ClusterOptions, type Command, type RedisOptions } from 'ioredis';
import { type LogPort, silentLogger } from '../observability/observability';
import type { RedisMode, RedisNode, RedisSettings } from '../settings/config';

/** Bounds of a TCP (+TLS, +AUTH) connect, and of one command; the authorizer's budget depends on them. */
export const REDIS_CONNECT_TIMEOUT_MS = 1000;
export const REDIS_COMMAND_TIMEOUT_MS = 300;
const MAX_RECONNECT_DELAY_MS = 2000;
/**
 * Cluster mode: how often the client reads the slot map again on its own. ioredis reads it again on a
 * MOVED reply, but a command to a killed primary fails with "Connection is closed." (never resent, see
 * clusterOptions) and teaches it nothing: without this its map could point at a dead or demoted node
 * long after a failover ended. A failed command also asks for a read at once (refreshOnFailure).
 */
export const SLOTS_REFRESH_INTERVAL_MS = 2000;
/**
 * Pause before a command refused with TRYAGAIN (its slot is being migrated) or CLUSTERDOWN (a
 * failover is under way) is sent again. Redis refused it without running it, so sending it again
 * counts nothing twice; two or three tries fit in one command timeout.
 */
export const CLUSTER_RETRY_DELAY_MS = 50;

/** The client of either mode. */
export type RedisConnection = Redis | Cluster;

export interface RedisClientOptions {
  /** AUTH token, or the ACL user's password, read from Secrets Manager; settings.password is used when absent. */
  readonly password?: string;
  readonly logger?: LogPort;
  readonly connectTimeoutMs?: number;
  /**
   * Default REDIS_COMMAND_TIMEOUT_MS, the Lambda bound. Only the local stack sets another: it runs every
   * function on one event loop, where a burst of concurrent calls can hold a reply longer than a Lambda
   * container ever would.
   */
  readonly commandTimeoutMs?: number;
}

/** A frozen Lambda finds its sockets closed on thaw: reconnect soon, never give up. */
const reconnectDelay = (attempt: number) => Math.min(attempt * 100, MAX_RECONNECT_DELAY_MS);

export function redisOptions(settings: RedisSettings, options: RedisClientOptions = {}): RedisOptions {
  const password = options.password ?? settings.password;
  return {
    host: settings.host,
    port: settings.port,
    // With a user name ioredis sends AUTH username password (an ACL user, as MemoryDB has).
    ...(settings.username !== undefined && { username: settings.username }),
    ...(password !== undefined && { password }),
    ...(settings.tls && { tls: { servername: settings.host } }),
    lazyConnect: true,
    connectTimeout: Math.min(options.connectTimeoutMs ?? REDIS_CONNECT_TIMEOUT_MS, REDIS_CONNECT_TIMEOUT_MS),
    commandTimeout: options.commandTimeoutMs ?? REDIS_COMMAND_TIMEOUT_MS,
    enableOfflineQueue: false,
    maxRetriesPerRequest: 1,
    // A command cut off by a dropped connection is not sent again once it is back: its caller has
    // already answered without it (the authorizer through the platform), so a resend counts twice.
    autoResendUnfulfilledCommands: false,
    retryStrategy: reconnectDelay,
  };
}

/**
 * Cluster mode: every node connection gets the standalone settings above (timeouts, AUTH, TLS, no
 * resend); the Cluster itself follows MOVED and ASK at once (the node refused the command without
 * running it), and never sends a command again after its connection closed.
 */
export function clusterOptions(settings: RedisSettings, options: RedisClientOptions = {}): ClusterOptions {
  // The Cluster owns the address, the node's reconnects (none: a lost node is found again through
  // the slots of the others) and the offline queue.
  const { host, port, retryStrategy, enableOfflineQueue, ...node } = redisOptions(settings, options);
  return {
    lazyConnect: true,
    enableOfflineQueue: false,
    clusterRetryStrategy: reconnectDelay,
    clusterNodeRetryStrategy: reconnectDelay,
    // "Connection is closed." is also the error of a command the node may already have run: ioredis
    // would send it again after this delay (its default 100 ms), counting the call twice. 0: never.
    retryDelayOnFailover: 0,
    retryDelayOnMoved: 0,
    retryDelayOnTryAgain: CLUSTER_RETRY_DELAY_MS,
    retryDelayOnClusterDown: CLUSTER_RETRY_DELAY_MS,
    slotsRefreshTimeout: node.connectTimeout,
    slotsRefreshInterval: SLOTS_REFRESH_INTERVAL_MS,
    // The ready check (CLUSTER INFO) goes to any node, a dead one too while a shard fails over, and a
    // failed check leaves connect() pending. Ready once a node gave the slots: a command for a shard
    // without a primary fails on its own, with CLUSTERDOWN or a closed connection.
    enableReadyCheck: false,
    scaleReads: 'master',
    // ElastiCache with TLS: connect by the names it gives (their certificate names them), not by the
    // addresses they resolve to, and check every node against the configured host (the
    // certificate covers the configuration endpoint and its nodes alike).
    ...(settings.tls && { dnsLookup: (address, callback) => callback(null, address) }),
    redisOptions: node,
  };
}

function startupNodes(settings: RedisSettings): RedisNode[] {
  return [{ host: settings.host, port: settings.port }, ...(settings.seeds ?? [])];
}

/**
 * ioredis sends a redirected command again (MOVED, ASK, or TRYAGAIN after a pause) even when its
 * caller has given up on it already (command timeout): the authorizer has answered that call through
 * the platform by then, and the script would count it a second time. A command whose promise has
 * settled is never written to a node again.
 */
function neverResendSettled(cluster: Cluster): Cluster {
  const settled = new WeakSet<Command>();
  const route = cluster.sendCommand.bind(cluster);
  cluster.sendCommand = (command: Command, ...rest: unknown[]) => {
    const mark = () => settled.add(command);
    command.promise.then(mark, mark);
    return route(command, ...(rest as []));
  };
  cluster.on('+node', (node: Redis) => {
    const write = node.sendCommand.bind(node);
    node.sendCommand = (command: Command, ...rest: unknown[]) =>
      settled.has(command) ? command.promise : write(command, ...(rest as []));
  });
  return cluster;
}

/**
 * ioredis sends ASKING before a command redirected by ASK and never looks at its answer. With a command
 * timeout, an ASKING answered late (a node busy while a slot moves) is an unhandled rejection, and a
 * Lambda runtime exits on one. The command it precedes fails or succeeds on its own.
 */
function observeAsking(cluster: Cluster): Cluster {
  cluster.on('+node', (node: Redis) => {
    const write = node.sendCommand.bind(node);
    node.sendCommand = (command: Command, ...rest: unknown[]) => {
      if (command.name === 'asking') command.promise.catch(() => undefined);
      return write(command, ...(rest as []));
    };
  });
  return cluster;
}

/**
 * A command that failed for want of a live primary (a closed connection, a timeout, CLUSTERDOWN) is not
 * sent again, but the client reads the slot map again at once, so the next command goes to the promoted
 * replica as soon as the cluster names it (one read at a time: ioredis joins concurrent requests).
 */
function refreshOnFailure(cluster: Cluster): Cluster {
  const route = cluster.sendCommand.bind(cluster);
  const refresh = () => {
    if (cluster.status === 'ready') cluster.refreshSlotsCache();
  };
  cluster.sendCommand = (command: Command, ...rest: unknown[]) => {
    command.promise.catch(refresh);
    return route(command, ...(rest as []));
  };
  return cluster;
}

/** The cluster wrappers every cluster client of ours runs with, for a Cluster made elsewhere (the plugin's). */
export function guardedCluster(cluster: Cluster): Cluster {
  return observeAsking(refreshOnFailure(neverResendSettled(cluster)));
}

const CONNECTION_MODES: Readonly<
  Record<RedisMode, (settings: RedisSettings, options: RedisClientOptions) => RedisConnection>
> = {
  standalone: (settings, options) => new Redis(redisOptions(settings, options)),
  cluster: (settings, options) =>
    guardedCluster(new Cluster(startupNodes(settings), clusterOptions(settings, options))),
};

/** Creates the client (not yet connected) and attaches the error listeners; errors are logged without secrets. */
export function createRedisClient(
  settings: RedisSettings & { readonly mode?: 'standalone' },
  options?: RedisClientOptions,
): Redis;
export function createRedisClient(settings: RedisSettings, options?: RedisClientOptions): RedisConnection;
export function createRedisClient(
  settings: RedisSettings,
  options: RedisClientOptions = {},
): RedisConnection {
  const logger = options.logger ?? silentLogger;
  const client = CONNECTION_MODES[settings.mode ?? 'standalone'](settings, options);
  client.on('error', (error: Error & { code?: string }) => {
    logger.warn('redis connection error', { error: error.message, code: error.code });
  });
  if (isCluster(client)) {
    client.on('node error', (error: Error & { code?: string }, node: string) => {
      logger.warn('redis node error', { error: error.message, code: error.code, node });
    });
  }
  return client;
}

export function isCluster(client: RedisConnection): client is Cluster {
  return (client as { isCluster?: boolean }).isCluster === true;
}

/** The command timeout the client's connections run with; undefined without one. */
export function commandTimeoutOf(client: RedisConnection): number | undefined {
  return isCluster(client) ? client.options.redisOptions?.commandTimeout : client.options?.commandTimeout;
}

const connecting = new WeakMap<RedisConnection, Promise<void>>();

/**
 * Whether ensureConnected would wait before a command: a connect under way or to start. A caller on the
 * hot path asks this first and, when nothing is to wait for, sends at once instead of awaiting a promise
 * that is already settled (a turn of the event loop's microtasks, about 10 µs of a serial call).
 */
export function mustConnectFirst(client: RedisConnection): boolean {
  const { status } = client;
  return (
    connecting.has(client) ||
    status === 'wait' ||
    status === 'connect' ||
    status === 'connecting' ||
    status === 'reconnecting'
  );
}

/**
 * Connects a lazy client on its first use (concurrent callers share that one connect), and waits at
 * most `waitMs` for a client that is reconnecting: without an offline queue a command sent meanwhile
 * would fail at once. The authorizer waits briefly (a Redis outage must not add a connect timeout to
 * every call); the reporter, which nobody waits for, waits the connect timeout.
 */
export async function ensureConnected(
  client: RedisConnection,
  waitMs = REDIS_CONNECT_TIMEOUT_MS,
): Promise<void> {
  const pending = connecting.get(client);
  if (pending) return pending;
  if (client.status === 'wait') {
    const connect = connectClient(client).finally(() => connecting.delete(client));
    connecting.set(client, connect);
    return connect;
  }
  if (mustConnectFirst(client)) return waitForReady(client, waitMs);
}

/**
 * A cluster is ready once it knows its slots; its node connections open on their first command, and
 * without an offline queue a second command that reaches a node still connecting fails at once. So a
 * new cluster client opens every primary's connection before its first command (in parallel; a
 * primary that cannot be reached fails only its own commands).
 */
async function connectClient(client: RedisConnection): Promise<void> {
  if (!isCluster(client)) return client.connect();
  // A Cluster's connect() can stay pending while ioredis retries behind it: the first connect gets a
  // bound of its own, one connect to a seed plus one slots read.
  await withDeadline(
    client.connect(),
    2 * (client.options.slotsRefreshTimeout ?? REDIS_CONNECT_TIMEOUT_MS),
    'redis cluster',
  );
  await Promise.allSettled(
    client.nodes('master').map((node) => (node.status === 'wait' ? node.connect() : undefined)),
  );
}

function withDeadline(work: Promise<void>, timeoutMs: number, what: string): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} not ready within ${timeoutMs} ms`)), timeoutMs);
  });
  work.catch(() => undefined);
  return Promise.race([work, deadline]).finally(() => clearTimeout(timer));
}

/** The client's next `ready`, one listener however many calls wait for it (a reconnect under load). */
const readiness = new WeakMap<RedisConnection, Promise<void>>();

function nextReady(client: RedisConnection): Promise<void> {
  let ready = readiness.get(client);
  if (ready === undefined) {
    ready = new Promise<void>((resolve) => client.once('ready', () => resolve())).finally(() =>
      readiness.delete(client),
    );
    readiness.set(client, ready);
  }
  return ready;
}

function waitForReady(client: RedisConnection, timeoutMs: number): Promise<void> {
  return withDeadline(nextReady(client), timeoutMs, 'redis');
}

/** The node connections that hold the data: the client itself, or every primary of a cluster. */
export async function primariesOf(client: RedisConnection): Promise<Redis[]> {
  if (!isCluster(client)) return [client];
  // The slot map the client holds may predate a failover: ask the cluster before choosing nodes.
  await new Promise<void>((resolve) => client.refreshSlotsCache(() => resolve()));
  return client.nodes('master');
}

/**
 * Runs `work` on every primary, in parallel. A primary that fails is tried once more after the
 * cluster's slot map is read again (a replica promoted meanwhile takes its place); one that still
 * fails is left out, and the others' results are returned. Throws only when every primary failed.
 */
export async function onEveryPrimary<T>(
  client: RedisConnection,
  work: (primary: Redis) => Promise<T>,
): Promise<T[]> {
  const results = new Map<string, T>();
  let failure: unknown;
  for (let attempt = 0; attempt < 2; attempt++) {
    const primaries = (await primariesOf(client)).filter((node) => !results.has(nodeKey(node)));
    const settled = await Promise.allSettled(primaries.map((node) => work(node)));
    settled.forEach((outcome, i) => {
      if (outcome.status === 'fulfilled') results.set(nodeKey(primaries[i] as Redis), outcome.value);
      else failure = outcome.reason;
    });
    if (settled.every((outcome) => outcome.status === 'fulfilled')) break;
  }
  if (results.size === 0) throw failure ?? new Error('redis: no primary known');
  return [...results.values()];
}

function nodeKey(node: Redis): string {
  return `${node.options.host}:${node.options.port}`;
}
