/**
 * SNS reporting: the report message goes to the deployed stack's topic, as the authorizer publishes it,
 * and the stack's reporter Lambda reports the usage. The AWS SDK is loaded on the first publish only,
 * so an application in another mode never loads it. A client the plugin built is destroyed on close; a
 * client the application gave is left to it.
 */
import type { SNSClient } from '@aws-sdk/client-sns';
import { SNS_CLIENT_SETTINGS, snsClientOnFirstUse } from '../../adapters/sns/client';
import { snsReportPublisher } from '../../adapters/sns/report-publisher';
import { ConfigError } from '../../core/settings/config';
import type { ReportingMode } from '.';

export const snsReporting: ReportingMode = {
  start({ config, snsClient }) {
    if (config.topicArn === undefined) {
      throw new ConfigError(
        'topicArn',
        'is required with reporting sns: report messages are published to it',
      );
    }
    let built: Promise<SNSClient> | undefined;
    const ownClient = snsClientOnFirstUse(SNS_CLIENT_SETTINGS);
    const source =
      snsClient ??
      (() => {
        built = ownClient();
        return built;
      });
    return {
      publisher: snsReportPublisher(source, config.topicArn),
      // The reporter Lambda reports what is pending; nothing is held here but the client.
      close: async () => {
        (await built?.catch(() => undefined))?.destroy();
      },
    };
  },
};
