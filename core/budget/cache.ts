/**
 * The Redis cache of one service: typed calls of the Lua scripts (scripts/) over the key
 * layout of keys.ts. ioredis sends each script once per connection (EVAL) and then calls it by SHA
 * (EVALSHA), falling back to EVAL when the server answers NOSCRIPT.
 */
import type Redis from 'ioredis';
import type { Usage } from '../platform/types';
import type {
  AnswerToStore,
  BatchMark,
  CheckRequest,
  CheckResult,
  DrainOptions,
  DrainResult,
  FirstCallHandover,
  KeyFact,
  RecordedUsage,
  RejectedUsage,
  StoredAnswer,
} from './cache-types';
import { CHECK_NEEDS_AT, checkReplyOf, checkResultOf } from './check-reply';
import { CommandNotSentError } from './command-fate';
import { type ServiceKeys, serviceKeys } from './keys';
import { NeedHints } from './need-hints';
import { minuteStart, periodStarts } from './periods';
import {
  commandTimeoutOf,
  ensureConnected,
  mustConnectFirst,
  onEveryPrimary,
  primariesOf,
  REDIS_CONNECT_TIMEOUT_MS,
  type RedisConnection,
} from './redis-client';
import { defineScripts, LazyScripts, replyItems } from './script-commands';
import { SCRIPTS } from './scripts';
import { ADMIT_SCRIPT } from './scripts/admit-script';
import { CHECK_SCRIPT } from './scripts/check-script';
import type { ScriptDefinition } from './scripts/lua';
import { RELEASE_SCRIPT } from './scripts/release-script';
import { STORE_SCRIPT } from './scripts/store-script';
import { encodeState, isKeyRefusal, snapshotFields, stateOf } from './snapshot';
import { type Throttles, type ThrottleTable, throttleTable } from './throttles';

/** How long a budget's snapshot and key facts live without a new platform answer. */
export const ENTRY_TTL_MS = 24 * 60 * 60 * 1000;

export interface AccessCacheOptions {
  /** The service whose budgets the cache holds: its keys (keys.ts) are the only ones it reads or finds. */
  readonly serviceId: string;
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
  /** Per-plan throttles the hot path enforces; default none. */
  readonly throttles?: Throttles;
  /**
   * Tests only: the throttles' clock (epoch ms). Without it, as in production, the script reads Redis's
   * TIME, the one clock every instance shares.
   */
  readonly throttleClock?: () => number;
}

/** Allowance for the Redis server's clock running ahead of ours. */
export const DEADLINE_SKEW_MS = 100;

type ScriptCall = (...keysAndArgs: (string | number)[]) => Promise<unknown>;

function usagePairs(usage: Usage): string[] {
  const pairs: string[] = [];
  for (const metric of Object.keys(usage)) pairs.push(metric, String(usage[metric]));
  return pairs;
}

function pairsToUsage(flat: readonly string[]): Usage {
  const usage: Record<string, number> = {};
  for (let i = 0; i + 1 < flat.length; i += 2) usage[flat[i]] = Number(flat[i + 1]);
  return usage;
}

/** The bucket of usage admitted unchecked: the minute, as nothing tells which periods the plan limits. */
export function admittedBucketOf(now: number): number {
  return minuteStart(now);
}

function encodeKeyFact(fact: KeyFact, until: number): string {
  return fact.valid ? `ok ${fact.sealedCredential}` : `bad ${Math.trunc(until)} ${fact.code}`;
}

/** A valid key's sealed credential from its fact, or undefined for any other value. */
function validKeyCredential(value: string): string | undefined {
  return value.startsWith('ok ') ? value.slice(3) : undefined;
}

/** KEYS: neg, keys; ARGV: key ids. One slot (the budget's hash tag): no call sees half of it. */
const FORGET_REFUSALS_SCRIPT = `redis.call('DEL', KEYS[1])
for _, keyId in ipairs(ARGV) do
  local fact = redis.call('HGET', KEYS[2], keyId)
  if fact and string.sub(fact, 1, 4) == 'bad ' then redis.call('HDEL', KEYS[2], keyId) end
end
return 0`;

export class AccessCache {
  private readonly entryTtlMs: number;
  private readonly wallClock: () => number;
  private readonly hotPathDeadlineMs: number | undefined;
  private readonly throttles: ThrottleTable;
  private readonly needHints: NeedHints;
  private readonly keys: ServiceKeys;
  private readonly reportBatchScripts = new LazyScripts(
    () => import('./scripts/report-batch-scripts'),
    (module) => module.REPORT_BATCH_SCRIPTS,
  );
  private readonly giveBackScript = new LazyScripts(
    () => import('./scripts/give-back-script'),
    (module) => [module.GIVE_BACK_SCRIPT],
  );

  constructor(
    private readonly redis: RedisConnection,
    private readonly options: AccessCacheOptions,
  ) {
    this.keys = serviceKeys(options.serviceId);
    this.entryTtlMs = options.entryTtlMs ?? ENTRY_TTL_MS;
    this.wallClock = options.wallClock ?? Date.now;
    this.throttles = throttleTable(options.throttles ?? {});
    this.needHints = new NeedHints(this.throttles);
    const commandTimeout = commandTimeoutOf(redis);
    this.hotPathDeadlineMs =
      options.hotPathDeadlineMs ??
      (commandTimeout === undefined ? undefined : commandTimeout + DEADLINE_SKEW_MS);
    defineScripts(redis, SCRIPTS);
  }

  /** The hot path: one script, one round trip. */
  async check(request: CheckRequest): Promise<CheckResult> {
    const keys = this.keys.budget(request.credentialId);
    const hintedPlan = this.needHints.plan;
    const reply = checkReplyOf(
      await this.run(
        CHECK_SCRIPT,
        [
          keys.negative,
          keys.app,
          keys.keys,
          keys.pending,
          keys.inFlight,
          keys.since,
          keys.refusals,
          keys.firstCall,
          keys.seen,
        ],
        [
          request.now,
          request.keyId,
          request.windowMs,
          request.softLimits ? '1' : '0',
          this.hotPathDeadlineMs === undefined ? 0 : this.wallClock() + this.hotPathDeadlineMs,
          ...periodStarts(request.now),
          this.throttles.text,
          this.throttleClockArg(),
          request.firstCallLock?.token ?? '',
          request.firstCallLock?.ttlMs ?? 0,
          ...this.needHints.argsFor(request.usage),
          ...usagePairs(request.usage),
        ],
      ),
      hintedPlan,
    );
    if (reply[0] === 'allow') this.needHints.learn(reply[1] as string, reply.slice(CHECK_NEEDS_AT));
    return checkResultOf(reply, request.now, this.throttles);
  }

  /** The throttle's test clock in µs, as the scripts take it; '' (Redis's TIME) unless a test set one. */
  private throttleClockArg(): string {
    const clock = this.options.throttleClock;
    return clock === undefined ? '' : String(Math.trunc(clock() * 1000));
  }

  async store(answer: StoredAnswer): Promise<void> {
    const keys = this.keys.budget(answer.credentialId);
    const { budget, key, admittedUsage } = answer;
    const throttled = admittedUsage !== undefined && this.throttles.text !== '';
    const takenUsage = throttled ? usagePairs(admittedUsage) : [];
    await this.run(
      STORE_SCRIPT,
      [
        keys.negative,
        keys.app,
        keys.keys,
        keys.since,
        keys.firstCall,
        keys.seen,
        keys.pending,
        keys.inFlight,
      ],
      [
        budget ? encodeState(budget.state) : '',
        this.options.negativeTtlMs,
        this.entryTtlMs,
        budget?.sealedCredential ?? '',
        budget?.status?.plan ?? '',
        answer.now,
        key?.id ?? '',
        key ? encodeKeyFact(key.fact, answer.now + this.options.negativeTtlMs) : '',
        answer.firstCallToken ?? '',
        throttled ? this.throttles.text : '',
        this.throttleClockArg(),
        takenUsage.length / 2,
        ...takenUsage,
        ...(budget?.status ? snapshotFields(budget.status).flat() : []),
      ],
    );
  }

  /**
   * Stores what a platform answer says: of the presented key (valid, or refused for a while), and of the
   * budget (its state and, unless invalid, its snapshot). A refused app key says nothing of the budget:
   * the platform checks the key first and stops there.
   */
  async storeAnswer(stored: AnswerToStore): Promise<void> {
    const { credentialId, keyId, sealedCredential, answer, now, firstCallToken, admittedUsage } = stored;
    const held: FirstCallHandover = {
      ...(firstCallToken !== undefined && { firstCallToken }),
      ...(admittedUsage !== undefined && { admittedUsage }),
    };
    if (isKeyRefusal(answer)) {
      if (keyId === '' && firstCallToken === undefined) return;
      await this.store({
        credentialId,
        now,
        ...held,
        ...(keyId !== '' && { key: { id: keyId, fact: { valid: false, code: 'application_key_invalid' } } }),
      });
      return;
    }
    const state = stateOf(answer);
    await this.store({
      credentialId,
      now,
      ...held,
      budget: {
        state,
        sealedCredential,
        ...(answer.kind !== 'invalid_credential' && { status: answer }),
      },
      ...(keyId !== '' &&
        state.kind !== 'invalid' && { key: { id: keyId, fact: { valid: true, sealedCredential } } }),
    });
  }

  /** The sealed credentials of the budget's keys the platform last said were valid. */
  async validKeyCredentials(credentialId: string): Promise<string[]> {
    await ensureConnected(this.redis, this.options.readyWaitMs ?? REDIS_CONNECT_TIMEOUT_MS);
    const facts = await this.redis.hvals(this.keys.budget(credentialId).keys);
    return facts.map(validKeyCredential).filter((sealed): sealed is string => sealed !== undefined);
  }

  /** Whether the cache holds an answer about the budget (so a change at the platform has something to reach). */
  async hasBudget(credentialId: string): Promise<boolean> {
    await ensureConnected(this.redis, this.options.readyWaitMs ?? REDIS_CONNECT_TIMEOUT_MS);
    return (await this.redis.exists(this.keys.budget(credentialId).app)) === 1;
  }

  /**
   * Forgets what the platform said of every key of the budget but those kept (key ids, keyIdOf): a key
   * deleted at the platform is asked about again on its next call, and refused then.
   */
  async forgetKeysExcept(credentialId: string, keptKeyIds: readonly string[]): Promise<number> {
    await ensureConnected(this.redis, this.options.readyWaitMs ?? REDIS_CONNECT_TIMEOUT_MS);
    const key = this.keys.budget(credentialId).keys;
    const kept = new Set(keptKeyIds);
    const gone = (await this.redis.hkeys(key)).filter((keyId) => !kept.has(keyId));
    return gone.length === 0 ? 0 : this.redis.hdel(key, ...gone);
  }

  /**
   * Forgets the refusals the cache keeps of credentials the platform now says exist (a webhook's new key):
   * the budget's negative entry, and the `bad` facts of the keys given (key ids, keyIdOf). Their next
   * call asks the platform instead of being refused for the rest of negativeCacheTtlSeconds.
   */
  async forgetRefusals(credentialId: string, keyIds: readonly string[]): Promise<void> {
    await ensureConnected(this.redis, this.options.readyWaitMs ?? REDIS_CONNECT_TIMEOUT_MS);
    const keys = this.keys.budget(credentialId);
    await this.redis.eval(FORGET_REFUSALS_SCRIPT, 2, keys.negative, keys.keys, ...keyIds);
  }

  /** Gives the budget's first-call lock back, when a first call ends without storing an answer. */
  async releaseFirstCall(credentialId: string, token: string): Promise<void> {
    await this.run(RELEASE_SCRIPT, [this.keys.budget(credentialId).firstCall], [token]);
  }

  /** Records usage without any check; returns whether the caller must publish the report message. */
  async admit(credentialId: string, sealedCredential: string, usage: Usage, now: number, windowMs: number) {
    const keys = this.keys.budget(credentialId);
    const reply = await this.run(
      ADMIT_SCRIPT,
      [keys.app, keys.pending, keys.since],
      [now, windowMs, sealedCredential, this.entryTtlMs, admittedBucketOf(now), ...usagePairs(usage)],
    );
    return String(reply) === '1';
  }

  /**
   * Takes back usage a decision recorded, as far as it is still pending (GIVE_BACK_SCRIPT); returns what
   * was taken back. Usage a reporter took meanwhile stays counted: it is on its way to the platform.
   */
  async giveBack(credentialId: string, recorded: RecordedUsage): Promise<Usage> {
    const keys = this.keys.budget(credentialId);
    const { GIVE_BACK_SCRIPT } = await this.giveBackScript.of(this.redis);
    const reply = replyItems(
      await this.run(
        GIVE_BACK_SCRIPT,
        [keys.app, keys.pending, keys.inFlight, keys.since],
        [this.entryTtlMs, recorded.bucket, ...usagePairs(recorded.usage)],
      ),
    );
    return pairsToUsage(reply);
  }

  /**
   * Takes the budget's usage in flight under the lease `leaseToken` (which names a new batch too).
   */
  async drain(credentialId: string, leaseToken: string, options: DrainOptions = {}): Promise<DrainResult> {
    const now = options.now ?? (this.options.wallClock ?? Date.now)();
    const keys = this.keys.budget(credentialId);
    const { DRAIN_SCRIPT, BATCH_MARK_TTL_MS, drainResultOf } = await this.reportBatchScripts.of(this.redis);
    return drainResultOf(
      replyItems(
        await this.run(
          DRAIN_SCRIPT,
          [keys.app, keys.pending, keys.inFlight, keys.since, keys.lease, keys.refusals, keys.batch],
          [
            leaseToken,
            this.options.leaseMs,
            now,
            this.entryTtlMs,
            BATCH_MARK_TTL_MS,
            options.heldLease ?? '',
          ],
        ),
      ),
    );
  }

  /** Marks the batch (MARK_BATCH_SCRIPT); false when it is no longer in flight. */
  async markBatch(credentialId: string, batch: string, mark: BatchMark): Promise<boolean> {
    const { MARK_BATCH_SCRIPT, BATCH_MARK_TTL_MS } = await this.reportBatchScripts.of(this.redis);
    const reply = await this.run(
      MARK_BATCH_SCRIPT,
      [this.keys.budget(credentialId).batch],
      [batch, mark, BATCH_MARK_TTL_MS],
    );
    return String(reply) === '1';
  }

  /**
   * The platform accepted the batch: it leaves Redis if it is still the one in flight, and the lease is
   * given back. Returns false when the batch had left already (acknowledged by its mark elsewhere).
   */
  async acknowledge(credentialId: string, leaseToken: string, batch: string, now: number): Promise<boolean> {
    const keys = this.keys.budget(credentialId);
    const { ACKNOWLEDGE_SCRIPT } = await this.reportBatchScripts.of(this.redis);
    const reply = await this.run(
      ACKNOWLEDGE_SCRIPT,
      [keys.app, keys.pending, keys.inFlight, keys.since, keys.lease, keys.batch],
      [now, leaseToken, this.entryTtlMs, batch],
    );
    return String(reply) === 'ok';
  }

  async release(credentialId: string, leaseToken: string): Promise<void> {
    await this.run(RELEASE_SCRIPT, [this.keys.budget(credentialId).lease], [leaseToken]);
  }

  /** Keeps usage the platform refuses to take (a metric it does not have), for a person to look at. */
  async keepRejected(credentialId: string, usage: Usage): Promise<void> {
    await ensureConnected(this.redis, this.options.readyWaitMs ?? REDIS_CONNECT_TIMEOUT_MS);
    const key = this.keys.budget(credentialId).rejected;
    // Commands of their own, not a pipeline: see docs/redis-cluster.md on cluster pipelines.
    await Promise.all(Object.entries(usage).map(([metric, value]) => this.redis.hincrby(key, metric, value)));
  }

  /**
   * Every budget's usage the platform refused to take, from every primary. Unlike the sweep, this view
   * fails when a primary cannot be read rather than leave that primary's usage out.
   */
  async rejectedUsage(): Promise<RejectedUsage[]> {
    await ensureConnected(this.redis, this.options.readyWaitMs ?? REDIS_CONNECT_TIMEOUT_MS);
    const perPrimary = await Promise.all(
      (await primariesOf(this.redis)).map((primary) => rejectedOn(primary, this.keys)),
    );
    return perPrimary.flat();
  }

  /**
   * Credentials with usage unreported since `before` or earlier, at most `limit`. Found by SCAN over
   * the `since` keys of every primary: a global index would be another slot, which the hot-path script
   * must not touch on a sharded Redis. A primary that cannot be scanned (a failover under way) is left
   * to the next sweep; the others' credentials are still returned, taken in turn from each primary.
   */
  async unreportedSince(before: number, limit: number): Promise<string[]> {
    await ensureConnected(this.redis, this.options.readyWaitMs ?? REDIS_CONNECT_TIMEOUT_MS);
    const perPrimary = await onEveryPrimary(this.redis, (primary) =>
      unreportedOn(primary, this.keys, before, limit),
    );
    const found = new Set<string>();
    for (let i = 0; found.size < limit && perPrimary.some((ids) => i < ids.length); i++) {
      for (const ids of perPrimary) {
        const id = ids[i];
        if (id !== undefined && found.size < limit) found.add(id);
      }
    }
    return [...found];
  }

  /**
   * Sends the script once the client is connected; a connected client's one microtask later, not at once
   * and not after the several turns of awaiting ensureConnected. That one turn lets the scripts of calls
   * that start together (a batch of replies read at once) go out in one socket write, which Redis then
   * reads and answers in one pass: under 32 concurrent callers a hit cost Redis 22.8 to 23.6 µs of CPU
   * that way against 27.6 to 28.9 sent at once, at 13,400 against 11,000 calls a second
   * (docs/performance.md); a serial call's p50 shows no difference.
   */
  private run(script: ScriptDefinition, keys: string[], args: (string | number)[]): Promise<unknown> {
    const send = () =>
      (this.redis as unknown as Record<string, ScriptCall>)[script.name].call(this.redis, ...keys, ...args);
    return mustConnectFirst(this.redis)
      ? ensureConnected(this.redis, this.options.readyWaitMs ?? REDIS_CONNECT_TIMEOUT_MS).then(
          send,
          (error: unknown) => {
            throw new CommandNotSentError(error);
          },
        )
      : Promise.resolve().then(send);
  }
}

/** The keys of one node that match `pattern`, a batch per SCAN reply (a key may come twice). */
async function* scanOn(node: Redis, pattern: string): AsyncGenerator<string[]> {
  let cursor = '0';
  do {
    const [next, keys] = await node.scan(cursor, 'MATCH', pattern, 'COUNT', 1000);
    cursor = next;
    yield keys;
  } while (cursor !== '0');
}

/** One node's credentials of the service with usage unreported since `before`, at most `limit`. */
async function unreportedOn(
  node: Redis,
  keyNames: ServiceKeys,
  before: number,
  limit: number,
): Promise<string[]> {
  const found: string[] = [];
  const seen = new Set<string>();
  for await (const keys of scanOn(node, keyNames.pattern('since'))) {
    const fresh = keys.filter((key) => !seen.has(key));
    for (const key of fresh) seen.add(key);
    // One GET per key in a pipeline: a multi-key MGET would cross slots on a sharded Redis.
    const pipeline = node.pipeline();
    for (const key of fresh) pipeline.get(key);
    const values = fresh.length > 0 ? ((await pipeline.exec()) ?? []) : [];
    fresh.forEach((key, i) => {
      const id = keyNames.credentialIdOfSinceKey(key);
      const [error, value] = values[i] ?? [null, null];
      if (!id || error || typeof value !== 'string' || found.length >= limit) return;
      if (Number(value) <= before) found.push(id);
    });
    if (found.length >= limit) break;
  }
  return found;
}

/** One node's usage of the service the platform refused to take, by budget. */
async function rejectedOn(node: Redis, keyNames: ServiceKeys): Promise<RejectedUsage[]> {
  const found = new Map<string, RejectedUsage>();
  for await (const keys of scanOn(node, keyNames.pattern('rejected'))) {
    for (const key of keys) {
      const credentialId = keyNames.credentialIdOfKey(key);
      if (credentialId === undefined || found.has(credentialId)) continue;
      const usage = pairsToUsage(Object.entries(await node.hgetall(key)).flat());
      if (Object.keys(usage).length > 0) found.set(credentialId, { credentialId, usage });
    }
  }
  return [...found.values()];
}
