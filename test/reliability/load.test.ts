/**
 * Load: the local gateway (REQUEST authorizer, policy, echo backend) with a real redis-server, the local
 * platform, the SNS endpoint and the timer-driven queue and reporter, held by 200 concurrent keep-alive
 * connections for 30 s (or a request cap, whichever comes first). Asserted: no transport error, no
 * 5xx, every answer the one expected for its key (200 for an active application, 403 for a suspended
 * one, 401 for a key never issued), and after a flush the platform counts exactly the 200s.
 * Printed, never asserted: the request count, the rate and the latency percentiles.
 */
import http from 'node:http';
import { afterAll, describe, expect, it } from 'vitest';
import { percentile } from '../../bench/stats';
import { type LocalStack, startLocalStack } from '../../local/stack';
import { ROUTES, SERVICE_ID, serviceFixture } from './support/fixture';
import { startTestRedis, type TestRedisServer } from './support/redis-server';

const CONNECTIONS = 200;
const DURATION_MS = 30_000;
const MAX_REQUESTS = 1_000_000;
const REQUEST_TIMEOUT_MS = 10_000;

let redis: TestRedisServer | undefined;
let stack: LocalStack | undefined;
const agent = new http.Agent({ keepAlive: true, maxSockets: CONNECTIONS });
/** Connections the client opened: a dropped connection would make the agent open another. */
let opened = 0;
const agentInternals = agent as unknown as { createConnection: (...args: unknown[]) => unknown };
const createConnection = agentInternals.createConnection.bind(agent);
agentInternals.createConnection = (...args: unknown[]) => {
  opened++;
  return createConnection(...args);
};

afterAll(async () => {
  agent.destroy();
  await stack?.stop();
  await redis?.stop();
});

function get(url: string, headers: Record<string, string>): Promise<number> {
  return new Promise((resolve, reject) => {
    const request = http.get(url, { agent, headers, timeout: REQUEST_TIMEOUT_MS }, (response) => {
      response.resume();
      response.on('end', () => resolve(response.statusCode ?? 0));
      response.on('error', reject);
    });
    request.on('timeout', () => request.destroy(new Error(`no answer within ${REQUEST_TIMEOUT_MS} ms`)));
    request.on('error', reject);
  });
}

describe('load', () => {
  it(`holds ${CONNECTIONS} concurrent connections for ${DURATION_MS / 1000} s without an error`, {
    timeout: 180_000,
  }, async () => {
    const fixture = serviceFixture(20);
    redis = await startTestRedis();
    stack = await startLocalStack({
      stack: {
        platform: fixture.platformConfig,
        gateway: {
          serviceId: SERVICE_ID,
          mappingRules: ROUTES,
          routes: ['GET /v1/words/{word}', 'GET /v1/sentences/{word}'],
        },
      },
      redis: { host: redis.host, port: redis.port },
      sweepIntervalMs: 0,
    });
    const baseUrl = stack.gatewayUrl;
    const platform = stack.platform;
    if (!platform) throw new Error('the stack started no local platform');

    const kinds = [
      ...fixture.active.map((app) => ({ key: app.userKey, expected: 200 })),
      ...fixture.suspended.map((app) => ({ key: app.userKey, expected: 403 })),
      { key: 'never:{issued}*load', expected: 401 },
    ];
    const latenciesMs: number[] = [];
    const byStatus = new Map<number, number>();
    const unexpected: string[] = [];
    const errors: string[] = [];
    // Warm-up, not measured: the first call of each key and route, and the module loading it brings.
    let warmUpOk = 0;
    for (const kind of kinds) {
      for (const collection of ['words', 'sentences']) {
        const status = await get(`${baseUrl}/v1/${collection}/warm.json`, { apikey: kind.key });
        expect(status).toBe(kind.expected);
        if (status === 200) warmUpOk++;
      }
    }
    opened = 0;
    let sent = 0;
    const startedAt = performance.now();
    const deadline = startedAt + DURATION_MS;

    const worker = async (id: number) => {
      let n = 0;
      while (performance.now() < deadline && sent < MAX_REQUESTS) {
        sent++;
        // Mostly active keys; one call in 25 suspended, one in 25 never issued.
        const pick =
          n % 25 === 7
            ? kinds.length - 2
            : n % 25 === 19
              ? kinds.length - 1
              : (id + n) % fixture.active.length;
        const kind = kinds[pick] ?? kinds[0];
        if (!kind) throw new Error('no request kinds');
        const collection = n % 3 === 0 ? 'sentences' : 'words';
        n++;
        const requestStartedAt = performance.now();
        try {
          const status = await get(`${baseUrl}/v1/${collection}/w${n % 50}.json`, { apikey: kind.key });
          latenciesMs.push(performance.now() - requestStartedAt);
          byStatus.set(status, (byStatus.get(status) ?? 0) + 1);
          if (status !== kind.expected && unexpected.length < 20) {
            unexpected.push(`${status} for a key expecting ${kind.expected}`);
          }
        } catch (error) {
          if (errors.length < 20) errors.push((error as Error).message);
          else errors.push('…');
        }
      }
    };
    await Promise.all(Array.from({ length: CONNECTIONS }, (_, id) => worker(id)));
    const seconds = (performance.now() - startedAt) / 1000;

    const sorted = Float64Array.from(latenciesMs).sort();
    const ok = byStatus.get(200) ?? 0;
    console.log(
      `[load] ${sent} requests in ${seconds.toFixed(1)} s over ${CONNECTIONS} connections ` +
        `(${Math.round(sent / seconds)} req/s); p50 ${percentile(sorted, 50).toFixed(1)} ms, ` +
        `p99 ${percentile(sorted, 99).toFixed(1)} ms, max ${percentile(sorted, 100).toFixed(1)} ms; ` +
        `statuses ${JSON.stringify(Object.fromEntries(byStatus))}; connections opened ${opened}; errors ${errors.length}`,
    );
    expect(errors).toEqual([]);
    expect(unexpected).toEqual([]);
    expect([...byStatus.keys()].filter((status) => status >= 500)).toEqual([]);
    expect(ok).toBeGreaterThan(0);
    // All 200 connections were open at once, and none had to be opened again (the warm-up's one is reused).
    expect(opened).toBeLessThanOrEqual(CONNECTIONS);
    expect(opened).toBeGreaterThanOrEqual(CONNECTIONS - 1);

    // Every 200 reaches the platform once the pending usage is flushed.
    const flushed = await stack.flush();
    expect(flushed).toEqual({ queued: 0, deadLetters: 0 });
    const reported = fixture.active.reduce(
      (sum, app) => sum + platform.usage(SERVICE_ID, app.id, 'hits', 'eternity'),
      0,
    );
    const allowed = ok + warmUpOk;
    console.log(
      `[load] allowed ${allowed}, reported to the platform ${reported}, difference ${reported - allowed}`,
    );
    expect(reported).toBe(allowed);
  });
});
