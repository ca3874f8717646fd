/**
 * The authorizer's decision for one request (DESIGN.md: hot path, invariants 1-8), with its ports as
 * arguments: the cache (Redis), the report publisher (SNS), the platform and the clock.
 *
 * - Malformed credential: 401 before any Redis, platform or SNS call.
 * - No mapping rule matched: Deny `no_mapping_rule`, before any call either (as APIcast answers its
 *   "no mapping rule" before asking the platform).
 * - Cache hit: one Lua script decides and counts; one SNS message when it set the report window flag.
 * - Cache miss: authrep (which reports this call) and the answer is stored.
 * - Platform unavailable: `strict` refuses; `resilient` answers from the credential's last snapshot,
 *   else refuses; `allow` does the same and lets an unknown credential through with its usage kept
 *   pending for the reporter. A refusal is a Deny (403) with reason `platform_unavailable`: never a
 *   5xx, and never a 401, which would tell a consumer with a good key that the key is wrong.
 * - Platform refuses our own configuration (provider key, service id, metric names): Deny
 *   `platform_misconfigured`, logged as an error.
 * - Redis unreachable: authrep directly, as without a cache.
 */
import type { APIGatewayRequestAuthorizerEvent } from 'aws-lambda';
import { AccessCache, type CheckResult } from './cache';
import { type AccessConfig, ConfigError } from './config';
import { credentialIdOf, credentialIdPrefix, extractCredential } from './credentials';
import { compileMappingRules, endpointOf, mappedRequestOf } from './mapping';
import { type ReportPublisher, reportMessage } from './message';
import { errorMessage, type LogPort, METRIC, type MetricsPort } from './observability';
import type { AuthOutcome, Credential, DenialReason, PlatformPort, Usage } from './platform/types';
import { REDIS_COMMAND_TIMEOUT_MS, type RedisConnection } from './redis-client';
import { type CredentialSealer, createCredentialSealer } from './seal';
import { type CredentialAnswer, type CredentialState, isCredentialAnswer, stateOf } from './snapshot';

export type DenyReason = DenialReason | 'no_mapping_rule' | 'platform_unavailable' | 'platform_misconfigured';

export type AccessDecision =
  | { readonly effect: 'unauthorized' }
  | {
      readonly effect: 'allow' | 'deny';
      readonly credentialId: string;
      readonly reason?: DenyReason;
      /** Plan name; empty when no platform answer told it. */
      readonly plan: string;
      /** Metric names the request maps to, comma-joined. */
      readonly metrics: string;
      /** The app id in app_id mode (user keys do not reveal their application). */
      readonly applicationId?: string;
    };

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
}

/** Lease of a reporter on a credential: longer than any flush (reports, resync) can take. */
export function reportLeaseMs(config: AccessConfig): number {
  return Math.max(60_000, 3 * config.reportTimeoutMs + 2 * config.platformTimeoutMs);
}

/** The cache for a configuration, shared by the authorizer and the reporter. */
export function accessCacheOf(
  redis: RedisConnection,
  config: AccessConfig,
  readyWaitMs?: number,
): AccessCache {
  return new AccessCache(redis, {
    negativeTtlMs: config.negativeCacheTtlSeconds * 1000,
    leaseMs: reportLeaseMs(config),
    ...(readyWaitMs !== undefined && { readyWaitMs }),
  });
}

/** The sealer both Lambdas derive from the provider key or service token. */
export function sealerOf(config: AccessConfig): CredentialSealer {
  if (!config.platformCredential) {
    throw new ConfigError(
      'platformCredential',
      'is required with redis: it keys the sealing of cached credentials',
    );
  }
  return createCredentialSealer(config.platformCredential, config.serviceId);
}

interface RequestFacts {
  readonly credential: Credential;
  readonly credentialId: string;
  readonly usage: Usage;
  readonly endpoint: string;
  readonly now: number;
  readonly metrics: string;
  readonly applicationId?: string;
}

interface Cached {
  readonly cache: AccessCache;
  readonly publisher: ReportPublisher;
  readonly sealer: CredentialSealer;
}

export interface AccessAuthorizer {
  decide(event: APIGatewayRequestAuthorizerEvent): Promise<AccessDecision>;
}

export function createAccessAuthorizer(deps: AccessAuthorizerDeps): AccessAuthorizer {
  const { config, platform, logger, metrics } = deps;
  const mapper = compileMappingRules(config.mappingRules);
  const windowMs = config.reportWindowSeconds * 1000;
  const softLimits = config.limitMode === 'soft';
  if (deps.redis && !deps.publisher) {
    throw new ConfigError('topicArn', 'is required with redis: report messages are published to it');
  }
  const cached: Cached | undefined = deps.redis &&
    deps.publisher && {
      // A reconnecting Redis gets one command timeout; then the call goes to the platform.
      cache: accessCacheOf(deps.redis, config, REDIS_COMMAND_TIMEOUT_MS),
      publisher: deps.publisher,
      sealer: sealerOf(config),
    };

  const count = (name: string) => metrics.addMetric(name, 'Count', 1);

  const decision = (
    facts: RequestFacts,
    effect: 'allow' | 'deny',
    plan: string,
    reason?: DenyReason,
  ): AccessDecision => ({
    effect,
    credentialId: facts.credentialId,
    ...(reason !== undefined && { reason }),
    plan,
    metrics: facts.metrics,
    ...(facts.applicationId !== undefined && { applicationId: facts.applicationId }),
  });
  const allow = (facts: RequestFacts, plan: string) => decision(facts, 'allow', plan);
  const deny = (facts: RequestFacts, reason: DenyReason, plan = '') => decision(facts, 'deny', plan, reason);

  const refusedFor = (facts: RequestFacts, state: Exclude<CredentialState, { kind: 'active' }>) =>
    state.kind === 'invalid' ? ({ effect: 'unauthorized' } as const) : deny(facts, state.reason);

  async function publish(c: Cached, facts: RequestFacts): Promise<void> {
    try {
      await c.publisher.publish(reportMessage(config.serviceId, facts.credentialId));
      count(METRIC.reportPublished);
    } catch (error) {
      count(METRIC.reportPublishFailed);
      logger.warn('report message not published: the usage stays pending for the sweep', {
        credential: credentialIdPrefix(facts.credentialId),
        error: errorMessage(error),
      });
    }
  }

  async function fromCheck(c: Cached, facts: RequestFacts, result: Exclude<CheckResult, { kind: 'miss' }>) {
    switch (result.kind) {
      case 'cached':
        count(METRIC.negativeCacheHit);
        return refusedFor(facts, result.state);
      case 'limited':
        count(METRIC.limitsExceeded);
        return deny(facts, 'limits_exceeded', result.plan);
      case 'allow':
        if (result.overLimit) count(METRIC.softLimitExceeded);
        if (result.publish) await publish(c, facts);
        return allow(facts, result.plan);
    }
  }

  /** The answer to a platform answer about the credential; `recordOverLimit` keeps soft-limit usage. */
  async function answerOf(
    facts: RequestFacts,
    answer: CredentialAnswer,
    state: CredentialState,
    recordOverLimit: () => Promise<void>,
  ): Promise<AccessDecision> {
    if (state.kind !== 'active') return refusedFor(facts, state);
    const plan = answer.kind === 'invalid_credential' ? '' : (answer.plan ?? '');
    if (answer.kind !== 'denied') return allow(facts, plan);
    count(METRIC.limitsExceeded);
    if (!softLimits) return deny(facts, 'limits_exceeded', plan);
    // Soft limits: the platform refused to record this call; it is let through and reported later.
    count(METRIC.softLimitExceeded);
    await recordOverLimit();
    return allow(facts, plan);
  }

  function misconfigured(facts: RequestFacts, outcome: Extract<AuthOutcome, { kind: 'misconfigured' }>) {
    count(METRIC.platformMisconfigured);
    logger.error(
      'the platform refused our configuration: check the provider key, service id and mapping rules',
      {
        code: outcome.code,
        status: outcome.status,
        detail: outcome.message,
        credential: credentialIdPrefix(facts.credentialId),
      },
    );
    return deny(facts, 'platform_misconfigured');
  }

  /** The double failure where an allowed call cannot be kept for reporting: said loudly. */
  function noteUnrecorded(facts: RequestFacts, why: string): void {
    count(METRIC.usageNotRecorded);
    logger.error('call allowed without its usage recorded', {
      why,
      credential: credentialIdPrefix(facts.credentialId),
      usage: facts.usage,
    });
  }

  /** Keeps usage the platform did not record, for the reporter; the call is allowed either way. */
  async function keepPending(c: Cached, facts: RequestFacts, sealedCredential: string): Promise<void> {
    try {
      if (await c.cache.admit(facts.credentialId, sealedCredential, facts.usage, facts.now, windowMs)) {
        await publish(c, facts);
      }
    } catch (error) {
      noteUnrecorded(facts, `redis unavailable: ${errorMessage(error)}`);
    }
  }

  async function platformDown(c: Cached, facts: RequestFacts): Promise<AccessDecision> {
    if (config.failureMode === 'strict') return deny(facts, 'platform_unavailable');
    let result: CheckResult;
    try {
      result = await c.cache.check({ ...facts, endpoint: undefined, windowMs, softLimits });
    } catch (error) {
      count(METRIC.cacheUnavailable);
      logger.warn('redis unavailable', { error: errorMessage(error) });
      if (config.failureMode !== 'allow') return deny(facts, 'platform_unavailable');
      noteUnrecorded(facts, 'platform and redis unavailable');
      return allow(facts, '');
    }
    if (result.kind !== 'miss') return fromCheck(c, facts, result);
    if (config.failureMode !== 'allow') return deny(facts, 'platform_unavailable');
    await keepPending(c, facts, c.sealer.seal(facts.credentialId, facts.credential));
    return allow(facts, '');
  }

  async function firstCall(c: Cached, facts: RequestFacts): Promise<AccessDecision> {
    count(METRIC.platformCall);
    const outcome = await platform.authrep(facts.credential, facts.usage);
    if (!isCredentialAnswer(outcome)) {
      if (outcome.kind === 'misconfigured') return misconfigured(facts, outcome);
      count(METRIC.platformUnavailable);
      logger.warn('platform unavailable', { cause: outcome.cause, detail: outcome.message });
      return platformDown(c, facts);
    }
    const state = stateOf(outcome);
    const sealedCredential = c.sealer.seal(facts.credentialId, facts.credential);
    try {
      await c.cache.store({
        credentialId: facts.credentialId,
        state,
        sealedCredential,
        ...(outcome.kind !== 'invalid_credential' && { status: outcome }),
        now: facts.now,
        ...(state.kind === 'active' && { endpoint: { name: facts.endpoint, usage: facts.usage } }),
      });
    } catch (error) {
      count(METRIC.cacheWriteFailed);
      logger.warn('platform answer not cached', { error: errorMessage(error) });
    }
    return answerOf(facts, outcome, state, () => keepPending(c, facts, sealedCredential));
  }

  /** Without a cache: every call is an authrep, and soft-limit usage is reported at once. */
  async function direct(facts: RequestFacts): Promise<AccessDecision> {
    count(METRIC.platformCall);
    const outcome = await platform.authrep(facts.credential, facts.usage);
    if (isCredentialAnswer(outcome)) {
      return answerOf(facts, outcome, stateOf(outcome), async () => {
        count(METRIC.platformCall);
        const reported = await platform.report([{ credential: facts.credential, usage: facts.usage }]);
        if (reported.kind !== 'accepted') noteUnrecorded(facts, `report failed: ${reported.message}`);
      });
    }
    if (outcome.kind === 'misconfigured') return misconfigured(facts, outcome);
    count(METRIC.platformUnavailable);
    logger.warn('platform unavailable', { cause: outcome.cause, detail: outcome.message });
    if (config.failureMode !== 'allow') return deny(facts, 'platform_unavailable');
    noteUnrecorded(facts, 'platform unavailable, no cache');
    return allow(facts, '');
  }

  return {
    async decide(event) {
      const extraction = extractCredential(config, event.headers, event.multiValueHeaders);
      if (!extraction.ok) {
        count(METRIC.malformedCredential);
        logger.info('malformed credential', { header: extraction.header, reason: extraction.reason });
        return { effect: 'unauthorized' };
      }
      const { credential } = extraction;
      const credentialId = credentialIdOf(config.serviceId, credential);
      const usage = mapper.usageOf(mappedRequestOf(event));
      const facts: RequestFacts = {
        credential,
        credentialId,
        usage: usage ?? {},
        endpoint: endpointOf(event),
        now: deps.now(),
        metrics: Object.keys(usage ?? {}).join(','),
        ...(credential.kind === 'app_id' && { applicationId: credential.appId }),
      };
      if (!usage) {
        count(METRIC.noMappingRule);
        return deny(facts, 'no_mapping_rule');
      }
      if (!cached) return direct(facts);
      let result: CheckResult;
      try {
        result = await cached.cache.check({ ...facts, windowMs, softLimits });
      } catch (error) {
        count(METRIC.cacheUnavailable);
        logger.warn('redis unavailable: asking the platform directly', { error: errorMessage(error) });
        return direct(facts);
      }
      if (result.kind === 'miss') {
        count(METRIC.cacheMiss);
        return firstCall(cached, facts);
      }
      count(METRIC.cacheHit);
      return fromCheck(cached, facts, result);
    },
  };
}
