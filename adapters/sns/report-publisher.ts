/**
 * The core's report port over SNS: the report message goes to the stack's topic, as the authorizer and
 * the SOAP proxy publish it (SQS delivers it to the reporter one report window later).
 */
import { AccessAuthorizer, type AccessAuthorizerDeps } from '../../core/decision/access';
import { encodeReportMessage, type ReportPublisher } from '../../core/reporting/message';
import { PUBLISH_TIMEOUT_MS, publishWithin, type SnsClientSource } from './client';

export function snsReportPublisher(
  sns: SnsClientSource,
  topicArn: string,
  timeoutMs = PUBLISH_TIMEOUT_MS,
): ReportPublisher {
  return {
    publish: (message) =>
      publishWithin(sns, { TopicArn: topicArn, Message: encodeReportMessage(message) }, timeoutMs),
  };
}

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
