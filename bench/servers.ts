/**
 * The servers every workload of a run shares: the single redis-server, the local platform twice (answering
 * at once, and after the run's platform latency), the SNS endpoint and the token issuer.
 */
import { startPlatform } from '../local/platform';
import { startSnsEndpoint } from '../local/sns-endpoint';
import { type BenchServiceId, benchPlatformConfig } from './fixture';
import type { Placement } from './placement';
import { startSingle, stopRedis } from './redis-under-test';
import type { Servers } from './system';
import { startTokenIssuer } from './token-issuer';

/** The platforms (at once, and at the run's latency) with the run's applications on their services. */
export async function startServers(
  applications: Partial<Record<BenchServiceId, string[]>>,
  overLimit: ReadonlySet<string>,
  placement: Placement | undefined,
  platformLatencyMs: number,
): Promise<Servers> {
  const redis = await startSingle(placement);
  const config = benchPlatformConfig(applications, overLimit);
  const platform = await startPlatform({ config, port: 0 });
  const distantPlatform = await startPlatform({ config, port: 0, latencyMs: platformLatencyMs });
  const sns = await startSnsEndpoint();
  const issuer = await startTokenIssuer(platform.url);
  return { redis, platform, distantPlatform, sns, issuer };
}

export async function stopServers(servers: Servers): Promise<void> {
  await servers.issuer.stop();
  await servers.sns.stop();
  await servers.platform.stop();
  await servers.distantPlatform.stop();
  await stopRedis(servers.redis);
}
