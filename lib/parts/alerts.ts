import type { Function as LambdaFunction } from 'aws-cdk-lib/aws-lambda';
import { Secret } from 'aws-cdk-lib/aws-secretsmanager';
import type { ITopic } from 'aws-cdk-lib/aws-sns';
import { EmailSubscription } from 'aws-cdk-lib/aws-sns-subscriptions';
import type { Construct } from 'constructs';
import { METRIC } from '../../core/observability/metric-names';
import { type AccessConfig, ConfigError, ENV } from '../../core/settings/config';
import { acknowledgeNagRules } from '../nag-acknowledgements';
import { accessMetric } from './alarms';
import type { AccessPart, AlarmSpec } from './part';
import { tlsOnlyTopic } from './tls-only-topic';

export interface UsageAlertsProps {
  /** The validated settings: `alertLevels` (empty: no alerts) and `alertEmails`. */
  readonly config: AccessConfig;
  /** The functions that publish alerts: the reporter and the sweep (both flush, so both observe). */
  readonly publishers: readonly LambdaFunction[];
  /** @default a new topic that accepts only TLS publishers */
  readonly topic?: ITopic;
}

/** Why an alert's e-mail subscription has no dead-letter queue (cdk-nag's Serverless-SNSRedrivePolicy). */
const NOTHING_TO_REPLAY =
  'An e-mail that cannot be delivered has nothing to replay: every alert is in the reporter logs ("usage alert published") and SNS retries delivery by its own policy.';

/**
 * The usage alerts topic (docs/alerts.md): one message per alert, published by the reporter and the sweep
 * only, with the addresses of `alertEmails` subscribed (each confirms the subscription first).
 * `UsageAlerts.of` gives no part when `alertLevels` is empty: alerts are off, there is no topic.
 */
export class UsageAlerts implements AccessPart {
  public readonly alarms: readonly AlarmSpec[];
  public readonly topic: ITopic;

  /** The part, or undefined when alerts are off; settings that need the topic are refused then. */
  public static of(scope: Construct, props: UsageAlertsProps): UsageAlerts | undefined {
    const { alertLevels, alertEmails } = props.config;
    if (alertLevels.length > 0) return new UsageAlerts(scope, props);
    if (alertEmails.length > 0) {
      throw new ConfigError(
        'alertEmails',
        'subscribe to the alerts topic, and alertLevels is [] (alerts off, no topic): set alertLevels or drop alertEmails',
      );
    }
    if (props.topic) {
      throw new ConfigError(
        'alertsTopic',
        'is given, and alertLevels is [] (alerts off): set alertLevels or drop alertsTopic',
      );
    }
    return undefined;
  }

  private constructor(scope: Construct, props: UsageAlertsProps) {
    this.topic = props.topic ?? tlsOnlyTopic(scope, 'AlertsTopic', { displayName: 'API usage alerts' });
    for (const address of props.config.alertEmails) {
      const subscription = this.topic.addSubscription(new EmailSubscription(address));
      acknowledgeNagRules(subscription, [{ id: 'Serverless-SNSRedrivePolicy', reason: NOTHING_TO_REPLAY }]);
    }
    // The admin token that names user_key applications in alerts: read by the publishers only.
    const { adminTokenSecretArn } = props.config;
    const adminToken =
      adminTokenSecretArn === undefined
        ? undefined
        : Secret.fromSecretCompleteArn(scope, 'AdminAccessToken', adminTokenSecretArn);
    for (const fn of props.publishers) {
      fn.addEnvironment(ENV.alertsTopicArn, this.topic.topicArn);
      this.topic.grantPublish(fn);
      adminToken?.grantRead(fn);
    }
    this.alarms = [
      {
        id: 'AlertPublishFailed',
        description:
          'Usage alerts could not be published (SNS refused or timed out) or settled (Redis): they are kept in Redis and retried with the next report cycle. Read the reporter logs; a lasting failure means the reporter cannot publish to the alerts topic.',
        metric: accessMetric('reporter', METRIC.alertPublishFailed, props.config.metricsInstance),
        threshold: 1,
      },
    ];
  }
}
