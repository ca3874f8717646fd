/** The core's alert port over SNS: each usage alert published to the alerts topic. */
import type { SNSClient } from '@aws-sdk/client-sns';
import { type AlertPublisher, alertPublishInput } from '../../core/reporting/alerts';
import { PUBLISH_TIMEOUT_MS, publishWithin } from './client';

export function snsAlertPublisher(
  sns: SNSClient,
  topicArn: string,
  timeoutMs = PUBLISH_TIMEOUT_MS,
): AlertPublisher {
  return {
    publish: (alert) => publishWithin(sns, alertPublishInput(topicArn, alert), timeoutMs),
  };
}
