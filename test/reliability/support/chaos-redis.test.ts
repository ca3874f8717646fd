import { setTimeout as sleep } from 'node:timers/promises';
import Redis from 'ioredis';
import { describe, expect, it } from 'vitest';
import { startChaosRedis } from './chaos-redis';

function connect(port: number, host = '127.0.0.1'): Redis {
  const connection = new Redis({ host, port, maxRetriesPerRequest: 0 });
  connection.on('error', () => undefined);
  return connection;
}

async function processId(port: number, host?: string): Promise<number> {
  const connection = connect(port, host);
  try {
    return Number(/^process_id:(\d+)/m.exec(await connection.info('server'))?.[1]);
  } finally {
    connection.disconnect();
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

describe('the primary-replica failover', () => {
  // The topology lists its replicas in the order it started them (process ids grow): once the first
  // started is behind, once the last, so a failover that promotes a replica by its place fails one.
  it.each(['first', 'last'] as const)(
    'promotes the replica that has every write WAIT confirmed (the one started %s behind)',
    async (behind) => {
      const redis = await startChaosRedis('primary-replica', { replicas: 2 });
      const { host, port } = redis.settings as { host: string; port: number };
      const primary = connect(port, host);
      let stopped: number | undefined;
      try {
        const replicaPorts = [
          ...(await primary.info('replication')).matchAll(/^slave\d+:ip=[^,]+,port=(\d+)/gm),
        ].map((match) => Number(match[1]));
        const replicaPids = (await Promise.all(replicaPorts.map((replica) => processId(replica)))).sort(
          (a, b) => a - b,
        );
        expect(replicaPids).toHaveLength(2);
        const primaryPid = await processId(port, host);
        stopped = behind === 'first' ? replicaPids[0] : replicaPids[1];
        if (stopped === undefined) throw new Error('no replica to stop');
        // Stopped, its link cut: the other replica reconnects and confirms the write, this one never sees it.
        process.kill(stopped, 'SIGSTOP');
        await primary.call('CLIENT', 'KILL', 'TYPE', 'replica');
        await primary.set('confirmed', 'yes');
        expect(await primary.call('WAIT', 1, 10_000)).toBe(1);
        const failover = redis.failover(() => 0);
        while (alive(primaryPid)) await sleep(20);
        process.kill(stopped, 'SIGCONT');
        stopped = undefined;
        await failover;
        const promoted = connect(port, host);
        try {
          expect(await promoted.get('confirmed')).toBe('yes');
        } finally {
          promoted.disconnect();
        }
      } finally {
        if (stopped !== undefined) process.kill(stopped, 'SIGCONT');
        primary.disconnect();
        await redis.stop();
      }
    },
    60_000,
  );
});
