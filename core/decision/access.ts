/**
 * The authorizer's decision for one request (docs/architecture.md: hot path and invariants), with its
 * ports as arguments: the cache (Redis), the report publisher (SNS), the platform and the clock.
 *
 * - Malformed credential: 401 before any Redis, platform or SNS call.
 * - No mapping rule matched: Deny `no_mapping_rule`, before any call either (as APIcast answers its
 *   "no mapping rule" before asking the platform).
 * - A budget (the application) with a snapshot: one Lua script decides and counts, whatever the
 *   endpoint; one SNS message when it set the report window flag. An app key the budget has not seen is
 *   checked with the platform (authorize, which records nothing), then the script decides.
 * - A budget without a snapshot: one call asks the platform (authrep, which reports the call) and stores
 *   the answer; concurrent first calls of the budget wait for that answer instead of asking too, so no
 *   burst of first calls passes a limit the platform cannot see.
 * - Platform unavailable: the failure mode's handler decides (failure-modes.ts). `strict` lets the
 *   budget's snapshot allow calls only within strictTrustSeconds of the platform's last confirmation,
 *   then asks the platform and refuses when it cannot answer; `resilient` answers from the snapshot
 *   however old, else refuses; `allow` does the same and lets an unknown credential through with its
 *   usage kept pending for the reporter. A refusal is a Deny (403) with reason `platform_unavailable`:
 *   never a 5xx, and never a 401, which would tell a consumer with a good key that the key is wrong.
 * - Platform refuses our own configuration (provider key, service id, metric names): Deny
 *   `platform_misconfigured`, logged as an error.
 * - Redis unreachable: authrep directly, as without a cache.
 */
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { type AccessCache, admittedBucketOf } from '../budget/cache';
import { accessCacheOf } from '../budget/cache-of-config';
import type {
  CheckRequest,
  CheckResult,
  FirstCallHandover,
  FirstCallLock,
  LimitFeedback,
  LimitInfo,
  RecordedUsage,
  ThrottleRefusal,
} from '../budget/cache-types';
import { commandFateOf } from '../budget/command-fate';
import { REDIS_COMMAND_TIMEOUT_MS, type RedisConnection } from '../budget/redis-client';
import { type CredentialAnswer, type CredentialState, isCredentialAnswer, stateOf } from '../budget/snapshot';
import {
  type CredentialReader,
  credentialIdOf,
  credentialIdPrefix,
  credentialReaderOf,
  keyIdOf,
} from '../credentials';
import { type CredentialSealer, sealerOf } from '../credentials/seal';
import { redisTokensNotBefore } from '../credentials/token-not-before';
import { errorMessage, type LogPort, METRIC, type MetricsPort } from '../observability/observability';
import type { AuthOutcome, Credential, PlatformPort, Usage } from '../platform/types';
import { type ReportPublisher, reportMessage } from '../reporting/message';
import { type AccessConfig, ConfigError } from '../settings/config';
import type { AccessDecision, AccessRequest, DenyReason } from './decision';
import { FAILURE_MODE_HANDLERS, type FailureModeHandler } from './failure-modes';
import { FirstCallGate } from './first-call-gate';
import { givenMappingRules, type MappingRulesPort, platformMappingRules } from './mapping-rules-source';
import { RefusalMemory, type RememberedRefusal } from './refusal-memory';
import type { GatewayRequest } from './request';
import { retryAfterSecondsOf } from './retry-after';
import { ThrottleNames } from './throttle-names';

/** An allow or a deny: a decision about a credential that was read. */
type AllowOrDeny = Exclude<AccessDecision, { effect: 'unauthorized' }>;
/** An allow or deny while it is being built (its fields, writable). */
type Decided = { -readonly [K in keyof AllowOrDeny]: AllowOrDeny[K] };

export interface AccessAuthorizerDeps {
  readonly config: AccessConfig;
  /** Undefined: no cache, every call is an authrep. */
  readonly redis?: RedisConnection;
  /** Required with redis. */
  readonly publisher?: ReportPublisher;
  readonly platform: PlatformPort;
  readonly now: () => number;
  readonly logger: LogPort;
  readonly metrics: MetricsPort;
  /** @default the rules the configuration's mappingRulesSource names */
  readonly mappingRules?: MappingRulesPort;
}

/** Time a first call has, after the platform's answer, to store it. */
const FIRST_CALL_STORE_MS = 500;

/**
 * How long a budget's first call may take to ask the platform and store its answer: concurrent first
 * calls wait this long for it before they decide as if the platform were down.
 */
export function firstCallWaitMs(config: AccessConfig): number {
  return config.platformTimeoutMs + FIRST_CALL_STORE_MS;
}

/** How often a waiting first call looks for the answer (one round trip each). */
const FIRST_CALL_POLL_MS = 10;

/**
 * Whether a port's answer has to be waited for. A credential reader or a rules source answers at once when
 * it can, and the caller awaits only a promise: an `await` of a value at hand still costs a microtask, one
 * turn more for every call on the hot path.
 */
function isPending<T>(answer: T | Promise<T>): answer is Promise<T> {
  return answer instanceof Promise;
}

interface RequestFacts {
  readonly credential: Credential;
  /** The budget. */
  readonly credentialId: string;
  /** The presented key under the budget; '' when there is none to check. */
  readonly keyId: string;
  readonly usage: Usage;
  readonly now: number;
  readonly metrics: string;
  readonly applicationId?: string;
  readonly sourceAddress?: string;
}

/**
 * Why the platform's answer could not be had: no snapshot of the budget at all, or not of this key, or a
 * snapshot the failure mode no longer trusts.
 */
type Unknown = 'budget' | 'key' | 'unconfirmed';

interface CacheParts {
  readonly cache: AccessCache;
  readonly publisher: ReportPublisher;
  readonly sealer: CredentialSealer;
  readonly firstCallGate: FirstCallGate;
}

export class AccessAuthorizer {
  private readonly rules: MappingRulesPort;
  private readonly windowMs: number;
  private readonly softLimits: boolean;
  private readonly failureMode: FailureModeHandler;
  private readonly trustMs: number;
  private readonly cached: CacheParts | undefined;
  private readonly readCredential: CredentialReader;
  private readonly refusals: RefusalMemory;
  private readonly throttleNames: ThrottleNames;

  constructor(private readonly deps: AccessAuthorizerDeps) {
    const { config } = deps;
    this.refusals = new RefusalMemory(config.refusalMemoryMs);
    this.throttleNames = new ThrottleNames(config, deps.logger, deps.metrics);
    this.readCredential = credentialReaderOf(
      config,
      deps.redis && { tokensNotBefore: redisTokensNotBefore(deps.redis, config.serviceId, deps.logger) },
    );
    this.rules =
      deps.mappingRules ??
      (config.mappingRulesSource === 'platform'
        ? platformMappingRules(config, deps)
        : givenMappingRules(config.mappingRules));
    this.windowMs = config.reportWindowSeconds * 1000;
    this.softLimits = config.limitMode === 'soft';
    this.failureMode = FAILURE_MODE_HANDLERS[config.failureMode];
    this.trustMs = config.strictTrustSeconds * 1000;
    if (deps.redis && !deps.publisher) {
      throw new ConfigError('topicArn', 'is required with redis: report messages are published to it');
    }
    this.cached = deps.redis &&
      deps.publisher && {
        // A reconnecting Redis gets one command timeout; then the call goes to the platform.
        cache: accessCacheOf(deps.redis, config, REDIS_COMMAND_TIMEOUT_MS),
        publisher: deps.publisher,
        sealer: sealerOf(config),
        firstCallGate: new FirstCallGate(deps.redis, config.serviceId, config.unseenCredentialCallsPerSecond),
      };
  }

  /** The decision for a call as a gateway adapter read it from its event. */
  async decide(request: GatewayRequest): Promise<AccessDecision> {
    const { logger } = this.deps;
    // A token is verified here, before any Redis, platform or SNS call (a reader that cannot fetch the
    // issuer's keys throws: the handler answers authorizer_error, not 401).
    const read = this.readCredential(request);
    const extraction = isPending(read) ? await read : read;
    if (!extraction.ok) {
      this.count(METRIC.malformedCredential);
      logger.info('malformed credential', { header: extraction.header, reason: extraction.reason });
      return { effect: 'unauthorized' };
    }
    const { method, path, query, sourceAddress } = request;
    // Awaited, not returned: an async function that returns a promise takes two turns more to adopt it.
    return await this.decideCall({
      credential: extraction.credential,
      method,
      path,
      query,
      ...(sourceAddress !== undefined && { sourceAddress }),
    });
  }

  /** The decision for a call whose credential was read and validated already. */
  async decideCall(request: AccessRequest): Promise<AccessDecision> {
    const { config } = this.deps;
    const { credential } = request;
    const now = this.deps.now();
    const rules = this.rules.mapperAt(now);
    const mapper = isPending(rules) ? await rules : rules;
    const usage = mapper?.usageOf(request);
    const facts: { -readonly [K in keyof RequestFacts]: RequestFacts[K] } = {
      credential,
      credentialId: credentialIdOf(config.serviceId, credential),
      keyId: keyIdOf(config.serviceId, credential),
      usage: usage ?? {},
      now,
      metrics: usage === undefined ? '' : Object.keys(usage).join(','),
    };
    if (credential.kind === 'app_id') facts.applicationId = credential.appId;
    if (request.sourceAddress !== undefined) facts.sourceAddress = request.sourceAddress;
    if (!mapper) return this.withoutRules(facts);
    if (!usage) {
      this.count(METRIC.noMappingRule);
      return this.deny(facts, 'no_mapping_rule');
    }
    const decided = this.fromMemory(facts) ?? this.remembered(facts, await this.decideMapped(facts));
    this.countPerMetric(facts, decided);
    const retryAfterSeconds = retryAfterSecondsOf(decided, facts.usage, facts.now);
    return retryAfterSeconds === undefined || decided.effect === 'unauthorized'
      ? decided
      : { ...decided, retryAfterSeconds };
  }

  /** A refusal this instance remembers for the call: answered without Redis, counted as the first was. */
  private fromMemory(facts: RequestFacts): AccessDecision | undefined {
    return this.refusedAgain(
      facts,
      this.refusals.refusalOf(facts.credentialId, facts.keyId, facts.usage, facts.now),
    );
  }

  private refusedAgain(
    facts: RequestFacts,
    refusal: RememberedRefusal | undefined,
  ): AccessDecision | undefined {
    if (refusal === undefined) return undefined;
    this.count(METRIC.refusedFromMemory);
    if (refusal.kind === 'invalid') return { effect: 'unauthorized' };
    if (refusal.kind === 'throttled') {
      this.count(METRIC.rateLimited);
      return this.throttled(facts, refusal.plan, refusal.throttle);
    }
    this.count(METRIC.limitsExceeded);
    return this.deny(facts, 'limits_exceeded', refusal.plan, refusal.limit);
  }

  /**
   * Keeps a refusal over a limit or a throttle, or of a credential the platform refused, in the instance's
   * memory; any other answer (allowed, or refused for another reason) ends what it kept for the call's
   * metrics, so the calls after a re-check get the re-check's answer.
   */
  private remembered(facts: RequestFacts, decision: AccessDecision): AccessDecision {
    if (decision.effect === 'unauthorized') {
      this.refusals.rememberInvalid(facts.credentialId, facts.keyId, facts.now);
    } else if (decision.reason === 'limits_exceeded' && decision.limit !== undefined) {
      this.refusals.rememberLimited(
        facts.credentialId,
        facts.keyId,
        facts.usage,
        decision.plan,
        decision.limit,
        facts.now,
      );
    } else if (decision.reason === 'rate_limited' && decision.throttle && 'retryInMs' in decision.throttle) {
      this.refusals.rememberThrottled(
        facts.credentialId,
        facts.keyId,
        facts.usage,
        decision.plan,
        decision.throttle,
        facts.now,
      );
    } else {
      this.refusals.forget(facts.credentialId, facts.keyId, facts.usage);
    }
    return decision;
  }

  /**
   * A call whose check could not reach Redis: a throttle refusal this instance keeps for it stands (its
   * re-check failed), else the platform decides as without a cache.
   */
  private async withoutCache(facts: RequestFacts): Promise<AccessDecision> {
    const { credentialId, keyId, usage, now } = facts;
    const standing = this.refusals.standingThrottleRefusalOf(credentialId, keyId, usage, now);
    return this.refusedAgain(facts, standing) ?? this.direct(facts);
  }

  /** The decision for a call that maps to metrics. */
  private async decideMapped(facts: RequestFacts): Promise<AccessDecision> {
    const cached = this.cached;
    if (!cached) return this.direct(facts);
    const lock = this.firstCallLock();
    const result = await this.check(cached, facts, facts.keyId, lock);
    if (result === undefined) return this.withoutCache(facts);
    switch (result.kind) {
      case 'miss':
        this.count(METRIC.cacheMiss);
        return this.firstCall(cached, facts, lock, result);
      case 'key_unknown':
        this.count(METRIC.cacheMiss);
        return this.checkKey(cached, facts, 'key', result.seen);
      default:
        this.count(METRIC.cacheHit);
        if (result.kind === 'allow') {
          const confirmation = { confirmedAt: result.confirmedAt, now: facts.now, trustMs: this.trustMs };
          if (!this.failureMode.trusts(confirmation)) return this.reconfirm(cached, facts, result);
        }
        return this.fromCheck(cached, facts, result);
    }
  }

  /**
   * A cached allow the failure mode no longer trusts (strict, past its bound): the usage the script
   * recorded is given back, and the platform is asked as for a key the budget has not seen, so its fresh
   * answer decides (and confirms the snapshot), or the call is refused when it cannot answer. A refusal
   * stays a refusal however old: only an allow needs the platform's word.
   */
  private async reconfirm(
    cached: CacheParts,
    facts: RequestFacts,
    result: Extract<CheckResult, { kind: 'allow' }>,
  ): Promise<AccessDecision> {
    if (result.publish) await this.publish(cached, facts);
    try {
      await cached.cache.giveBack(facts.credentialId, { bucket: result.bucket, usage: facts.usage });
    } catch (error) {
      // Left counted: over, never under (as a Redis command that timed out but ran).
      this.deps.logger.warn('unconfirmed call not given back', { error: errorMessage(error) });
    }
    // Its key was checked (the allow says so): confirming it is never bounded by the first-call gate.
    return this.checkKey(cached, facts, 'unconfirmed', true);
  }

  private count(name: string): void {
    this.deps.metrics.addMetric(name, 'Count', 1);
  }

  /** Allowed or Denied once per platform metric the call maps to (the dashboard's per-metric counts). */
  private countPerMetric(facts: RequestFacts, decision: AccessDecision): void {
    const name = decision.effect === 'allow' ? METRIC.allowed : METRIC.denied;
    for (const metric of Object.keys(facts.usage)) this.deps.metrics.addCountPerMetric(name, metric, 1);
  }

  /** A decision built field by field, not spread: one per call, on the hot path. */
  private decision(
    facts: RequestFacts,
    effect: 'allow' | 'deny',
    plan: string,
    reason?: DenyReason,
    limit?: LimitInfo,
  ): Decided {
    const decision: Decided = { effect, credentialId: facts.credentialId, plan, metrics: facts.metrics };
    if (reason !== undefined) decision.reason = reason;
    if (facts.applicationId !== undefined) decision.applicationId = facts.applicationId;
    if (limit !== undefined) decision.limit = limit;
    return decision;
  }

  /** A refusal by a throttle, which it names. */
  private throttled(facts: RequestFacts, plan: string, throttle: ThrottleRefusal): Decided {
    const decision = this.decision(facts, 'deny', plan, 'rate_limited');
    decision.throttle = throttle;
    return decision;
  }

  private allow(facts: RequestFacts, plan: string, limit?: LimitFeedback, recorded?: RecordedUsage): Decided {
    const decision = this.decision(facts, 'allow', plan, undefined, limit);
    if (recorded !== undefined) decision.recorded = recorded;
    return decision;
  }

  /**
   * Takes back the usage an allowed call recorded (its backend failed), as far as no reporter took it
   * yet; returns what was taken back. Nothing to take back, or no cache: nothing is done.
   */
  async giveBack(decision: AccessDecision): Promise<Usage> {
    if (decision.effect !== 'allow' || decision.recorded === undefined || !this.cached) return {};
    return this.cached.cache.giveBack(decision.credentialId, decision.recorded);
  }

  private deny(facts: RequestFacts, reason: DenyReason, plan = '', limit?: LimitInfo): AccessDecision {
    return this.decision(facts, 'deny', plan, reason, limit);
  }

  private refusedFor(
    facts: RequestFacts,
    state: Exclude<CredentialState, { kind: 'active' }>,
  ): AccessDecision {
    return state.kind === 'invalid' ? { effect: 'unauthorized' } : this.deny(facts, state.reason);
  }

  /** The hot-path script; undefined when Redis cannot answer. */
  private async check(
    cached: CacheParts,
    facts: RequestFacts,
    keyId: string,
    firstCallLock?: FirstCallLock,
  ): Promise<CheckResult | undefined> {
    try {
      // Built field by field, not spread from the facts: one per call, on the hot path.
      const request: { -readonly [K in keyof CheckRequest]: CheckRequest[K] } = {
        credentialId: facts.credentialId,
        keyId,
        usage: facts.usage,
        now: facts.now,
        windowMs: this.windowMs,
        softLimits: this.softLimits,
      };
      if (firstCallLock !== undefined) request.firstCallLock = firstCallLock;
      return await cached.cache.check(request);
    } catch (error) {
      // Unless the instance keeps a throttle refusal for the call (withoutCache), the caller asks the platform with
      // authrep, which counts the call: once when the script did not run, twice when it ran and its write
      // survives (over, never under: command-fate.ts).
      const fate = commandFateOf(error);
      this.count(METRIC.cacheUnavailable);
      if (fate === 'may_have_run') this.count(METRIC.cacheAnswerLost);
      this.deps.logger.warn('redis unavailable: asking the platform directly', {
        error: errorMessage(error),
        fate,
      });
      return undefined;
    }
  }

  private async publish(cached: CacheParts, facts: RequestFacts): Promise<void> {
    try {
      await cached.publisher.publish(reportMessage(this.deps.config.serviceId, facts.credentialId));
      this.count(METRIC.reportPublished);
    } catch (error) {
      this.count(METRIC.reportPublishFailed);
      this.deps.logger.warn('report message not published: the usage stays pending for the sweep', {
        credential: credentialIdPrefix(facts.credentialId),
        error: errorMessage(error),
      });
    }
  }

  /** The decision of a check's answer; at once (no promise) unless the answer asks for a report message. */
  private fromCheck(
    cached: CacheParts,
    facts: RequestFacts,
    result: Exclude<CheckResult, { kind: 'miss' | 'key_unknown' }>,
  ): AccessDecision | Promise<AccessDecision> {
    // A refusal publishes too, once per window: the reporter then refreshes the budget from the platform.
    if (result.publish) return this.publish(cached, facts).then(() => this.checked(facts, result));
    return this.checked(facts, result);
  }

  private checked(
    facts: RequestFacts,
    result: Exclude<CheckResult, { kind: 'miss' | 'key_unknown' }>,
  ): AccessDecision {
    switch (result.kind) {
      case 'cached':
        this.count(METRIC.negativeCacheHit);
        return this.refusedFor(facts, result.state);
      case 'limited':
        this.count(METRIC.limitsExceeded);
        return this.deny(facts, 'limits_exceeded', result.plan, result.limit);
      case 'throttled':
        this.count(METRIC.rateLimited);
        return this.throttled(facts, result.plan, result.throttle);
      case 'allow': {
        if (result.overLimit) this.count(METRIC.softLimitExceeded);
        const allowed = this.allow(facts, result.plan, result.limit, {
          bucket: result.bucket,
          usage: facts.usage,
        });
        if (result.throttle !== undefined) allowed.throttle = result.throttle;
        return allowed;
      }
    }
  }

  /** Whether a platform answer lets its call through: an active budget within its limits, or soft limits. */
  private admits(answer: CredentialAnswer): boolean {
    return stateOf(answer).kind === 'active' && (answer.kind !== 'denied' || this.softLimits);
  }

  /** The decision a platform answer gives; `recordOverLimit` keeps soft-limit usage. */
  private async answerOf(
    facts: RequestFacts,
    answer: CredentialAnswer,
    recordOverLimit: () => Promise<RecordedUsage | undefined>,
  ): Promise<AccessDecision> {
    const state = stateOf(answer);
    if (state.kind !== 'active') return this.refusedFor(facts, state);
    const plan = answer.kind === 'invalid_credential' ? '' : (answer.plan ?? '');
    if (answer.kind !== 'denied') return this.allow(facts, plan);
    this.count(METRIC.limitsExceeded);
    if (!this.softLimits) return this.deny(facts, 'limits_exceeded', plan, exceededLimitOf(answer));
    // Soft limits: the platform refused to record this call; it is let through and reported later.
    this.count(METRIC.softLimitExceeded);
    return this.allow(facts, plan, undefined, await recordOverLimit());
  }

  private misconfigured(facts: RequestFacts, outcome: Extract<AuthOutcome, { kind: 'misconfigured' }>) {
    this.count(METRIC.platformMisconfigured);
    this.deps.logger.error(
      'the platform refused our configuration: check the provider key, service id and mapping rules',
      {
        code: outcome.code,
        status: outcome.status,
        detail: outcome.message,
        credential: credentialIdPrefix(facts.credentialId),
      },
    );
    return this.deny(facts, 'platform_misconfigured');
  }

  /** mappingRulesSource platform, no rules ever read: every call is refused, loudly (the alarm). */
  private withoutRules(facts: RequestFacts): AccessDecision {
    this.count(METRIC.platformMisconfigured);
    this.deps.logger.error('no mapping rules read from the platform yet: call refused', {
      credential: credentialIdPrefix(facts.credentialId),
    });
    return this.deny(facts, 'platform_misconfigured');
  }

  private unavailable(outcome: Extract<AuthOutcome, { kind: 'unavailable' }>): void {
    this.count(METRIC.platformUnavailable);
    this.deps.logger.warn('platform unavailable', { cause: outcome.cause, detail: outcome.message });
  }

  /** The double failure where an allowed call cannot be kept for reporting: said loudly. */
  private noteUnrecorded(facts: RequestFacts, why: string): void {
    this.count(METRIC.usageNotRecorded);
    this.deps.logger.error('call allowed without its usage recorded', {
      why,
      credential: credentialIdPrefix(facts.credentialId),
      usage: facts.usage,
    });
  }

  /**
   * Keeps usage the platform did not record, for the reporter; the call is allowed either way. Returns
   * where the usage went, undefined when it could not be kept.
   */
  private async keepPending(
    cached: CacheParts,
    facts: RequestFacts,
    sealedCredential: string,
  ): Promise<RecordedUsage | undefined> {
    try {
      const { credentialId, usage, now } = facts;
      if (await cached.cache.admit(credentialId, sealedCredential, usage, now, this.windowMs)) {
        await this.publish(cached, facts);
      }
      return { bucket: admittedBucketOf(now), usage };
    } catch (error) {
      this.noteUnrecorded(facts, `redis unavailable: ${errorMessage(error)}`);
      return undefined;
    }
  }

  /** Stores a platform answer (with what a first call hands over, see FirstCallHandover); never throws. */
  private async storeAnswer(
    cached: CacheParts,
    facts: RequestFacts,
    answer: CredentialAnswer,
    firstCall: FirstCallHandover = {},
  ): Promise<{ readonly sealedCredential: string; readonly stored: boolean }> {
    const sealedCredential = cached.sealer.seal(facts.credentialId, facts.credential);
    try {
      await cached.cache.storeAnswer({
        credentialId: facts.credentialId,
        keyId: facts.keyId,
        sealedCredential,
        answer,
        now: facts.now,
        ...firstCall,
      });
      return { sealedCredential, stored: true };
    } catch (error) {
      this.count(METRIC.cacheWriteFailed);
      this.deps.logger.warn('platform answer not cached', { error: errorMessage(error) });
      return { sealedCredential, stored: false };
    }
  }

  /**
   * What the failure mode does with a call the cache left to the platform when the platform cannot be
   * asked: refuse it, or admit it, deciding from the budget's snapshot when it has one.
   */
  private async platformDown(cached: CacheParts, facts: RequestFacts, unknown: Unknown) {
    if (this.failureMode.undecided === 'refuse') return this.deny(facts, 'platform_unavailable');
    if (unknown !== 'budget') {
      const result = await this.check(cached, facts, '');
      if (result !== undefined && result.kind !== 'miss' && result.kind !== 'key_unknown') {
        return this.fromCheck(cached, facts, result);
      }
    }
    const sealed = cached.sealer.seal(facts.credentialId, facts.credential);
    return this.allow(facts, '', undefined, await this.keepPending(cached, facts, sealed));
  }

  /** A fresh first-call lock for a call to claim should its budget have no snapshot. */
  private firstCallLock(): FirstCallLock {
    return { token: randomUUID(), ttlMs: firstCallWaitMs(this.deps.config) };
  }

  /**
   * A budget without a snapshot: the one call whose check claimed its first-call lock asks the platform;
   * the others wait for that answer and then decide from the cache, so the platform's authrep (which
   * sees no usage pending here) is asked once, not once per concurrent call. Each check of a waiting
   * call claims the lock if the budget still has no snapshot, so a holder that gave up without an answer
   * (the platform down, the gate closed) hands over at once.
   */
  private async firstCall(
    cached: CacheParts,
    facts: RequestFacts,
    lock: FirstCallLock,
    miss: Extract<CheckResult, { kind: 'miss' }>,
  ): Promise<AccessDecision> {
    const deadline = Date.now() + lock.ttlMs;
    let last = miss;
    for (;;) {
      if (last.claimed) return this.askPlatform(cached, facts, lock.token, last.seen);
      if (Date.now() + FIRST_CALL_POLL_MS > deadline) {
        this.count(METRIC.firstCallWaitTimedOut);
        return this.platformDown(cached, facts, 'budget');
      }
      await sleep(FIRST_CALL_POLL_MS);
      const result = await this.check(cached, facts, facts.keyId, lock);
      if (result === undefined) return this.direct(facts);
      if (result.kind === 'key_unknown') return this.checkKey(cached, facts, 'key', result.seen);
      if (result.kind !== 'miss') return this.fromCheck(cached, facts, result);
      last = result;
    }
  }

  /**
   * authrep for a budget without a snapshot, by the call holding its first-call lock: it reports this
   * call, and its answer is stored, the lock given back and, when the answer admits the call, its
   * throttle cells taken, in one script. Every other way out gives the lock back on its own.
   */
  private async askPlatform(
    cached: CacheParts,
    facts: RequestFacts,
    lockToken: string,
    seen: boolean,
  ): Promise<AccessDecision> {
    let released = false;
    try {
      if (!(await this.firstCallAdmitted(cached, facts, seen))) return this.platformBusy(facts);
      this.count(METRIC.platformCall);
      const outcome = await this.deps.platform.authrep(facts.credential, facts.usage);
      if (!isCredentialAnswer(outcome)) {
        if (outcome.kind === 'misconfigured') return this.misconfigured(facts, outcome);
        this.unavailable(outcome);
        return this.platformDown(cached, facts, 'budget');
      }
      const stored = await this.storeAnswer(cached, facts, outcome, {
        firstCallToken: lockToken,
        ...(this.admits(outcome) && { admittedUsage: facts.usage }),
      });
      released = stored.stored;
      this.learnFrom(outcome);
      return await this.answerOf(facts, outcome, () =>
        this.keepPending(cached, facts, stored.sealedCredential),
      );
    } finally {
      if (!released)
        await cached.cache.releaseFirstCall(facts.credentialId, lockToken).catch(() => undefined);
    }
  }

  /**
   * An app key the budget has not checked (or a snapshot to confirm): the platform says whether it is one
   * of the application's keys (authorize records nothing), and the budget's snapshot, refreshed by the
   * answer, then decides the call as for any key. `seen`: the check found the key's seen mark.
   */
  private async checkKey(
    cached: CacheParts,
    facts: RequestFacts,
    unknown: Exclude<Unknown, 'budget'>,
    seen: boolean,
  ): Promise<AccessDecision> {
    // A key never seen is bounded like a budget never seen; confirming a known budget never is.
    if (!(await this.firstCallAdmitted(cached, facts, seen))) return this.platformBusy(facts);
    this.count(METRIC.platformCall);
    const outcome = await this.deps.platform.authorize(facts.credential);
    if (!isCredentialAnswer(outcome)) {
      if (outcome.kind === 'misconfigured') return this.misconfigured(facts, outcome);
      this.unavailable(outcome);
      return this.platformDown(cached, facts, unknown);
    }
    await this.storeAnswer(cached, facts, outcome);
    this.learnFrom(outcome);
    const state = stateOf(outcome);
    if (state.kind !== 'active') return this.refusedFor(facts, state);
    const result = await this.check(cached, facts, facts.keyId);
    if (result === undefined || result.kind === 'miss' || result.kind === 'key_unknown') {
      return this.direct(facts);
    }
    return this.fromCheck(cached, facts, result);
  }

  /**
   * Whether the platform may be asked about a credential the cache has no answer for: always for one
   * the check found seen (its snapshot expired or was evicted: the store script marks every credential
   * the platform says exists), else within the first-call gate's bound.
   */
  private async firstCallAdmitted(cached: CacheParts, facts: RequestFacts, seen: boolean): Promise<boolean> {
    return seen || cached.firstCallGate.admits(facts.now, facts.sourceAddress);
  }

  /** What a platform answer teaches beyond the snapshot: its plan's name is judged against the throttles. */
  private learnFrom(answer: CredentialAnswer): void {
    if (answer.kind !== 'invalid_credential') this.throttleNames.onAnswerNaming(answer.plan ?? '');
  }

  /** A credential never seen, past the bound of such platform calls per second: refused at once. */
  private platformBusy(facts: RequestFacts): AccessDecision {
    this.count(METRIC.platformBusy);
    return this.deny(facts, 'platform_busy');
  }

  /** Without a cache: every call is an authrep, and soft-limit usage is reported at once. */
  private async direct(facts: RequestFacts): Promise<AccessDecision> {
    const { platform } = this.deps;
    this.count(METRIC.platformCall);
    const outcome = await platform.authrep(facts.credential, facts.usage);
    if (isCredentialAnswer(outcome)) {
      return this.answerOf(facts, outcome, async () => {
        this.count(METRIC.platformCall);
        const reported = await platform.report([{ credential: facts.credential, usage: facts.usage }]);
        if (reported.kind !== 'accepted') this.noteUnrecorded(facts, `report failed: ${reported.message}`);
        return undefined;
      });
    }
    if (outcome.kind === 'misconfigured') return this.misconfigured(facts, outcome);
    this.unavailable(outcome);
    if (this.failureMode.undecided === 'refuse') return this.deny(facts, 'platform_unavailable');
    this.noteUnrecorded(facts, 'platform unavailable, no cache');
    return this.allow(facts, '');
  }
}

/**
 * The limit a platform's refusal over limits names: of its usage reports at or past their max, the one
 * that resets last (an eternity limit first: it never does), since the call waits for all of them.
 */
function exceededLimitOf(answer: CredentialAnswer): LimitInfo | undefined {
  if (answer.kind !== 'denied') return undefined;
  const ends = (resetAt: number | undefined) => resetAt ?? Number.POSITIVE_INFINITY;
  const exceeded = answer.usageReports
    .filter((report) => report.exceeded || report.currentValue >= report.maxValue)
    .map(({ metric, period, maxValue, periodEnd }) => ({
      metric,
      period,
      max: maxValue,
      ...(period !== 'eternity' && periodEnd !== undefined && { resetAt: periodEnd }),
    }));
  return exceeded.reduce<LimitInfo | undefined>(
    (last, limit) => (last === undefined || ends(limit.resetAt) > ends(last.resetAt) ? limit : last),
    undefined,
  );
}

export function createAccessAuthorizer(deps: AccessAuthorizerDeps): AccessAuthorizer {
  return new AccessAuthorizer(deps);
}
