/**
 * The hot key's CloudWatch Logs bytes per authorization, logged as now and as before (log-bytes.ts), on an
 * authorizer of its own: the hot key's snapshot is primed first, so every measured call is a hit.
 */
import type { APIGatewayRequestAuthorizerEvent } from 'aws-lambda';
import { createMetrics } from '../adapters/powertools/observability';
import { createRedisClient } from '../core/budget/redis-client';
import { silentLogger } from '../core/observability/observability';
import { platformClientFromConfig } from '../core/platform/client';
import type { AccessConfig } from '../core/settings/config';
import { AUTHORIZER_SERVICE_NAME, createAuthorizerHandler } from '../lambdas/authorizer/handler';
import { accessConfig } from './authorizer-system';
import { BENCH_PROVIDER_KEY, keyOf, traffic } from './fixture';
import { type HotAuthorizer, LOGGING_BEFORE, LOGGING_NOW, type LogBytes, measureLogBytes } from './log-bytes';
import { createSnsClientWithLatency } from './sns-client';
import type { Servers, SystemOptions } from './system';
import { SETUPS } from './workloads';

/** Calls of the log bytes measure (issue 34), one at a time, for each logging set-up. */
const LOG_BYTES_CALLS = { full: 10_000, quick: 2_000 } as const;

export async function hotLogBytes(
  servers: Servers,
  options: SystemOptions,
  quick: boolean,
): Promise<{ readonly now: LogBytes; readonly before: LogBytes }> {
  const name = 'bench-log-bytes';
  const config = accessConfig(servers, servers.redis, name, SETUPS.rest, options.reportWindowSeconds);
  // Its report messages are not the measure: the topic takes them and drops them.
  servers.sns.addTopic(`${name}-reports`, () => undefined);
  const redis = createRedisClient(config.redis as NonNullable<AccessConfig['redis']>);
  const sns = createSnsClientWithLatency(servers.sns.url, options.snsLatencyMs);
  const platform = platformClientFromConfig(config, BENCH_PROVIDER_KEY);
  const [event] = traffic([keyOf('project', 'hot', 'measured', 0)], 1, 1).events;
  const hot: HotAuthorizer = (ports) => {
    const authorize = createAuthorizerHandler({ config, redis, sns, platform, ...ports });
    return () => authorize(event as APIGatewayRequestAuthorizerEvent);
  };
  try {
    await hot({ logger: silentLogger, metrics: createMetrics(AUTHORIZER_SERVICE_NAME) })(0);
    const calls = LOG_BYTES_CALLS[quick ? 'quick' : 'full'];
    const before = await measureLogBytes(hot, LOGGING_BEFORE, calls, AUTHORIZER_SERVICE_NAME);
    const now = await measureLogBytes(hot, LOGGING_NOW, calls, AUTHORIZER_SERVICE_NAME);
    return { now, before };
  } finally {
    redis.disconnect();
    platform.close();
    sns.destroy();
  }
}
