/**
 * The baseline reproduces the original design, or the comparison means nothing: a miss is one authrep
 * and one SET, a hit is one GET and one awaited SNS publish, and the report function makes one authrep
 * per message. Checked on a real redis-server, the local platform and the local SNS endpoint.
 */
import type { SNSClient } from '@aws-sdk/client-sns';
import type { SQSEvent } from 'aws-lambda';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createBaselineAuthorizer, createBaselineReporter } from '../../../bench/baseline';
import {
  authorizerEvent,
  BENCH_PROVIDER_KEY,
  BENCH_SERVICE_ID,
  benchPlatformConfig,
  ENDPOINTS,
  MAPPING_RULES,
} from '../../../bench/fixture';
import { countSentCommands } from '../../../bench/redis-counter';
import { createSnsClientWithLatency } from '../../../bench/sns-client';
import { createRedisClient, type RedisConnection } from '../../../core/budget/redis-client';
import type { PlatformClient } from '../../../core/platform/client';
import { platformClientFromConfig } from '../../../core/platform/client';
import { type AccessConfig, parseConfig } from '../../../core/settings/config';
import { type RunningPlatform, startPlatform } from '../../../local/platform';
import { findOnPath, type LocalRedis, startRedisServer } from '../../../local/redis';
import {
  type PublishedMessage,
  type SnsEndpoint,
  startSnsEndpoint,
  topicArn,
} from '../../../local/sns-endpoint';

const KEY = 'baseline-test-key';
const UNKNOWN_KEY = 'not-a-key-the-platform-knows';
const GET_WORD = ENDPOINTS[0] as (typeof ENDPOINTS)[number];

let redisServer: LocalRedis;
let platform: RunningPlatform;
let snsEndpoint: SnsEndpoint;
let redis: RedisConnection;
let sns: SNSClient;
let platformClient: PlatformClient;
let config: AccessConfig;
const published: PublishedMessage[] = [];

function platformCalls(): number {
  const { authorize, authrep, report } = platform.stats();
  return authorize + authrep + report;
}

beforeAll(async () => {
  redisServer = await startRedisServer(findOnPath('redis-server') ?? 'redis-server');
  platform = await startPlatform({ config: benchPlatformConfig({ [BENCH_SERVICE_ID]: [KEY] }) });
  snsEndpoint = await startSnsEndpoint();
  snsEndpoint.addTopic('baseline-test', (message) => published.push(message));
  config = parseConfig({
    serviceId: BENCH_SERVICE_ID,
    platformUrl: platform.url,
    platformCredential: BENCH_PROVIDER_KEY,
    mappingRules: MAPPING_RULES,
    redis: { host: redisServer.host, port: redisServer.port },
    topicArn: topicArn('baseline-test'),
  });
  redis = createRedisClient(config.redis as NonNullable<AccessConfig['redis']>);
  sns = createSnsClientWithLatency(snsEndpoint.url, 0);
  platformClient = platformClientFromConfig(config, BENCH_PROVIDER_KEY);
});

afterAll(async () => {
  redis?.disconnect();
  sns?.destroy();
  platformClient?.close();
  await snsEndpoint?.stop();
  await platform?.stop();
  await redisServer?.stop();
});

describe('the baseline (the original design)', () => {
  it('asks the platform on a miss, then answers hits from one GET and one publish each', async () => {
    const authorize = createBaselineAuthorizer({ config, redis, sns, platform: platformClient });
    const counter = countSentCommands(redis);
    const event = authorizerEvent(KEY, GET_WORD, 1);

    const first = await authorize(event);
    expect(first.policyDocument.Statement[0]).toMatchObject({ Effect: 'Allow', Resource: event.methodArn });
    expect(platform.stats().authrep).toBe(1);
    expect(published).toHaveLength(0);

    const sentAfterMiss = counter.sent();
    const callsAfterMiss = platformCalls();
    for (let i = 0; i < 3; i++) {
      expect((await authorize(event)).policyDocument.Statement[0]).toMatchObject({ Effect: 'Allow' });
    }
    expect(counter.sent() - sentAfterMiss).toBe(3);
    expect(platformCalls()).toBe(callsAfterMiss);
    expect(published).toHaveLength(3);
    expect(JSON.parse(published[0]?.message ?? '')).toEqual({
      credential: { kind: 'user_key', userKey: KEY },
      endpoint: 'GET /v1/words/{word}.json',
      usage: { get_word: 1 },
    });
  });

  it('reports one authrep per message, so the platform records every call', async () => {
    const report = createBaselineReporter({ config, redis, platform: platformClient });
    const before = platform.stats().authrep;
    const event = {
      Records: published.map((message, i) => ({ messageId: `m-${i}`, body: message.message })),
    } as SQSEvent;
    expect(await report(event)).toEqual({ batchItemFailures: [] });
    expect(platform.stats().authrep - before).toBe(published.length);
    expect(platform.usage(BENCH_SERVICE_ID, KEY, 'hits', 'eternity')).toBe(1 + published.length);
  });

  it('answers a key the platform does not know with 401, and caches nothing for it', async () => {
    const authorize = createBaselineAuthorizer({ config, redis, sns, platform: platformClient });
    const before = platform.stats().authrep;
    await expect(authorize(authorizerEvent(UNKNOWN_KEY, GET_WORD, 2))).rejects.toThrow('Unauthorized');
    await expect(authorize(authorizerEvent(UNKNOWN_KEY, GET_WORD, 3))).rejects.toThrow('Unauthorized');
    expect(platform.stats().authrep - before).toBe(2);
  });
});
