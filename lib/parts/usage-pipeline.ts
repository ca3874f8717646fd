import { Duration } from 'aws-cdk-lib';
import { Rule, type Schedule } from 'aws-cdk-lib/aws-events';
import { LambdaFunction as LambdaTarget } from 'aws-cdk-lib/aws-events-targets';
import type { Function as LambdaFunction } from 'aws-cdk-lib/aws-lambda';
import { SqsEventSource } from 'aws-cdk-lib/aws-lambda-event-sources';
import type { ITopic } from 'aws-cdk-lib/aws-sns';
import { SqsSubscription } from 'aws-cdk-lib/aws-sns-subscriptions';
import { Queue, QueueEncryption } from 'aws-cdk-lib/aws-sqs';
import type { Construct } from 'constructs';
import { METRIC } from '../../core/observability/metric-names';
import { acknowledgeNagRules } from '../nag-acknowledgements';
import { ALARM_PERIOD, accessMetric, sumOf } from './alarms';
import type { AccessPart, AlarmSpec } from './part';
import { type FunctionPartProps, partFunction } from './part-function';
import { tlsOnlyTopic } from './tls-only-topic';

const REPORTER_TIMEOUT = Duration.seconds(60);
const REPORTER_BATCHING_WINDOW = Duration.seconds(5);
const MAX_RECEIVE_COUNT = 5;

export interface UsagePipelineProps extends FunctionPartProps {
  /** @default a new topic that accepts only TLS publishers */
  readonly topic?: ITopic;
  /** When the sweep flushes usage whose message was lost. */
  readonly sweepSchedule: Schedule;
}

/**
 * Usage from the authorizer to the platform: an SNS topic, an SQS queue delayed by the report window with
 * a dead-letter queue, the reporter that reports each window's usage in batches, and the scheduled sweep
 * that reports usage whose message was lost.
 */
export class UsagePipeline implements AccessPart {
  public readonly alarms: readonly AlarmSpec[];
  public readonly topic: ITopic;
  /** Usage messages, delayed by the report window. */
  public readonly queue: Queue;
  /** Messages the reporter failed on MAX_RECEIVE_COUNT times, and messages SNS could not deliver. */
  public readonly deadLetterQueue: Queue;
  public readonly reporterFunction: LambdaFunction;
  public readonly sweepFunction: LambdaFunction;

  constructor(scope: Construct, props: UsagePipelineProps) {
    const { bindings } = props;
    this.topic = props.topic ?? tlsOnlyTopic(scope, 'UsageTopic', { displayName: 'API usage to report' });
    this.deadLetterQueue = new Queue(scope, 'UsageDeadLetterQueue', {
      retentionPeriod: Duration.days(14),
      encryption: QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
    });
    acknowledgeNagRules(this.deadLetterQueue, [
      { id: 'Serverless-SQSRedrivePolicy', reason: 'This is the dead-letter queue; it has no further one.' },
    ]);
    this.queue = new Queue(scope, 'UsageQueue', {
      deliveryDelay: Duration.seconds(bindings.config.reportWindowSeconds),
      visibilityTimeout: Duration.seconds(
        6 * REPORTER_TIMEOUT.toSeconds() + REPORTER_BATCHING_WINDOW.toSeconds(),
      ),
      deadLetterQueue: { queue: this.deadLetterQueue, maxReceiveCount: MAX_RECEIVE_COUNT },
      encryption: QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
    });
    // Raw delivery: the reporter parses the SQS body as the message the authorizer published.
    this.topic.addSubscription(
      new SqsSubscription(this.queue, { rawMessageDelivery: true, deadLetterQueue: this.deadLetterQueue }),
    );

    this.reporterFunction = partFunction(scope, 'ReporterFunction', props, {
      bundle: 'reporter',
      description: 'API usage reporter: reports pending usage to the platform and resyncs the cache',
      timeout: REPORTER_TIMEOUT,
    });
    this.reporterFunction.addEventSource(
      new SqsEventSource(this.queue, {
        batchSize: 100,
        maxBatchingWindow: REPORTER_BATCHING_WINDOW,
        reportBatchItemFailures: true,
      }),
    );

    this.sweepFunction = partFunction(scope, 'SweepFunction', props, {
      bundle: 'reporter',
      handler: 'sweepHandler',
      description: 'API usage sweep: reports pending usage whose message was lost',
      timeout: Duration.seconds(50),
    });
    const sweepSchedule = new Rule(scope, 'SweepSchedule', {
      description: 'Flushes pending API usage whose report message was lost',
      schedule: props.sweepSchedule,
      targets: [new LambdaTarget(this.sweepFunction)],
    });
    this.suppressServerlessFindings(sweepSchedule);
    this.alarms = this.pipelineAlarms(props.bindings.config.metricsInstance);
  }

  private pipelineAlarms(instance: string | undefined): AlarmSpec[] {
    return [
      {
        id: 'UsageDeadLetters',
        description:
          'Usage messages reached the dead-letter queue (the reporter failed on them 5 times, or SNS could not deliver them). The sweep still reports the usage they stand for; read the reporter logs for the cause.',
        metric: this.deadLetterQueue.metricApproximateNumberOfMessagesVisible({
          statistic: 'Maximum',
          period: ALARM_PERIOD,
        }),
        threshold: 1,
      },
      {
        id: 'ReporterErrors',
        description:
          'The reporter or the sweep failed (a start-up failure, a timeout): usage waits in Redis until they run again. Read their logs.',
        metric: sumOf('Reporter and sweep errors', [
          this.reporterFunction.metricErrors({ period: ALARM_PERIOD }),
          this.sweepFunction.metricErrors({ period: ALARM_PERIOD }),
        ]),
        threshold: 1,
      },
      {
        id: 'UsageRejected',
        description:
          'The platform refused reported usage of a metric it does not have: that usage is kept aside in Redis and never reported, so it is lost to billing and limits. The reporter log names the metric: add it at the platform, or fix the mapping rule.',
        metric: accessMetric('reporter', METRIC.usageRejected, instance),
        threshold: 1,
      },
    ];
  }

  private suppressServerlessFindings(sweepSchedule: Rule): void {
    acknowledgeNagRules(
      this.reporterFunction,
      [
        {
          id: 'Serverless-LambdaDLQ',
          reason:
            "The SQS event source invokes it synchronously; the queue's redrive policy is its dead-letter queue.",
        },
        {
          id: 'Serverless-LambdaEventSourceMappingDestination',
          reason:
            "SQS event sources take no on-failure destination; the queue's redrive policy moves failures to the DLQ.",
        },
      ],
      true,
    );
    const sweepCarriesNoPayload =
      'A scheduled sweep carries no payload: the next run, a minute later, does the same work.';
    acknowledgeNagRules(this.sweepFunction, [{ id: 'Serverless-LambdaDLQ', reason: sweepCarriesNoPayload }]);
    acknowledgeNagRules(sweepSchedule, [{ id: 'Serverless-EventBusDLQ', reason: sweepCarriesNoPayload }]);
  }
}
