/**
 * What the script-time tools (`npm run bench:hit-script`, `npm run bench:first-call-scripts`) share: a
 * redis-server of their own, pinned apart from the tool when taskset allows (placement.ts), and a
 * script's time per call as `INFO commandstats` counts it.
 */
import os from 'node:os';
import Redis from 'ioredis';
import { findOnPath, startRedisServer } from '../local/redis';
import { parseCommandStats } from './commandstats';
import type { PairedFigure } from './hit-script-steps';
import { type Placement, pinBench, pinProcess } from './placement';

export interface ScriptBench {
  readonly redis: Redis;
  /** redis-server's version, and where it and the tool run. */
  readonly description: string;
  /** Stops the server and prints the load average at the start and now. */
  stop(): Promise<void>;
}

export async function startScriptBench(): Promise<ScriptBench> {
  const loadAtStart = os.loadavg()[0] as number;
  const placement: Placement | undefined = pinBench(console.log);
  const binary = findOnPath('redis-server');
  if (binary === undefined) throw new Error('redis-server is not installed');
  const server = await startRedisServer(binary);
  const redis = new Redis({ host: server.host, port: server.port, commandTimeout: 10_000 });
  const info = await redis.info('server');
  if (placement !== undefined) pinProcess(Number(/process_id:(\d+)/.exec(info)?.[1]), placement.redisCpus);
  const where = placement
    ? `redis-server on CPU ${placement.redisCpus}, this process on CPU ${placement.benchCpus} (taskset)`
    : 'unpinned';
  return {
    redis,
    description: `Node ${process.version}, redis-server ${/redis_version:(\S+)/.exec(info)?.[1] ?? 'unknown'}; ${where}`,
    async stop() {
      redis.disconnect();
      await server.stop();
      console.log(
        `load average (1 min): ${loadAtStart.toFixed(2)} at the start, ${os.loadavg()[0]?.toFixed(2)} at the end`,
      );
    },
  };
}

/**
 * The script `sha` called `calls` times, one call at a time, with the KEYS and ARGV `argumentsOf(call)`
 * gives (`keys` of them keys): the EVALSHA time per call (µs) of `INFO commandstats`, reset first.
 */
export async function evalshaMicros(
  redis: Redis,
  sha: string,
  calls: number,
  keys: number,
  argumentsOf: (call: number) => readonly string[],
): Promise<number> {
  await redis.config('RESETSTAT');
  for (let call = 0; call < calls; call++) await redis.evalsha(sha, keys, ...argumentsOf(call));
  const stat = parseCommandStats(await redis.info('commandstats')).get('evalsha');
  if (stat === undefined || stat.calls === 0) throw new Error('INFO commandstats has no evalsha');
  return stat.usec / stat.calls;
}

/** A figure's line: its median and its paired difference with `reference`, the name padded to `width`. */
export function figureLine(figure: PairedFigure, reference: string, width: number): string {
  return (
    `${figure.name.padEnd(width)} ${figure.medianMicros.toFixed(2).padStart(7)} µs median, ` +
    `${figure.medianDifferenceMicros.toFixed(2).padStart(7)} µs against ${reference} (paired)`
  );
}
