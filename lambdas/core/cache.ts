/**
 * The Redis cache of one service: typed calls of the Lua scripts (cache-scripts.ts) over the key
 * layout of keys.ts. ioredis sends each script once per connection (EVAL) and then calls it by SHA
 * (EVALSHA), falling back to EVAL when the server answers NOSCRIPT.
 */
import type Redis from 'ioredis';
import {
  ACKNOWLEDGE_SCRIPT,
  ADMIT_SCRIPT,
  CHECK_SCRIPT,
  DRAIN_SCRIPT,
  RELEASE_SCRIPT,
  SCRIPTS,
  type ScriptDefinition,
  STORE_SCRIPT,
} from './cache-scripts';
import { credentialIdOfSinceKey, credentialKeys, SINCE_KEY_PATTERN } from './keys';
import type { AuthorizationStatus, Usage } from './platform/types';
import {
  commandTimeoutOf,
  ensureConnected,
  onEveryPrimary,
  REDIS_CONNECT_TIMEOUT_MS,
  type RedisConnection,
} from './redis-client';
import { type CredentialState, decodeState, encodeState, snapshotFields } from './snapshot';

/** How long a credential's snapshot and endpoint entries live without a new platform answer. */
export const ENTRY_TTL_MS = 24 * 60 * 60 * 1000;

export type CheckResult =
  | { readonly kind: 'miss' }
  | { readonly kind: 'cached'; readonly state: Exclude<CredentialState, { kind: 'active' }> }
  | { readonly kind: 'limited'; readonly plan: string }
  | { readonly kind: 'allow'; readonly plan: string; readonly publish: boolean; readonly overLimit: boolean };

export interface CheckRequest {
  readonly credentialId: string;
  /** Undefined: decide from the credential's snapshot, whatever the endpoint (resilient answer). */
  readonly endpoint: string | undefined;
  readonly usage: Usage;
  readonly now: number;
  readonly windowMs: number;
  readonly softLimits: boolean;
}

export interface StoredAnswer {
  readonly credentialId: string;
  readonly state: CredentialState;
  readonly sealedCredential: string;
  readonly status?: AuthorizationStatus;
  readonly now: number;
  /** The endpoint whose first call brought the answer, with the usage it maps to. */
  readonly endpoint?: { readonly name: string; readonly usage: Usage };
}

export type DrainResult =
  | { readonly kind: 'busy' }
  | { readonly kind: 'empty' }
  | { readonly kind: 'unreadable' }
  | {
      readonly kind: 'ready';
      readonly sealedCredential: string;
      readonly usage: Usage;
      /** The usage was left in flight by an earlier attempt: pending usage may wait behind it. */
      readonly resent: boolean;
    };

export interface AccessCacheOptions {
  readonly negativeTtlMs: number;
  /** Lease of a reporter on a credential's in-flight usage; longer than one flush can take. */
  readonly leaseMs: number;
  readonly entryTtlMs?: number;
  /** Real time (epoch ms) for the hot path's deadline; default Date.now. Not the injectable business clock. */
  readonly wallClock?: () => number;
  /**
   * How long after sending it the hot-path script may still run; default the client's command timeout
   * (past it the caller has given up) plus DEADLINE_SKEW_MS. Undefined with a client without one.
   */
  readonly hotPathDeadlineMs?: number;
  /** How long a call waits for a reconnecting client; default the connect timeout. */
  readonly readyWaitMs?: number;
}

/** Allowance for the Redis server's clock running ahead of ours. */
export const DEADLINE_SKEW_MS = 100;

type ScriptCall = (...keysAndArgs: (string | number)[]) => Promise<unknown>;

function usagePairs(usage: Usage): string[] {
  return Object.entries(usage).flatMap(([metric, value]) => [metric, String(value)]);
}

function pairsToUsage(flat: readonly string[]): Usage {
  const usage: Record<string, number> = {};
  for (let i = 0; i + 1 < flat.length; i += 2) usage[flat[i]] = Number(flat[i + 1]);
  return usage;
}

function strings(reply: unknown): string[] {
  if (!Array.isArray(reply)) throw new Error(`unexpected script reply: ${typeof reply}`);
  return reply.map((item) => String(item));
}

export class AccessCache {
  private readonly entryTtlMs: number;
  private readonly wallClock: () => number;
  private readonly hotPathDeadlineMs: number | undefined;

  constructor(
    private readonly redis: RedisConnection,
    private readonly options: AccessCacheOptions,
  ) {
    this.entryTtlMs = options.entryTtlMs ?? ENTRY_TTL_MS;
    this.wallClock = options.wallClock ?? Date.now;
    const commandTimeout = commandTimeoutOf(redis);
    this.hotPathDeadlineMs =
      options.hotPathDeadlineMs ??
      (commandTimeout === undefined ? undefined : commandTimeout + DEADLINE_SKEW_MS);
    const commands = redis as unknown as Record<string, unknown>;
    for (const script of SCRIPTS) {
      if (typeof commands[script.name] !== 'function') {
        redis.defineCommand(script.name, { numberOfKeys: script.numberOfKeys, lua: script.lua });
      }
    }
  }

  /** The hot path: one script, one round trip. */
  async check(request: CheckRequest): Promise<CheckResult> {
    const keys = credentialKeys(request.credentialId);
    const reply = strings(
      await this.run(
        CHECK_SCRIPT,
        [keys.negative, keys.app, keys.endpoints, keys.pending, keys.inFlight, keys.since, keys.window],
        [
          request.now,
          request.endpoint ?? '',
          request.windowMs,
          request.softLimits ? '1' : '0',
          this.hotPathDeadlineMs === undefined ? 0 : this.wallClock() + this.hotPathDeadlineMs,
          ...usagePairs(request.usage),
        ],
      ),
    );
    switch (reply[0]) {
      case 'expired':
        throw new Error('cache answer came after its deadline (is the Redis clock ahead of ours?)');
      case 'miss':
        return { kind: 'miss' };
      case 'cached': {
        const state = decodeState(reply[1]);
        if (state.kind === 'active') return { kind: 'miss' };
        return { kind: 'cached', state };
      }
      case 'deny':
        return { kind: 'limited', plan: reply[2] };
      case 'allow':
        return { kind: 'allow', plan: reply[1], publish: reply[2] === '1', overLimit: reply[3] === '1' };
      default:
        throw new Error(`unexpected check reply: ${reply[0]}`);
    }
  }

  async store(answer: StoredAnswer): Promise<void> {
    const keys = credentialKeys(answer.credentialId);
    await this.run(
      STORE_SCRIPT,
      [keys.negative, keys.app, keys.endpoints, keys.since],
      [
        encodeState(answer.state),
        this.options.negativeTtlMs,
        this.entryTtlMs,
        answer.sealedCredential,
        answer.status?.plan ?? '',
        answer.now,
        answer.endpoint?.name ?? '',
        answer.endpoint ? JSON.stringify(answer.endpoint.usage) : '',
        ...(answer.status ? snapshotFields(answer.status).flat() : []),
      ],
    );
  }

  /** Records usage without any check; returns whether the caller must publish the report message. */
  async admit(credentialId: string, sealedCredential: string, usage: Usage, now: number, windowMs: number) {
    const keys = credentialKeys(credentialId);
    const reply = await this.run(
      ADMIT_SCRIPT,
      [keys.app, keys.pending, keys.since, keys.window],
      [now, windowMs, sealedCredential, this.entryTtlMs, ...usagePairs(usage)],
    );
    return String(reply) === '1';
  }

  async drain(credentialId: string, leaseToken: string): Promise<DrainResult> {
    const keys = credentialKeys(credentialId);
    const reply = strings(
      await this.run(
        DRAIN_SCRIPT,
        [keys.app, keys.pending, keys.inFlight, keys.since, keys.lease],
        [leaseToken, this.options.leaseMs],
      ),
    );
    const [kind, sealedCredential, resent, ...usage] = reply;
    if (kind === 'ready')
      return { kind, sealedCredential, usage: pairsToUsage(usage), resent: resent === '1' };
    if (kind === 'busy' || kind === 'empty' || kind === 'unreadable') return { kind };
    throw new Error(`unexpected drain reply: ${kind}`);
  }

  async acknowledge(credentialId: string, leaseToken: string, now: number): Promise<void> {
    const keys = credentialKeys(credentialId);
    await this.run(
      ACKNOWLEDGE_SCRIPT,
      [keys.app, keys.pending, keys.inFlight, keys.since, keys.lease],
      [now, leaseToken, this.entryTtlMs],
    );
  }

  async release(credentialId: string, leaseToken: string): Promise<void> {
    await this.run(RELEASE_SCRIPT, [credentialKeys(credentialId).lease], [leaseToken]);
  }

  /**
   * Credentials with usage unreported since `before` or earlier, at most `limit`. Found by SCAN over
   * the `since` keys of every primary: a global index would be another slot, which the hot-path script
   * must not touch on a sharded Redis. A primary that cannot be scanned (a failover under way) is left
   * to the next sweep; the others' credentials are still returned, taken in turn from each primary.
   */
  async unreportedSince(before: number, limit: number): Promise<string[]> {
    await ensureConnected(this.redis, this.options.readyWaitMs ?? REDIS_CONNECT_TIMEOUT_MS);
    const perPrimary = await onEveryPrimary(this.redis, (primary) => unreportedOn(primary, before, limit));
    const found = new Set<string>();
    for (let i = 0; found.size < limit && perPrimary.some((ids) => i < ids.length); i++) {
      for (const ids of perPrimary) {
        const id = ids[i];
        if (id !== undefined && found.size < limit) found.add(id);
      }
    }
    return [...found];
  }

  private async run(script: ScriptDefinition, keys: string[], args: (string | number)[]): Promise<unknown> {
    await ensureConnected(this.redis, this.options.readyWaitMs ?? REDIS_CONNECT_TIMEOUT_MS);
    const call = (this.redis as unknown as Record<string, ScriptCall>)[script.name];
    return call.call(this.redis, ...keys, ...args);
  }
}

/** One node's credentials with usage unreported since `before`, at most `limit`. */
async function unreportedOn(node: Redis, before: number, limit: number): Promise<string[]> {
  const found: string[] = [];
  const seen = new Set<string>();
  let cursor = '0';
  do {
    const [next, keys] = await node.scan(cursor, 'MATCH', SINCE_KEY_PATTERN, 'COUNT', 1000);
    cursor = next;
    const fresh = keys.filter((key) => !seen.has(key));
    for (const key of fresh) seen.add(key);
    // One GET per key in a pipeline: a multi-key MGET would cross slots on a sharded Redis.
    const pipeline = node.pipeline();
    for (const key of fresh) pipeline.get(key);
    const values = fresh.length > 0 ? ((await pipeline.exec()) ?? []) : [];
    fresh.forEach((key, i) => {
      const id = credentialIdOfSinceKey(key);
      const [error, value] = values[i] ?? [null, null];
      if (!id || error || typeof value !== 'string' || found.length >= limit) return;
      if (Number(value) <= before) found.push(id);
    });
  } while (cursor !== '0' && found.length < limit);
  return found;
}
