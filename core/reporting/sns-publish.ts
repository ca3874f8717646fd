/**
 * Publishing to SNS within a deadline: the report messages of message.ts, and the usage alerts. The SDK
 * is loaded on the first publish (sns-on-demand.ts).
 */
import type { PublishCommandInput, SNSClientConfig } from '@aws-sdk/client-sns';
import { encodeReportMessage, type ReportPublisher } from './message';
import { type SnsClientSource, snsClientOf, snsSdk } from './sns-on-demand';

/** Deadline of one publish, retries of the SDK included. */
export const PUBLISH_TIMEOUT_MS = 1000;

/** The SNS client's own deadlines, below the publish deadline. */
export const SNS_CLIENT_SETTINGS = {
  maxAttempts: 2,
  // Without throwOnRequestTimeout the SDK only warns when an attempt outlives requestTimeout, and the
  // first attempt would use up the whole publish deadline.
  requestHandler: { connectionTimeout: 300, requestTimeout: 500, throwOnRequestTimeout: true },
} as const satisfies SNSClientConfig;

/**
 * One SNS publish within `timeoutMs`, the SDK's retries included. The deadline starts once the SDK is
 * loaded: the first publish of a container pays the load on top (the bench prints it).
 */
export async function publishWithin(
  sns: SnsClientSource,
  input: PublishCommandInput,
  timeoutMs: number,
): Promise<void> {
  const [{ PublishCommand }, client] = await Promise.all([snsSdk(), snsClientOf(sns)]);
  await client.send(new PublishCommand(input), { abortSignal: AbortSignal.timeout(timeoutMs) });
}

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
