/**
 * The Redis cache of one service: typed calls of the Lua scripts (scripts/) over the key
 * layout of keys.ts. ioredis sends each script once per connection (EVAL) and then calls it by SHA
 * (EVALSHA), falling back to EVAL when the server answers NOSCRIPT.
 */
import type Redis from 'ioredis';
import type { AuthorizationStatus, InvalidCredentialCode, Period, Usage } from '../platform/types';
import { CommandNotSentError } from './command-fate';
import { type ServiceKeys, serviceKeys } from './keys';
import { LIMIT_FIELD, NeedHints } from './need-hints';
import { minuteStart, periodWindow } from './periods';
import {
  commandTimeoutOf,
  ensureConnected,
  mustConnectFirst,
  onEveryPrimary,
  primariesOf,
  REDIS_CONNECT_TIMEOUT_MS,
  type RedisConnection,
} from './redis-client';
import { SCRIPTS } from './scripts';
import { ADMIT_SCRIPT } from './scripts/admit-script';
import { CHECK_SCRIPT } from './scripts/check-script';
import type { ScriptDefinition } from './scripts/lua';
import { RELEASE_SCRIPT } from './scripts/release-script';
import { STORE_SCRIPT } from './scripts/store-script';
import {
  type CredentialAnswer,
  type CredentialState,
  decodeState,
  encodeState,
  isKeyRefusal,
  snapshotFields,
  stateOf,
} from './snapshot';
import { type Throttles, type ThrottleTable, throttleTable } from './throttles';
import type { UsageBucket } from './usage-buckets';

export { bucketsOf, totalUsage, type UsageBucket } from './usage-buckets';

/** How long a budget's snapshot and key facts live without a new platform answer. */
export const ENTRY_TTL_MS = 24 * 60 * 60 * 1000;

/** A limit of the plan, as a consumer may be told of it. */
export interface LimitInfo {
  readonly metric: string;
  readonly period: Period;
  readonly max: number;
  /** When the period ends (epoch ms); undefined for eternity. */
  readonly resetAt?: number;
}

/** The most constrained limit of an allowed call, and what it leaves. */
export interface LimitFeedback extends LimitInfo {
  /** Calls like this one still allowed in the period. */
  readonly remaining: number;
}

/** A throttle (throttles.ts) as the hot path applied it. */
export interface ThrottleInfo {
  /** The metric it counts; undefined for a throttle of every call. */
  readonly metric?: string;
  /** Calls per second sustained. */
  readonly rate: number;
  /** Calls at once. */
  readonly burst: number;
}

/** The tightest throttle of an allowed call, and what it leaves. */
export interface ThrottleFeedback extends ThrottleInfo {
  /** Calls like this one still allowed at once. */
  readonly remaining: number;
  /** Until the bucket is rested (the whole burst allowed again). */
  readonly fullInMs: number;
}

/** The throttle that refused a call. */
export interface ThrottleRefusal extends ThrottleInfo {
  /** Until the same call would be admitted. */
  readonly retryInMs: number;
}

export type CheckResult =
  /**
   * No snapshot of the budget: the platform must be asked. `claimed`: the check took the budget's
   * first-call lock for the caller (CheckRequest's firstCallLock), so the caller is the one to ask.
   * `seen`: the platform answered for the key before (its seen mark, keys.ts), so the first-call gate
   * does not count it.
   */
  | { readonly kind: 'miss'; readonly claimed: boolean; readonly seen: boolean }
  /** The budget has a snapshot, the presented key was never checked with the platform; `seen` as above. */
  | { readonly kind: 'key_unknown'; readonly seen: boolean }
  | {
      readonly kind: 'cached';
      readonly state: Exclude<CredentialState, { kind: 'active' }>;
      /** Publish the report message: the reporter refreshes the refused budget. */
      readonly publish: boolean;
    }
  | { readonly kind: 'limited'; readonly plan: string; readonly publish: boolean; readonly limit: LimitInfo }
  /** A throttle of the plan refused the call; nothing was counted and no report is due. */
  | {
      readonly kind: 'throttled';
      readonly plan: string;
      readonly publish: false;
      readonly throttle: ThrottleRefusal;
    }
  | {
      readonly kind: 'allow';
      readonly plan: string;
      readonly publish: boolean;
      readonly overLimit: boolean;
      /** Undefined when no limit applies to the call. */
      readonly limit?: LimitFeedback;
      /** The pending bucket the call's usage went to (see RecordedUsage). */
      readonly bucket: number;
      /** When the platform last confirmed the budget's snapshot (epoch ms; 0 unknown). */
      readonly confirmedAt: number;
      /** Undefined when no throttle applies to the call. */
      readonly throttle?: ThrottleFeedback;
    };

/** Usage a decision added to the budget's pending usage: what `giveBack` can take back. */
export interface RecordedUsage {
  /** Start of the pending bucket it went to. */
  readonly bucket: number;
  readonly usage: Usage;
}

export interface CheckRequest {
  /** The budget (credentialIdOf). */
  readonly credentialId: string;
  /** The presented key (keyIdOf); '' when there is no key to check. */
  readonly keyId: string;
  readonly usage: Usage;
  readonly now: number;
  readonly windowMs: number;
  readonly softLimits: boolean;
  /** The lock to claim if the budget has no snapshot; without it a miss claims nothing. */
  readonly firstCallLock?: FirstCallLock;
}

/**
 * A budget's first-call lock (the `first` key): the one call holding it asks the platform, concurrent
 * first calls wait for its answer instead of asking too.
 */
export interface FirstCallLock {
  readonly token: string;
  readonly ttlMs: number;
}

/** What the platform said of a presented key, kept under the budget. */
export type KeyFact =
  | { readonly valid: true; readonly sealedCredential: string }
  | { readonly valid: false; readonly code: InvalidCredentialCode };

/** What a first call hands over with the answer it stores, so the store script settles it in one step. */
export interface FirstCallHandover {
  /** The first-call lock the caller holds, given back with the store. */
  readonly firstCallToken?: string;
  /**
   * The answered call's usage, when the answer admits it: it takes its throttle cells whatever the
   * buckets hold, as the platform counted it already.
   */
  readonly admittedUsage?: Usage;
}

export interface StoredAnswer extends FirstCallHandover {
  readonly credentialId: string;
  readonly now: number;
  /** What the answer says of the budget; absent when it speaks of the key only. */
  readonly budget?: {
    readonly state: CredentialState;
    readonly sealedCredential: string;
    readonly status?: AuthorizationStatus;
  };
  readonly key?: { readonly id: string; readonly fact: KeyFact };
}

/** A platform answer about a credential, as the authorizer's first call and the reporter's resync store it. */
export interface AnswerToStore extends FirstCallHandover {
  readonly credentialId: string;
  /** The presented key (keyIdOf); '' when there is none to keep a fact about. */
  readonly keyId: string;
  /** The credential as presented, sealed under the budget's id. */
  readonly sealedCredential: string;
  readonly answer: CredentialAnswer;
  readonly now: number;
}

/** A limit a refused call hit, for usage alerts: a refusal counts as reaching 100 %. */
export interface LimitRefusal {
  readonly metric: string;
  readonly period: Period;
  /** When a call was last refused at the limit (the period it happened in). */
  readonly at: number;
}

/**
 * A batch found in flight, left by an earlier attempt: `none` (a new batch), `unsent` (no report
 * carried it), `maybe-sent` (a report may have: sending it again may count it twice).
 */
export type BatchHistory = 'none' | 'unsent' | 'maybe-sent';

/** The state a batch's mark records (scripts/report-batch-scripts.ts). */
export type BatchMark = 'new' | 'posting' | 'sent';

export type DrainResult =
  | { readonly kind: 'busy' }
  | {
      readonly kind: 'empty';
      /** The budget's credential when it has one: the reporter refreshes the budget all the same. */
      readonly sealedCredential?: string;
      readonly refusals: readonly LimitRefusal[];
      /** A batch left in flight, marked sent, was acknowledged by this drain. */
      readonly settledSent: boolean;
    }
  | { readonly kind: 'unreadable'; readonly settledSent: boolean }
  | {
      readonly kind: 'ready';
      readonly sealedCredential: string;
      /** The batch's id: its mark and acknowledgement name it. */
      readonly batch: string;
      readonly buckets: readonly UsageBucket[];
      /** The buckets added up. */
      readonly usage: Usage;
      /** Left in flight by an earlier attempt (pending usage may then wait behind it), and how far it got. */
      readonly history: BatchHistory;
      readonly refusals: readonly LimitRefusal[];
      readonly settledSent: boolean;
    };

export interface DrainOptions {
  /** The business clock, for a batch acknowledged by its mark; default the wall clock. */
  readonly now?: number;
  /** A lease of this process it could not give back, which the drain may take over. */
  readonly heldLease?: string;
}

/** Usage the platform refuses to take, kept under its budget. */
export interface RejectedUsage {
  readonly credentialId: string;
  readonly usage: Usage;
}

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

type Writable<T> = { -readonly [K in keyof T]: T[K] };

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

const STARTED_PERIODS = ['minute', 'hour', 'day', 'week', 'month', 'year'] as const;

/** The minute whose period starts periodStarts holds (a memo of one entry; NaN: none yet), and them. */
let startsMinute = Number.NaN;
let starts: readonly number[] = [];

/**
 * The starts of the minute, hour, day, week, month and year `now` is in, as the scripts take them, worked
 * out once a minute: every one of these periods starts on a minute, so they hold for the whole minute.
 */
function periodStarts(now: number): readonly number[] {
  const minute = minuteStart(now);
  if (minute !== startsMinute) {
    starts = STARTED_PERIODS.map((period) => periodWindow(period, now).start);
    startsMinute = minute;
  }
  return starts;
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

function strings(reply: unknown): string[] {
  if (!Array.isArray(reply)) throw new Error(`unexpected script reply: ${typeof reply}`);
  return reply.map((item) => String(item));
}

/**
 * The check script's reply as items: the hit path's allow comes as one text when the plan is the hinted
 * one (see CHECK_SCRIPT), its items joined by tabs, the plan left out and the limit field last.
 */
export function checkReplyOf(reply: unknown, hintedPlan: string): string[] {
  if (typeof reply !== 'string') return strings(reply);
  const items = reply.split('\t');
  const [kind, , publish, over, max, end, remaining, bucket, synced, throttleField, ...rest] = items;
  if (kind !== 'allow' || rest.length < 3) throw new Error(`unexpected check reply: ${reply.slice(0, 20)}`);
  const field = rest.slice(2).join('\t');
  const allowed = [kind, hintedPlan, publish, over, field, max, end, remaining, bucket, synced] as string[];
  return throttleField === ''
    ? allowed
    : [...allowed, throttleField as string, rest[0] as string, rest[1] as string];
}

/** When a limit's period ends: -1 is eternity, -2 the period `now` is in (the snapshot knew an earlier one). */
function resetAtOf(period: Period, encodedEnd: string, now: number): number | undefined {
  const end = Number(encodedEnd);
  if (end === -1) return undefined;
  return end === -2 ? periodWindow(period, now).end : end;
}

/**
 * The limit a reply names at `at` by its field (`limit:<period>:<metric>`), then its max and period end;
 * undefined for a field that does not read as one (an allowed call then goes without feedback, as
 * throttleFeedbackOf explains).
 */
function limitInfoOf(reply: readonly string[], at: number, now: number): Writable<LimitInfo> | undefined {
  const field = LIMIT_FIELD.exec(reply[at] as string);
  if (field === null) return undefined;
  const period = field[1] as Period;
  const limit: Writable<LimitInfo> = { metric: field[2] as string, period, max: Number(reply[at + 1]) };
  const resetAt = resetAtOf(period, reply[at + 2] ?? '-1', now);
  if (resetAt !== undefined) limit.resetAt = resetAt;
  return limit;
}

/** The throttle a reply names by its plan and field (see CHECK_SCRIPT); undefined when the table has none. */
function throttleInfoOf(throttles: ThrottleTable, plan: string, field: string): ThrottleInfo | undefined {
  const entry = throttles.entryOf(plan, field);
  if (entry === undefined) return undefined;
  return {
    ...(entry.metric !== undefined && { metric: entry.metric }),
    rate: entry.rate,
    burst: entry.burst,
  };
}

/**
 * The allowed call's throttle feedback, at `at` of the reply when a throttle applied. The script names a
 * field of this cache's own table; were it another, the call is still allowed (its usage is recorded
 * already, so an error here would have the platform count it twice), without feedback.
 */
function throttleFeedbackOf(
  reply: readonly string[],
  at: number,
  throttles: ThrottleTable,
): ThrottleFeedback | undefined {
  if (reply.length <= at) return undefined;
  const throttle = throttleInfoOf(throttles, reply[1] as string, reply[at] as string);
  if (throttle === undefined) return undefined;
  return { ...throttle, remaining: Number(reply[at + 1]), fullInMs: Number(reply[at + 2]) };
}

/** The throttle that refused a call; nothing was recorded, so an unknown one may fail the check. */
function throttleRefusalOf(reply: readonly string[], throttles: ThrottleTable): ThrottleRefusal {
  const throttle = throttleInfoOf(throttles, reply[2] as string, reply[4] as string);
  if (throttle === undefined) {
    throw new Error(`check reply names a throttle this cache does not have: ${reply[4]}`);
  }
  return { ...throttle, retryInMs: Number(reply[5]) };
}

/** The check script's reply (see CHECK_SCRIPT) as a result. */
export function checkResultOf(reply: readonly string[], now: number, throttles: ThrottleTable): CheckResult {
  switch (reply[0]) {
    case 'expired':
      throw new Error('cache answer came after its deadline (is the Redis clock ahead of ours?)');
    case 'miss':
      return { kind: 'miss', claimed: reply[1] === '1', seen: reply[2] === '1' };
    case 'key_unknown':
      return { kind: 'key_unknown', seen: reply[1] === '1' };
    case 'cached': {
      const state = decodeState(reply[1] as string);
      if (state.kind === 'active') return { kind: 'miss', claimed: false, seen: false };
      return { kind: 'cached', state, publish: reply[2] === '1' };
    }
    case 'deny': {
      if (reply[1] === 'rate_limited') {
        return {
          kind: 'throttled',
          plan: reply[2] as string,
          publish: false,
          throttle: throttleRefusalOf(reply, throttles),
        };
      }
      const limit = limitInfoOf(reply, 4, now);
      if (limit === undefined) throw new Error(`check reply names no limit field: ${reply[4]}`);
      return { kind: 'limited', plan: reply[2] as string, publish: reply[3] === '1', limit };
    }
    case 'allow': {
      // Built field by field, not spread: one per allowed call, on the hot path.
      const allowed: Writable<Extract<CheckResult, { kind: 'allow' }>> = {
        kind: 'allow',
        plan: reply[1] as string,
        publish: reply[2] === '1',
        overLimit: reply[3] === '1',
        bucket: Number(reply[8]),
        confirmedAt: Number(reply[9] ?? 0),
      };
      const throttle = throttleFeedbackOf(reply, 10, throttles);
      if (throttle !== undefined) allowed.throttle = throttle;
      const limit: Writable<Partial<LimitFeedback>> | undefined = limitInfoOf(reply, 4, now);
      if (limit !== undefined) {
        limit.remaining = Number(reply[7]);
        allowed.limit = limit as LimitFeedback;
      }
      return allowed;
    }
    default:
      throw new Error(`unexpected check reply: ${reply[0]}`);
  }
}

/** Where an allowed call's reply carries the needs its hints missed (see CHECK_SCRIPT). */
const CHECK_NEEDS_AT = 13;

/** KEYS: neg, keys; ARGV: key ids. One slot (the budget's hash tag): no call sees half of it. */
const FORGET_REFUSALS_SCRIPT = `redis.call('DEL', KEYS[1])
for _, keyId in ipairs(ARGV) do
  local fact = redis.call('HGET', KEYS[2], keyId)
  if fact and string.sub(fact, 1, 4) == 'bad ' then redis.call('HDEL', KEYS[2], keyId) end
end
return 0`;

/**
 * Defines each script as a command of the client (ioredis sends it by SHA): once per client, or `again`
 * whatever the client has under its name.
 */
function defineScripts(redis: RedisConnection, scripts: readonly ScriptDefinition[], again = false): void {
  const commands = redis as unknown as Record<string, unknown>;
  for (const script of scripts) {
    if (again || typeof commands[script.name] !== 'function') {
      redis.defineCommand(script.name, { numberOfKeys: script.numberOfKeys, lua: script.lua });
    }
  }
}

/**
 * A module of scripts the authorizer never runs (the reporter's, the SOAP proxy's), loaded and its
 * scripts defined on first use: the authorizer's bundle leaves it out of what every cold start reads.
 */
class LazyScripts<Module> {
  private loaded: Promise<Module> | undefined;

  constructor(
    private readonly load: () => Promise<Module>,
    private readonly scriptsOf: (module: Module) => readonly ScriptDefinition[],
  ) {}

  of(redis: RedisConnection): Promise<Module> {
    this.loaded ??= this.load().then(
      (module) => {
        // Defined whatever the client answers for the name: what stands there may be a wrapper of the
        // command (a proxy that fails it on purpose) with no script behind it yet.
        defineScripts(redis, this.scriptsOf(module), true);
        return module;
      },
      (error: unknown) => {
        this.loaded = undefined;
        throw error;
      },
    );
    return this.loaded;
  }
}

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
      [keys.negative, keys.app, keys.keys, keys.since, keys.firstCall, keys.seen],
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
    const reply = strings(
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
      strings(
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
