/**
 * The plugin: one object per process, built from settings, that decides each call with the core
 * (core/decision/access.ts) on the same Redis keys and scripts as the authorizer, and answers the way
 * HTTP means (answers.ts). The framework adapters (frameworks/) are thin: they read their request,
 * call `check`, send a refusal or go on, and, when the call's end matters, settle it once the handler
 * has answered.
 *
 * It never throws into the application: Redis down or the platform down is the failure mode's to
 * decide (the core), and any other error answers 500 "access check unavailable", or lets the call
 * through when the failure mode is `allow`.
 */
import { ensureConnected, type RedisConnection } from '../core/budget/redis-client';
import { type AccessAuthorizer, createAccessAuthorizer } from '../core/decision/access';
import type { AccessDecision } from '../core/decision/decision';
import type { FlatLimit } from '../core/decision/rate-limit-fields';
import {
  errorMessage,
  type LogPort,
  type MetricsPort,
  silentLogger,
  silentMetrics,
} from '../core/observability/observability';
import { type PlatformClient, platformClientFromConfig } from '../core/platform/client';
import type { PlatformPort } from '../core/platform/types';
import type { AccessConfig } from '../core/settings/config';
import {
  type AccessAnswer,
  answerOfRefusal,
  decisionLimits,
  flatLimitOf,
  type RefusalReason,
  rateLimitHeaders,
  refusalAnswer,
  refusalReasonOf,
} from './answers';
import { type ExpressMiddleware, expressMiddleware } from './frameworks/express';
import { type FastifyAccessPlugin, fastifyPlugin } from './frameworks/fastify';
import { type FunctionUrlHandler, type FunctionUrlResult, wrapFunctionUrl } from './frameworks/function-url';
import { type HonoMiddleware, honoMiddleware } from './frameworks/hono';
import { connectionOf } from './redis';
import { REPORTING_MODES, type ReportChannel } from './reporting';
import { type AccessRequest, problemOf, type RawRequest, readRequest } from './request';
import { platformCredentialOf } from './secrets';
import { type AccessControlSettings, type PluginConfig, pluginConfigOf } from './settings';
import { inSpan, tracedPlatform, traceRedisScripts } from './tracing';

/** What an allowed call carries to its handler: who called, under which plan, and what is left. */
export interface AccessGrant {
  /** False when the check could not run and `failureMode: allow` let the call through unchecked. */
  readonly checked: boolean;
  /** The application, when the credential names it (app_id mode); user keys do not reveal it. */
  readonly applicationId?: string;
  /** The plan's name; '' when no platform answer told it. */
  readonly plan: string;
  /** The metrics the call counts against. */
  readonly metrics: readonly string[];
  /** The most constrained limit of the call and what it leaves, when one applies. */
  readonly limit?: {
    readonly metric: string;
    readonly period: string;
    readonly max: number;
    readonly remaining: number;
    /** Whole seconds until its period ends; absent for eternity. */
    readonly resetSeconds?: number;
  };
}

/** How the handler of an allowed call ended: its status code, or a throw. */
export type CallEnd = number | 'threw';

/** The plugin's verdict on one call. */
export type AccessOutcome =
  | {
      readonly allowed: true;
      readonly grant: AccessGrant;
      /** RateLimit-Policy and RateLimit, for the allowed answer. */
      readonly headers: Readonly<Record<string, string>>;
      /**
       * Present only when the call's end matters: `countFailedResponses: false`, on a call that was checked.
       * Tells the plugin how the handler ended; a 5xx or a throw gives the call's usage back. Never throws;
       * call it once. Absent, there is nothing to wait for.
       */
      readonly settle?: (end: CallEnd) => Promise<void>;
    }
  | { readonly allowed: false; readonly reason: RefusalReason; readonly answer: AccessAnswer };

export interface AccessControl {
  /** The verdict on a request as a framework hands it over (method, request target, headers). */
  check(request: RawRequest): Promise<AccessOutcome>;
  /** The verdict on the core's neutral request, for anything without an adapter. */
  decide(request: AccessRequest): Promise<AccessOutcome>;
  /** Express (and Connect) middleware; the grant goes to `req.access`. */
  express(): ExpressMiddleware;
  /** A Fastify plugin on onRequest (register it where it should apply); `request.access`; closes on onClose. */
  readonly fastify: FastifyAccessPlugin;
  /** Hono middleware; the grant goes to `c.get('access')`. */
  hono(): HonoMiddleware;
  /** Wraps a Lambda Function URL handler (payload 2.0 event); the grant goes to `event.requestContext.authorizer.lambda`. */
  functionUrl<R>(handler: FunctionUrlHandler<R>): FunctionUrlHandler<R | FunctionUrlResult>;
  /** Reports every pending call (in-process), then closes the plugin's connections. Idempotent. */
  close(): Promise<void>;
}

interface Parts {
  readonly access: AccessAuthorizer;
  readonly config: AccessConfig;
  /** The decision's client, and the in-process reporter's (longer deadlines), closed with the plugin. */
  readonly platforms: readonly PlatformClient[];
  readonly reporting: ReportChannel | undefined;
}

/** A call let through without a check: an unprotected method, or an error under `failureMode: allow`. */
const UNCHECKED: AccessOutcome = {
  allowed: true,
  grant: { checked: false, plan: '', metrics: [] },
  headers: {},
};

/** Settings that fail to build the plugin throw here, a ConfigError naming the setting. */
export function createAccessControl(settings: AccessControlSettings): AccessControl {
  const plugin = pluginConfigOf(settings);
  const logger: LogPort = settings.logger ?? silentLogger;
  const metrics: MetricsPort = settings.metrics ?? silentMetrics;
  const now = settings.now ?? Date.now;
  const redis: RedisConnection | undefined = plugin.redis && connectionOf(plugin.redis, logger);
  if (redis && plugin.tracing) traceRedisScripts(redis);

  let built: Promise<Parts> | undefined;
  // The parts once built: a call then decides without waiting on the promise (one microtask hop fewer).
  let ready: Parts | undefined;
  let closing: Promise<void> | undefined;
  // The give-backs of failed calls still running: close() reports only once they are done, or the usage
  // they take back would be reported first and stay counted.
  const givingBack = new Set<Promise<void>>();
  const parts = (): Promise<Parts> => {
    built ??= buildParts(plugin, { redis, logger, metrics, now }).then(
      (done) => {
        ready = done;
        return done;
      },
      (error: unknown) => {
        // A secret that could not be read is read again on the next call.
        built = undefined;
        throw error;
      },
    );
    return built;
  };
  // Connect and read the secret now, so the first call does not pay for them; failures show on a call.
  if (redis) void ensureConnected(redis).catch(() => undefined);
  void parts().catch((error: unknown) =>
    logger.error('access control cannot start', { error: errorMessage(error) }),
  );

  const unchecked = (error: unknown): AccessOutcome => {
    logger.error('access check failed', { error: errorMessage(error) });
    if (plugin.access.failureMode === 'allow') return UNCHECKED;
    return refused('access_check_unavailable', refusalAnswer('access_check_unavailable'));
  };

  const refused = (reason: RefusalReason, answer: AccessAnswer): AccessOutcome => ({
    allowed: false,
    reason,
    answer,
  });

  const withCallback = async (reason: RefusalReason, answer: AccessAnswer, decision?: AccessDecision) => {
    if (!plugin.onRefusal) return refused(reason, answer);
    try {
      const replaced = await plugin.onRefusal({
        reason,
        answer,
        ...(decision?.effect === 'deny' && {
          plan: decision.plan,
          ...(decision.applicationId !== undefined && { applicationId: decision.applicationId }),
        }),
      });
      return refused(reason, replaced);
    } catch (error) {
      logger.error('refusal callback failed: the plugin answers itself', { error: errorMessage(error) });
      return refused(reason, answer);
    }
  };

  const outcomeOf = (built: Parts, decision: AccessDecision): AccessOutcome | Promise<AccessOutcome> => {
    const at = now();
    if (decision.effect !== 'allow') {
      const answer = answerOfRefusal(decision, built.config, at);
      return withCallback(refusalReasonOf(decision), answer, decision);
    }
    const limit = flatLimitOf(decision, at);
    const grant = grantOf(decision, limit);
    const headers = rateLimitHeaders(decisionLimits(decision, limit));
    if (plugin.countFailedResponses) return { allowed: true, grant, headers };
    return { allowed: true, grant, headers, settle: settleOf(built, decision) };
  };

  /** The settle of an allowed call whose end matters: a 5xx or a throw gives its usage back. */
  const settleOf =
    (built: Parts, decision: AccessDecision) =>
    (end: CallEnd): Promise<void> => {
      if (!(end === 'threw' || end >= 500)) return Promise.resolve();
      const giveBack = built.access.giveBack(decision).then(
        () => undefined,
        (error: unknown) => {
          // Left counted: over, never under.
          logger.warn('usage of a failed call not given back', { error: errorMessage(error) });
        },
      );
      givingBack.add(giveBack);
      return giveBack.finally(() => givingBack.delete(giveBack));
    };

  const decideRead = async (request: AccessRequest): Promise<AccessOutcome> => {
    try {
      const built = ready ?? (await parts());
      return await outcomeOf(built, await built.access.decide(request));
    } catch (error) {
      return unchecked(error);
    }
  };

  /** With tracing on, `work` runs in the decision's span; off, it runs as it is (no closure, no span). */
  const traced = <T>(work: (input: T) => Promise<AccessOutcome>) =>
    plugin.tracing
      ? (input: T) =>
          inSpan('access.decide', async (span) => {
            const outcome = await work(input);
            span.setAttribute('access.allowed', outcome.allowed);
            if (!outcome.allowed) span.setAttribute('access.reason', outcome.reason);
            return outcome;
          })
      : work;

  const decide = traced(async (request: AccessRequest): Promise<AccessOutcome> => {
    const problem = problemOf(request);
    if (problem !== undefined) return withCallback(problem, refusalAnswer(problem));
    if (plugin.unprotected.entryFor(request.method, request.path) !== undefined) return UNCHECKED;
    return await decideRead(request);
  });

  const check = traced(async (raw: RawRequest): Promise<AccessOutcome> => {
    let read: ReturnType<typeof readRequest>;
    try {
      read = readRequest(raw);
    } catch (error) {
      return unchecked(error);
    }
    if (!read.ok) return withCallback(read.problem, refusalAnswer(read.problem));
    if (plugin.unprotected.entryFor(read.request.method, read.request.path) !== undefined) return UNCHECKED;
    // Awaited, not returned: an async function that returns a promise takes two turns more to adopt it.
    return await decideRead(read.request);
  });

  const close = (): Promise<void> => {
    closing ??= (async () => {
      try {
        await Promise.all(givingBack);
        const done = await parts().catch(() => undefined);
        if (done?.reporting) await done.reporting.close();
        for (const platform of done?.platforms ?? []) platform.close();
      } finally {
        if (redis) await redis.quit().catch(() => redis.disconnect());
      }
    })();
    return closing;
  };

  const control: AccessControl = {
    check,
    decide,
    express: () => expressMiddleware(control),
    fastify: fastifyPlugin(() => control),
    hono: () => honoMiddleware(control),
    functionUrl: (handler) => wrapFunctionUrl(control, handler),
    close,
  };
  return control;
}

/** Built field by field, not spread: one object per allowed call, on the hot path. */
function grantOf(
  decision: Exclude<AccessDecision, { effect: 'unauthorized' }>,
  limit: FlatLimit | undefined,
): AccessGrant {
  const grant: { -readonly [K in keyof AccessGrant]: AccessGrant[K] } = {
    checked: true,
    plan: decision.plan,
    metrics: decision.metrics === '' ? [] : decision.metrics.split(','),
  };
  if (decision.applicationId !== undefined) grant.applicationId = decision.applicationId;
  if (limit !== undefined) {
    const { limitMetric: metric, limitPeriod: period, limit: max, remaining, reset } = limit;
    grant.limit =
      reset === undefined
        ? { metric, period, max, remaining }
        : { metric, period, max, remaining, resetSeconds: reset };
  }
  return grant;
}

interface Ports {
  readonly redis: RedisConnection | undefined;
  readonly logger: LogPort;
  readonly metrics: MetricsPort;
  readonly now: () => number;
}

async function buildParts(plugin: PluginConfig, ports: Ports): Promise<Parts> {
  const credential = await platformCredentialOf(plugin.access);
  const config: AccessConfig = { ...plugin.access, platformCredential: credential };
  const platform = platformClientFromConfig(config, credential, { caller: 'authorizer' });
  const reporter = platformClientFromConfig(config, credential, { caller: 'reporter' });
  const traced = (client: PlatformClient): PlatformPort => (plugin.tracing ? tracedPlatform(client) : client);
  const port = traced(platform);
  const { redis, logger, metrics, now } = ports;
  const reporting =
    redis &&
    REPORTING_MODES[plugin.reporting].start({
      config,
      redis,
      platform: traced(reporter),
      now,
      logger,
      metrics,
      sweepIntervalMs: plugin.sweepIntervalMs,
      snsClient: plugin.snsClient,
    });
  const access = createAccessAuthorizer({
    config,
    ...(redis && { redis }),
    ...(reporting && { publisher: reporting.publisher }),
    platform: port,
    now,
    logger,
    metrics,
  });
  return { access, config, platforms: [platform, reporter], reporting };
}
