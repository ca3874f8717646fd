/**
 * Throttles through the local gateway (REQUEST authorizer, policy, echo backend) on a real Redis: one
 * redis-server, and the local Redis Cluster. One application on a plan throttled at rate 10 and burst
 * 20: once its first call has been answered and the bucket rested, 200 concurrent calls give 20 allowed
 * (exactly, when they all reach Redis within one emission interval; one more per 100 ms the burst lasts
 * on a loaded machine), then paced calls are allowed 10 per second. The platform then counts exactly the allowed calls: the
 * throttled ones never reach it. Through the gateway's authorizer and through the code plugin alike
 * (test/e2e/access-paths.ts). docs/throttling.md.
 */
import http from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { type LocalStack, startLocalStack } from '../../local/stack';
import { type AccessPath, AUTHORIZER_AND_PLUGIN, stopPluginApps } from '../e2e/access-paths';
import { IN_PROCESS_COMMAND_TIMEOUT_MS } from '../e2e/fixtures';
import { describeOnTopologies, REAL_REDIS_TOPOLOGIES } from '../support/redis-topology';
import { SERVICE_ID, serviceFixture } from './support/fixture';
import {
  BURST,
  CONCURRENT,
  expectThrottled,
  measureThrottle,
  PACED_SECONDS,
  RATE,
  throttledStack,
} from './support/throttle-traffic';

const agent = new http.Agent({ keepAlive: true, maxSockets: CONCURRENT });
afterAll(() => agent.destroy());

function get(url: string, key: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const request = http.get(url, { agent, headers: { apikey: key }, timeout: 10_000 }, (response) => {
      let body = '';
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => {
        body += chunk;
      });
      response.on('end', () => resolve({ status: response.statusCode ?? 0, body }));
    });
    request.on('timeout', () => request.destroy(new Error('no answer within 10 s')));
    request.on('error', reject);
  });
}

/** What each path's refusal body says of the throttle. */
const THROTTLE_REFUSAL: Readonly<Record<AccessPath['name'], object>> = {
  rest: { reason: 'rate_limited', max: String(BURST), period: 'second', reset: '1' },
  http: { reason: 'rate_limited', max: String(BURST), period: 'second', reset: '1' },
  plugin: { reason: 'rate_limited', limit: BURST, limitPeriod: 'second', reset: 1 },
};

describeOnTopologies(REAL_REDIS_TOPOLOGIES, (redis) => {
  let stack: LocalStack | undefined;
  afterEach(async () => {
    await stopPluginApps();
    await stack?.stop();
    stack = undefined;
    // Each path starts from an empty Redis: the same service and application run on both.
    await redis().flushAll();
  });

  describe.each(AUTHORIZER_AND_PLUGIN)('a plan throttled at rate 10, burst 20 ($name)', (path) => {
    it('allows 20 of 200 concurrent calls (one more per 100 ms they take), then 10 a second; the platform counts only the allowed', {
      timeout: 60_000,
    }, async () => {
      const fixture = serviceFixture(1);
      const cluster = redis().cluster;
      stack = await startLocalStack({
        ...throttledStack(
          fixture,
          cluster
            ? { cluster: cluster.nodes.map(({ host, port }) => ({ host, port })) }
            : { host: redis().settings.host, port: redis().settings.port },
        ),
        // A Redis call timed out under the burst goes to the platform unthrottled, as designed: not under test.
        redisCommandTimeoutMs: IN_PROCESS_COMMAND_TIMEOUT_MS,
      });
      const gatewayUrl = await path.urlOf(stack);
      const key = fixture.active[0]?.userKey ?? '';
      // Not measured: the connections of the burst, opened on a route that matches nothing (404), and the
      // application's first call (the platform's answer, and the loading it brings); then the bucket rests.
      await Promise.all(Array.from({ length: CONCURRENT }, () => get(`${gatewayUrl}/warm-up`, key)));
      expect((await get(`${gatewayUrl}/v1/words/first.json`, key)).status).toBe(200);
      await sleep((BURST / RATE) * 1000);
      const refusals: string[] = [];
      const traffic = await measureThrottle(
        async () => {
          const { status, body } = await get(`${gatewayUrl}/v1/words/hello.json`, key);
          if (status === 200) return true;
          if (status !== path.refusedLimit) throw new Error(`unexpected ${status}: ${body}`);
          if (refusals.length === 0) refusals.push(body);
          return false;
        },
        { burst: CONCURRENT, seconds: PACED_SECONDS, paceMs: 10 },
      );
      console.log(`[throttling on ${redis().topology}] ${JSON.stringify(traffic)}`);
      expectThrottled(traffic);
      expect(JSON.parse(refusals[0] ?? '{}')).toMatchObject(THROTTLE_REFUSAL[path.name]);
      const allowed = 1 + traffic.burstAllowed + traffic.perSecond.reduce((sum, count) => sum + count, 0);
      const calls = path.counts(stack);
      await stack.flush();
      const platform = stack.platform;
      const app = fixture.active[0];
      if (!platform || !app) throw new Error('no local platform');
      // Calls answered after the last second counted are allowed too: the platform may count a few more.
      const reported = platform.usage(SERVICE_ID, app.id, 'hits', 'eternity');
      expect(reported).toBe(calls.Allowed ?? 0);
      expect(reported).toBeGreaterThanOrEqual(allowed);
      expect(calls.RateLimited ?? 0).toBeGreaterThan(0);
    });
  });
});
