/**
 * Spans through @opentelemetry/api, the convention for libraries: without an SDK registered by the
 * application every call is a no-op. Off by default (`tracing: true` turns it on); off, nothing here
 * runs on the hot path. One span per decision (`access.decide`), with the platform calls
 * (`access.platform.<call>`) and the Redis scripts (`access.redis.<command>`) as its children.
 */
import { type Span, SpanStatusCode, trace } from '@opentelemetry/api';
import type { RedisConnection } from '../core/budget/redis-client';
import type { PlatformPort } from '../core/platform/types';

export const TRACER_NAME = 'apigw-access-management-plugin';

/** Runs `work` inside a span named `name`; an error ends the span as failed and goes on to the caller. */
export async function inSpan<T>(name: string, work: (span: Span) => Promise<T>): Promise<T> {
  return trace.getTracer(TRACER_NAME).startActiveSpan(name, async (span) => {
    try {
      return await work(span);
    } catch (error) {
      span.setStatus({
        code: SpanStatusCode.ERROR,
        message: error instanceof Error ? error.message : String(error),
      });
      throw error;
    } finally {
      span.end();
    }
  });
}

/** The platform port with a child span per call; the outcome's kind is the span's attribute. */
export function tracedPlatform(platform: PlatformPort): PlatformPort {
  return {
    authorize: (credential) =>
      inSpan('access.platform.authorize', async (span) => {
        const outcome = await platform.authorize(credential);
        span.setAttribute('access.outcome', outcome.kind);
        return outcome;
      }),
    authrep: (credential, usage) =>
      inSpan('access.platform.authrep', async (span) => {
        const outcome = await platform.authrep(credential, usage);
        span.setAttribute('access.outcome', outcome.kind);
        return outcome;
      }),
    report: (transactions) =>
      inSpan('access.platform.report', async (span) => {
        const outcome = await platform.report(transactions);
        span.setAttribute('access.outcome', outcome.kind);
        return outcome;
      }),
  };
}

/** Commands that run the budget's scripts: each gets a child span. */
const SCRIPT_COMMANDS = new Set(['evalsha', 'eval', 'evalsha_ro', 'eval_ro', 'fcall']);

/** Wraps the connection's command sender so each script run is a span under the current one. */
export function traceRedisScripts(redis: RedisConnection): void {
  const send = redis.sendCommand.bind(redis) as (
    command: { name: string; promise: Promise<unknown> },
    ...rest: unknown[]
  ) => unknown;
  (redis as { sendCommand: unknown }).sendCommand = (
    command: { name: string; promise: Promise<unknown> },
    ...rest: unknown[]
  ) => {
    if (!SCRIPT_COMMANDS.has(command.name)) return send(command, ...rest);
    const span = trace.getTracer(TRACER_NAME).startSpan(`access.redis.${command.name}`);
    command.promise.then(
      () => span.end(),
      (error: unknown) => {
        span.setStatus({
          code: SpanStatusCode.ERROR,
          message: error instanceof Error ? error.message : String(error),
        });
        span.end();
      },
    );
    return send(command, ...rest);
  };
}
