/**
 * The plugin: one object per process, built from settings, that decides each call with the core
 * (core/decision/access.ts) on the same Redis keys and scripts as the authorizer, and answers the way
 * HTTP means (answers.ts, outcome.ts). The framework adapters (frameworks/) are thin: they read their
 * request, call `check`, send a refusal or go on, and, when the call's end matters, settle it once the
 * handler has answered.
 *
 * It never throws into the application: Redis down or the platform down is the failure mode's to
 * decide (the core), and any other error answers 500 "access check unavailable", or lets the call
 * through when the failure mode is `allow`.
 */
import { ensureConnected, type RedisConnection } from '../core/budget/redis-client';
import {
  errorMessage,
  type LogPort,
  type MetricsPort,
  silentLogger,
  silentMetrics,
} from '../core/observability/observability';
import { refusalAnswer } from './answers';
import { type ExpressMiddleware, expressMiddleware } from './frameworks/express';
import { type FastifyAccessPlugin, fastifyPlugin } from './frameworks/fastify';
import { type FunctionUrlHandler, type FunctionUrlResult, wrapFunctionUrl } from './frameworks/function-url';
import { type HonoMiddleware, honoMiddleware } from './frameworks/hono';
import { GiveBacks } from './give-backs';
import { type AccessOutcome, UNCHECKED, Verdicts } from './outcome';
import { PluginParts } from './parts';
import { connectionOf } from './redis';
import { type AccessRequest, problemOf, type RawRequest, readRequest } from './request';
import { type AccessControlSettings, pluginConfigOf } from './settings';
import { inSpan, traceRedisScripts } from './tracing';

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

/** Settings that fail to build the plugin throw here, a ConfigError naming the setting. */
export function createAccessControl(settings: AccessControlSettings): AccessControl {
  const plugin = pluginConfigOf(settings);
  const logger: LogPort = settings.logger ?? silentLogger;
  const metrics: MetricsPort = settings.metrics ?? silentMetrics;
  const now = settings.now ?? Date.now;
  const redis: RedisConnection | undefined = plugin.redis && connectionOf(plugin.redis, logger);
  if (redis && plugin.tracing) traceRedisScripts(redis);
  const parts = new PluginParts(plugin, { redis, logger, metrics, now });
  const giveBacks = new GiveBacks(logger);
  const verdicts = new Verdicts(plugin, logger, now, giveBacks);
  let closing: Promise<void> | undefined;

  // Connect and read the secret now, so the first call does not pay for them; failures show on a call.
  if (redis) void ensureConnected(redis).catch(() => undefined);
  void parts
    .get()
    .catch((error: unknown) => logger.error('access control cannot start', { error: errorMessage(error) }));

  const decideRead = async (request: AccessRequest): Promise<AccessOutcome> => {
    try {
      // Once built, a call decides without waiting on the parts' promise (one microtask hop fewer).
      const built = parts.ready ?? (await parts.get());
      return await verdicts.of(await built.access.decide(request), built);
    } catch (error) {
      return verdicts.unchecked(error);
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

  const unprotected = (request: AccessRequest) =>
    plugin.unprotected.entryFor(request.method, request.path) !== undefined;

  const decide = traced(async (request: AccessRequest): Promise<AccessOutcome> => {
    const problem = problemOf(request);
    if (problem !== undefined) return verdicts.refusal(problem, refusalAnswer(problem));
    if (unprotected(request)) return UNCHECKED;
    return await decideRead(request);
  });

  const check = traced(async (raw: RawRequest): Promise<AccessOutcome> => {
    let read: ReturnType<typeof readRequest>;
    try {
      read = readRequest(raw);
    } catch (error) {
      return verdicts.unchecked(error);
    }
    if (!read.ok) return verdicts.refusal(read.problem, refusalAnswer(read.problem));
    if (unprotected(read.request)) return UNCHECKED;
    // Awaited, not returned: an async function that returns a promise takes two turns more to adopt it.
    return await decideRead(read.request);
  });

  const close = (): Promise<void> => {
    closing ??= (async () => {
      try {
        await giveBacks.done();
        const done = await parts.get().catch(() => undefined);
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
