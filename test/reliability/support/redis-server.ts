/**
 * A real redis-server for the reliability tests that can be killed and started again on the same port
 * (the local stack's Redis cannot: it picks a new free port on every start), plus the inspection the
 * tests need: commands executed and a dump of every key and value.
 */
import Redis from 'ioredis';
import { LOOPBACK } from '../../../local/http-server';
import { findOnPath, freePort, spawnRedisServer, terminateProcess } from '../../../local/redis';

export interface TestRedisServer {
  readonly host: string;
  readonly port: number;
  /** An inspection client (not the product's): lazy, offline queue off, closed by stop(). */
  readonly inspector: Redis;
  /** Commands the server executed, INFO excluded (Lua's redis.call counted too). */
  commandsExecuted(): Promise<number>;
  /** SIGKILL: the process dies at once, every connection drops, the data is gone. */
  kill(): Promise<void>;
  /** Starts a fresh server on the same port. */
  restart(): Promise<void>;
  stop(): Promise<void>;
}

function commandCallsOf(info: string): number {
  let total = 0;
  for (const line of info.split('\n')) {
    const match = /^cmdstat_([^:]+):.*\bcalls=(\d+)/.exec(line.trim());
    if (match && match[1] !== 'info') total += Number(match[2]);
  }
  return total;
}

export async function startTestRedis(): Promise<TestRedisServer> {
  const binary = findOnPath('redis-server') ?? '/usr/bin/redis-server';
  const port = await freePort();
  let child = await spawnRedisServer(binary, port);
  const killOnExit = () => child.kill('SIGKILL');
  process.on('exit', killOnExit);
  const inspector = new Redis({
    host: LOOPBACK,
    port,
    lazyConnect: true,
    connectTimeout: 1000,
    commandTimeout: 2000,
    maxRetriesPerRequest: 1,
    retryStrategy: () => 50,
  });
  inspector.on('error', () => undefined);
  return {
    host: LOOPBACK,
    port,
    inspector,
    async commandsExecuted() {
      return commandCallsOf(await inspector.info('commandstats'));
    },
    kill: () => terminateProcess(child, 'SIGKILL'),
    async restart() {
      await terminateProcess(child, 'SIGKILL');
      child = await spawnRedisServer(binary, port);
    },
    async stop() {
      process.removeListener('exit', killOnExit);
      inspector.disconnect();
      await terminateProcess(child, 'SIGTERM');
    },
  };
}

export interface StoredEntry {
  readonly key: string;
  readonly type: string;
  /** Every string the value holds (hash fields and values, list items, the string itself). */
  readonly texts: readonly string[];
}

/** Every key with its value, read with SCAN and the type's own read command. */
export async function dumpKeys(redis: Redis): Promise<StoredEntry[]> {
  const entries: StoredEntry[] = [];
  let cursor = '0';
  let rounds = 0;
  do {
    const [next, keys] = await redis.scan(cursor, 'COUNT', 1000);
    cursor = next;
    for (const key of keys) {
      const type = await redis.type(key);
      let texts: string[];
      if (type === 'string') texts = [(await redis.get(key)) ?? ''];
      else if (type === 'hash') texts = Object.entries(await redis.hgetall(key)).flat();
      else if (type === 'list') texts = await redis.lrange(key, 0, -1);
      else if (type === 'set') texts = await redis.smembers(key);
      else if (type === 'zset') texts = await redis.zrange(key, 0, -1);
      else texts = [];
      entries.push({ key, type, texts });
    }
    rounds++;
  } while (cursor !== '0' && rounds < 10_000);
  return entries;
}
