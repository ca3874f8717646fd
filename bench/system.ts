/**
 * What the bench wires and measures (measure.ts): the shared servers, the Redis under test, and one system
 * (a design in a set-up) making a traffic's calls. The authorizer's systems are made in
 * authorizer-system.ts, the application's (with the plugin, with the original plugin design, or
 * unprotected) in app-system.ts.
 */
import type Redis from 'ioredis';
import type { RedisSettings } from '../core/settings/config';
import type { RunningPlatform } from '../local/platform';
import type { LocalRedis } from '../local/redis';
import type { SnsEndpoint } from '../local/sns-endpoint';
import type { Traffic } from './fixture';
import type { Design } from './report';
import type { TokenIssuer } from './token-issuer';
import type { Setup } from './workloads';

/** A traffic's calls as one system makes them: `send` is timed, `outcome` classifies after the run. */
export interface Caller {
  send(index: number): Promise<unknown>;
  outcome(settled: PromiseSettledResult<unknown>, index: number): string;
}

/** One design in one set-up wired to the shared servers, with its own clients, as its Lambdas would have. */
export interface System {
  readonly design: Design;
  readonly setup: Setup;
  /** The platform it calls: its calls and the usage it recorded are read there. */
  readonly platform: RunningPlatform;
  /** Whether its allowed calls are metered (reported to the platform): not for an unprotected app. */
  readonly metered: boolean;
  /** The calls of `load` as this system receives them (tokens are had here, before any timing). */
  caller(load: Traffic): Promise<Caller>;
  /** Commands the deciding Redis client (the authorizer's, the plugin's) has sent so far. */
  readonly redisCommandsSent: () => number;
  /** Delivers every held report message to the reporter (and, for the project, runs the sweep). */
  flush(): Promise<void>;
  close(): Promise<void>;
}

/** A primary of the Redis under test, with an admin connection of its own (not counted anywhere). */
export interface Primary {
  readonly address: string;
  readonly admin: Redis;
}

/** The Redis a workload runs on: one redis-server, or a cluster (one entry per primary). */
export interface RedisUnderTest {
  readonly name: 'single' | 'cluster';
  readonly server: LocalRedis;
  readonly settings: RedisSettings;
  readonly primaries: readonly Primary[];
}

export interface Servers {
  readonly redis: RedisUnderTest;
  /** The authorizer workloads' platform: it answers at once. */
  readonly platform: RunningPlatform;
  /**
   * The application workloads' platform: the same applications, each answer after the run's platform
   * latency (a same-Region round trip), which the original plugin design pays on every call.
   */
  readonly distantPlatform: RunningPlatform;
  readonly sns: SnsEndpoint;
  readonly issuer: TokenIssuer;
}

export interface SystemOptions {
  readonly snsLatencyMs: number;
  readonly reportWindowSeconds: number;
}
