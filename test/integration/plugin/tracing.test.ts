/**
 * Tracing through @opentelemetry/api: with `tracing: true` one span per decision, the Redis scripts and
 * the platform calls as its children; off, none at all. A recording tracer and an AsyncLocalStorage
 * context manager stand in for an application's SDK (the plugin depends on the API only).
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import {
  type Context,
  type ContextManager,
  context,
  ROOT_CONTEXT,
  type Span,
  type Tracer,
  type TracerProvider,
  trace,
} from '@opentelemetry/api';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type RunningPlatform, startPlatform } from '../../../local/platform';
import { type AccessControl, createAccessControl } from '../../../plugin';
import { startRedisTopology, type TestRedis } from '../../support/redis-topology';

interface Recorded {
  readonly name: string;
  readonly id: string;
  readonly parent: string | undefined;
  readonly attributes: Record<string, unknown>;
}

const recorded: Recorded[] = [];

class AsyncContextManager implements ContextManager {
  private readonly storage = new AsyncLocalStorage<Context>();
  active(): Context {
    return this.storage.getStore() ?? ROOT_CONTEXT;
  }
  with<A extends unknown[], F extends (...args: A) => ReturnType<F>>(
    ctx: Context,
    fn: F,
    thisArg?: ThisParameterType<F>,
    ...args: A
  ): ReturnType<F> {
    return this.storage.run(ctx, () => fn.call(thisArg, ...args));
  }
  bind<T>(_ctx: Context, target: T): T {
    return target;
  }
  enable(): this {
    return this;
  }
  disable(): this {
    return this;
  }
}

let next = 0;
function recordingSpan(name: string, parent: string | undefined): Span {
  const id = String(++next);
  const entry: Recorded = { name, id, parent, attributes: {} };
  const span = trace.wrapSpanContext({
    traceId: '1'.repeat(32),
    spanId: id.padStart(16, '0'),
    traceFlags: 1,
  });
  return Object.assign(Object.create(span) as Span, {
    setAttribute(key: string, value: unknown) {
      entry.attributes[key] = value;
      return this;
    },
    setStatus() {
      return this;
    },
    end() {
      recorded.push(entry);
    },
  });
}

const tracer: Tracer = {
  startSpan(name, _options, ctx = context.active()) {
    return recordingSpan(name, trace.getSpan(ctx)?.spanContext().spanId.replace(/^0+/, ''));
  },
  startActiveSpan(name: string, ...rest: unknown[]) {
    const fn = rest[rest.length - 1] as (span: Span) => unknown;
    const span = this.startSpan(name);
    return context.with(trace.setSpan(context.active(), span), () => fn(span));
  },
} as Tracer;

const provider: TracerProvider = { getTracer: () => tracer };

let redis: TestRedis;
let platform: RunningPlatform;
const controls: AccessControl[] = [];
beforeAll(async () => {
  context.setGlobalContextManager(new AsyncContextManager());
  trace.setGlobalTracerProvider(provider);
  redis = await startRedisTopology('redis-server');
  platform = await startPlatform({
    config: {
      services: [
        {
          id: 'svc-trace',
          providerKey: 'pk-trace',
          authentication: 'user_key',
          metrics: [{ name: 'hits' }],
          plans: [{ name: 'Roomy', limits: [{ metric: 'hits', period: 'hour', value: 1000 }] }],
          applications: [{ id: 'app-trace', userKey: 'key-trace', plan: 'Roomy' }],
        },
      ],
    },
  });
});
afterEach(async () => {
  await Promise.all(controls.splice(0).map((control) => control.close()));
  await redis.flushAll();
  recorded.length = 0;
});
afterAll(async () => {
  await platform.stop();
  await redis.stop();
  trace.disable();
  context.disable();
});

function plugin(tracing: boolean): AccessControl {
  const control = createAccessControl({
    serviceId: 'svc-trace',
    platformUrl: platform.url,
    platformCredential: 'pk-trace',
    redis: redis.settings,
    reporting: 'in-process',
    sweepIntervalMs: 0,
    tracing,
  });
  controls.push(control);
  return control;
}

const REQUEST = { method: 'GET', url: '/v1/words/w', headers: { apikey: 'key-trace' } };

describe('tracing', () => {
  it('records a span per decision with the platform call and the Redis script as its children', async () => {
    const control = plugin(true);
    expect((await control.check(REQUEST)).allowed).toBe(true);
    const decide = recorded.find((span) => span.name === 'access.decide');
    expect(decide).toMatchObject({ parent: undefined, attributes: { 'access.allowed': true } });
    const children = recorded.filter((span) => span.parent === decide?.id).map((span) => span.name);
    expect(children).toContain('access.platform.authrep');
    expect(children).toContain('access.redis.evalsha');
  });

  it('records nothing when off (the default)', async () => {
    const control = plugin(false);
    expect((await control.check(REQUEST)).allowed).toBe(true);
    expect((await control.check(REQUEST)).allowed).toBe(true);
    expect(recorded).toEqual([]);
  });
});
