/**
 * The SOAP proxy's own cost per call beside the REST hot path, in one run on one real redis-server:
 * `rest` is the access core deciding `POST /GetQuote` for a key with a snapshot (one script, one round
 * trip), `soap` the proxy on the same core (read the envelope, take credential and method from its header,
 * decide, answer) with a backend port that answers at once. The difference is what the proxy adds.
 * `npx tsx bench/soap.ts [--quick]`. Nothing is asserted.
 */
import { performance } from 'node:perf_hooks';
import { AccessAuthorizer } from '../lambdas/core/access';
import { parseConfig } from '../lambdas/core/config';
import { silentMetrics } from '../lambdas/core/observability';
import { createRedisClient, ensureConnected } from '../lambdas/core/redis-client';
import { createSoapProxy, decideWithAccessCore } from '../lambdas/core/soap/proxy';
import { startRedisServer } from '../local/redis';
import { authorized, CapturingLogger, FakePlatform } from '../test/unit/core/fakes';
import { envelope, KEY, request, soapSettings } from '../test/unit/soap/fixtures';

const quick = process.argv.includes('--quick');
const CALLS = quick ? 2_000 : 20_000;
const WARMUP = quick ? 200 : 2_000;

function percentile(sorted: readonly number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? Number.NaN;
}

async function timed(calls: number, one: () => Promise<unknown>) {
  const times: number[] = [];
  for (let i = 0; i < calls; i++) {
    const start = performance.now();
    await one();
    times.push(performance.now() - start);
  }
  times.sort((a, b) => a - b);
  const mean = times.reduce((sum, time) => sum + time, 0) / times.length;
  return { p50: percentile(times, 50), p99: percentile(times, 99), mean };
}

async function main() {
  const server = await startRedisServer('/usr/bin/redis-server');
  const redis = createRedisClient({ host: server.host, port: server.port, tls: false });
  try {
    await ensureConnected(redis);
    const platform = new FakePlatform();
    platform.authrepAnswer = () => authorized();
    const core = new AccessAuthorizer({
      config: parseConfig({
        serviceId: '2555417735060',
        platformCredential: 'pk-bench',
        mappingRules: [{ method: 'POST', pattern: '/GetQuote', metric: 'hits', delta: 1 }],
        reportWindowSeconds: 900,
      }),
      redis,
      publisher: { publish: async () => undefined },
      platform,
      now: Date.now,
      logger: new CapturingLogger(),
      metrics: silentMetrics,
    });
    const answer = Buffer.from(envelope({ body: '<q:GetQuoteResponse xmlns:q="urn:q"/>' }));
    const proxy = createSoapProxy({
      settings: soapSettings({ soapBackendUrl: 'https://backend.invalid/soap' }),
      credentialMode: 'user_key',
      decide: decideWithAccessCore(core),
      forward: async () => ({ ok: true, status: 200, contentType: 'text/xml', body: answer }),
      logger: new CapturingLogger(),
      metrics: silentMetrics,
    });
    const restCall = () =>
      core.decideCall({
        credential: { kind: 'user_key', userKey: KEY },
        method: 'POST',
        path: '/GetQuote',
        query: {},
      });
    const soapRequest = request(
      envelope({
        header: `<t:ApiKey>${KEY}</t:ApiKey><t:method>GetQuote</t:method>`,
        body: '<q:GetQuote xmlns:q="urn:example:quotes"><q:symbol>ACME</q:symbol></q:GetQuote>',
      }),
    );
    const soapCall = async () => {
      const result = await proxy(soapRequest);
      if (result.statusCode !== 200)
        throw new Error(`soap call refused: ${result.statusCode} ${result.body}`);
    };
    // The first call asks the platform and stores the snapshot: every measured call is a cache hit.
    await restCall();
    await timed(WARMUP, restCall);
    await timed(WARMUP, soapCall);
    // Alternate halves so load on the machine falls on both alike.
    const rest1 = await timed(CALLS / 2, restCall);
    const soap1 = await timed(CALLS / 2, soapCall);
    const rest2 = await timed(CALLS / 2, restCall);
    const soap2 = await timed(CALLS / 2, soapCall);
    const avg = (a: { p50: number; p99: number; mean: number }, b: typeof a) => ({
      p50: (a.p50 + b.p50) / 2,
      p99: (a.p99 + b.p99) / 2,
      mean: (a.mean + b.mean) / 2,
    });
    const rest = avg(rest1, rest2);
    const soap = avg(soap1, soap2);
    const ms = (value: number) => `${value.toFixed(3)} ms`;
    console.log(`soap workload: ${CALLS} calls each, one key with a snapshot, real redis-server`);
    console.log(
      `  rest hot path (core decide)     p50 ${ms(rest.p50)}  p99 ${ms(rest.p99)}  mean ${ms(rest.mean)}`,
    );
    console.log(
      `  soap proxy (parse + decide)     p50 ${ms(soap.p50)}  p99 ${ms(soap.p99)}  mean ${ms(soap.mean)}`,
    );
    console.log(
      `  proxy overhead per call         p50 ${ms(soap.p50 - rest.p50)}  mean ${ms(soap.mean - rest.mean)}`,
    );
    console.log(`  platform calls: ${platform.calls.length} (the first call only)`);
  } finally {
    redis.disconnect();
    await server.stop();
  }
}

void main().catch((error) => {
  console.error(error);
  process.exitCode = 1;
});
