/**
 * The access authorizer as the Lambdas that decide calls build it, publishing report messages to SNS.
 * Apart from access.ts so that the decision's own types name no AWS SDK type (the plugin's declarations
 * reach them, and the SDK is an optional peer of the plugin).
 */
import type { SnsClientSource } from '../reporting/sns-on-demand';
import { snsReportPublisher } from '../reporting/sns-publish';
import { AccessAuthorizer, type AccessAuthorizerDeps } from './access';

/**
 * The core as the Lambdas that decide calls (the authorizer, the SOAP proxy) build it: report
 * messages go to the configured topic through their SNS client.
 */
export function createAccessAuthorizerOnSns(
  deps: Omit<AccessAuthorizerDeps, 'publisher' | 'now'> & {
    readonly sns: SnsClientSource;
    /** Default Date.now. */
    readonly now?: () => number;
  },
): AccessAuthorizer {
  const { config, redis, sns, platform, logger, metrics } = deps;
  return new AccessAuthorizer({
    config,
    ...(redis && { redis }),
    ...(config.topicArn && { publisher: snsReportPublisher(sns, config.topicArn) }),
    platform,
    now: deps.now ?? Date.now,
    logger,
    metrics,
  });
}
