/**
 * Fuzz of the authorizer handler with real Redis, the local platform over HTTP and the local SNS
 * endpoint: 10,000 generated REQUEST events (missing, duplicate, oversized, binary and unicode keys;
 * odd paths and methods; huge headers). Invariants, per event:
 * - never an Allow for a key the platform did not issue to an active application;
 * - never a crash: only Error('Unauthorized') or a well-formed policy for exactly the methodArn;
 * - a malformed key gets 401 with zero Redis commands, platform requests and SNS requests (counted at
 *   the servers: INFO commandstats, the platform's stats(), the SNS endpoint's stats()).
 */
import { SNSClient } from '@aws-sdk/client-sns';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAuthorizerHandler } from '../../lambdas/authorizer/handler';
import { METRIC, silentLogger } from '../../lambdas/core/observability';
import { createPlatformClient, type PlatformClient } from '../../lambdas/core/platform/client';
import { createRedisClient, type RedisConnection } from '../../lambdas/core/redis-client';
import { type RunningPlatform, startPlatform } from '../../local/platform';
import {
  LOCAL_AWS_CREDENTIALS,
  LOCAL_REGION,
  type SnsEndpoint,
  startSnsEndpoint,
} from '../../local/sns-endpoint';
import { type Answer, type Authorizer, answerOf } from './support/answers';
import { countingMetrics } from './support/capture';
import { accessConfig, SERVICE_ID, type ServiceFixture, serviceFixture } from './support/fixture';
import { startTestRedis, type TestRedisServer } from './support/redis-server';
import { type GeneratedEvent, keyEvent, requestEvents } from './support/request-events';
import { reliabilitySeed } from './support/seed';

const EVENTS = 10_000;

let redisServer: TestRedisServer;
let platform: RunningPlatform;
let sns: SnsEndpoint;
let snsClient: SNSClient;
let platformClient: PlatformClient;
let redis: RedisConnection;
let fixture: ServiceFixture;
let authorizer: Authorizer;
const metrics = countingMetrics();
const logger = silentLogger;
const recurringUnknown = Array.from({ length: 20 }, (_, i) => `unknown:{${i}}*key`);

interface CallCounts {
  readonly redis: number;
  readonly platform: number;
  readonly sns: number;
}

async function callCounts(): Promise<CallCounts> {
  const stats = platform.stats();
  return {
    redis: await redisServer.commandsExecuted(),
    platform: stats.authorize + stats.authrep + stats.report,
    sns: sns.stats().requests,
  };
}

beforeAll(async () => {
  fixture = serviceFixture(4);
  redisServer = await startTestRedis();
  platform = await startPlatform({ config: fixture.platformConfig, port: 0 });
  sns = await startSnsEndpoint();
  const topicArn = sns.addTopic('fuzz-usage', () => undefined);
  snsClient = new SNSClient({ endpoint: sns.url, region: LOCAL_REGION, credentials: LOCAL_AWS_CREDENTIALS });
  const config = accessConfig({
    fixture,
    platformUrl: platform.url,
    redis: redisServer,
    topicArn,
    overrides: { reportWindowSeconds: 60 },
  });
  platformClient = createPlatformClient({
    serviceId: SERVICE_ID,
    serviceAuth: { kind: 'provider_key', providerKey: fixture.providerKey },
    baseUrl: platform.url,
    timeoutMs: config.platformTimeoutMs,
  });
  if (!config.redis) throw new Error('the fuzz config has no redis settings');
  redis = createRedisClient(config.redis, { logger });
  authorizer = createAuthorizerHandler({
    config,
    redis,
    sns: snsClient,
    platform: platformClient,
    logger,
    metrics,
  });
});

afterAll(async () => {
  redis?.disconnect();
  platformClient?.close();
  snsClient?.destroy();
  await sns?.stop();
  await platform?.stop();
  await redisServer?.stop();
});

function describeFailure(generated: GeneratedEvent, answer: Answer): string {
  const headers = JSON.stringify(generated.event.headers).slice(0, 300);
  const multi = JSON.stringify(generated.event.multiValueHeaders).slice(0, 300);
  return `${generated.category}${generated.flaw ? ` (${generated.flaw})` : ''} -> ${JSON.stringify(answer).slice(0, 500)}\nheaders ${headers}\nmulti ${multi}`;
}

describe('authorizer fuzz', () => {
  it(`holds its invariants for ${EVENTS} generated REQUEST events`, { timeout: 120_000 }, async () => {
    const seed = reliabilitySeed('authorizer fuzz');
    const active = new Set(fixture.active.map((app) => app.userKey));
    const keys = {
      active: fixture.active.map((app) => app.userKey),
      suspended: fixture.suspended.map((app) => app.userKey),
      recurringUnknown,
    };
    const tally = new Map<string, number>();
    const count = (label: string) => tally.set(label, (tally.get(label) ?? 0) + 1);
    const startedAt = performance.now();

    await fc.assert(
      fc.asyncProperty(requestEvents(keys), async (generated) => {
        const before = generated.category === 'malformed' ? await callCounts() : undefined;
        const answer = await answerOf(authorizer, generated.event);
        const why = describeFailure(generated, answer);
        count(
          `${generated.category} -> ${answer.kind}${answer.kind === 'deny' ? ` (${answer.reason})` : ''}`,
        );

        expect(answer.kind, why).not.toBe('crash');
        if (answer.kind === 'allow') expect(active.has(generated.key ?? ''), why).toBe(true);
        if (answer.kind === 'deny') expect(answer.reason, why).not.toBe('authorizer_error');
        switch (generated.category) {
          case 'malformed':
            expect(answer.kind, why).toBe('unauthorized');
            expect(await callCounts(), why).toEqual(before);
            break;
          case 'unknown':
            expect(answer.kind, why).toBe('unauthorized');
            break;
          case 'known':
            expect(answer.kind, why).toBe('allow');
            break;
          case 'suspended':
            expect(answer, why).toMatchObject({ kind: 'deny', reason: 'application_not_active' });
            break;
          case 'anyRoute':
            break;
        }
      }),
      { seed, numRuns: EVENTS, endOnFailure: true },
    );

    const seconds = (performance.now() - startedAt) / 1000;
    const lines = [...tally.entries()].sort((a, b) => b[1] - a[1]).map(([label, n]) => `  ${n} ${label}`);
    console.log(
      `[authorizer fuzz] ${EVENTS} events in ${seconds.toFixed(1)} s (${Math.round(EVENTS / seconds)} events/s)\n${lines.join('\n')}`,
    );
    expect(metrics.total(METRIC.authorizerError)).toBe(0);
    // Every category was generated and judged, so no invariant above passed for lack of cases.
    for (const category of ['malformed', 'unknown', 'known', 'suspended', 'anyRoute']) {
      expect(
        [...tally.keys()].some((label) => label.startsWith(`${category} ->`)),
        category,
      ).toBe(true);
    }
  });

  it('keeps a flood of one unknown key off the platform (negative cache)', async () => {
    const flooded = 'flood:{unknown}*key';
    expect(await answerOf(authorizer, keyEvent(flooded))).toEqual({ kind: 'unauthorized' });
    const before = platform.stats().authrep;
    for (let i = 0; i < 500; i++) {
      expect(await answerOf(authorizer, keyEvent(flooded, `w${i % 7}`))).toEqual({ kind: 'unauthorized' });
    }
    expect(platform.stats().authrep - before).toBe(0);
  });
});
