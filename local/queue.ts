/**
 * An in-memory SQS queue with a Lambda event source mapping in front of its consumer: messages become
 * visible after the delivery delay, are handed to the consumer in SQSEvent batches, and records the consumer
 * reports in `batchItemFailures` (all of them when it throws) come back after the visibility timeout, until
 * the max receive count moves them to the dead-letter list.
 */
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import type { SQSBatchResponse, SQSEvent, SQSMessageAttributes, SQSRecord } from 'aws-lambda';
import { LOCAL_ACCOUNT_ID, LOCAL_REGION, type SnsMessageAttribute } from './sns-endpoint';

/** The SenderId SQS shows on messages that SNS delivered. */
const SNS_SENDER_ID = 'AIDAIT2UOQQY3AUEKVGXU';
/** Lambda's SQS batch size default and the SQS receive maximum. */
export const MAX_BATCH_SIZE = 10;

/** A Lambda with ReportBatchItemFailures: it answers an SQSBatchResponse (or nothing: all succeeded). */
export type QueueConsumer = (event: SQSEvent) => Promise<unknown>;

export interface LocalQueueOptions {
  readonly name: string;
  readonly consumer: QueueConsumer;
  readonly deliveryDelayMs: number;
  readonly visibilityTimeoutMs: number;
  /** Receives after which a failing message moves to the dead-letter list (SQS redrive policy). */
  readonly maxReceiveCount: number;
  readonly batchSize?: number;
  /** Told about consumer errors; the queue itself never throws them. */
  readonly onConsumerError?: (error: unknown) => void;
}

export interface DeadLetter {
  readonly record: SQSRecord;
  readonly movedAt: number;
}

export interface LocalQueueStats {
  readonly sent: number;
  /** Messages waiting or being processed. */
  readonly queued: number;
  /** Batches handed to the consumer. */
  readonly batches: number;
  /** Messages the consumer finished successfully. */
  readonly deleted: number;
  /** Deliveries the consumer reported as failed (or threw on). */
  readonly failedDeliveries: number;
  readonly deadLetters: number;
}

interface QueuedMessage {
  readonly messageId: string;
  readonly body: string;
  readonly messageAttributes: SQSMessageAttributes;
  readonly sentAt: number;
  visibleAt: number;
  receiveCount: number;
  firstReceivedAt?: number;
}

function toSqsAttributes(attributes: Readonly<Record<string, SnsMessageAttribute>>): SQSMessageAttributes {
  return Object.fromEntries(
    Object.entries(attributes).map(([name, value]) => [
      name,
      {
        dataType: value.dataType,
        ...(value.stringValue !== undefined && { stringValue: value.stringValue }),
        ...(value.binaryValue !== undefined && { binaryValue: value.binaryValue }),
      },
    ]),
  );
}

export class LocalQueue {
  readonly arn: string;
  private readonly messages: QueuedMessage[] = [];
  private readonly deadLetterList: DeadLetter[] = [];
  private readonly batchSize: number;
  private timer: NodeJS.Timeout | undefined;
  private timerDueAt = Number.POSITIVE_INFINITY;
  /** Serializes deliveries: like one Lambda poller with concurrency 1, no record is processed twice at once. */
  private delivering: Promise<void> = Promise.resolve();
  private stopped = false;
  private counts = { sent: 0, batches: 0, deleted: 0, failedDeliveries: 0 };

  constructor(private readonly options: LocalQueueOptions) {
    this.arn = `arn:aws:sqs:${LOCAL_REGION}:${LOCAL_ACCOUNT_ID}:${options.name}`;
    this.batchSize = Math.min(Math.max(1, options.batchSize ?? MAX_BATCH_SIZE), MAX_BATCH_SIZE);
  }

  /** Enqueues a message (an SNS raw delivery); it becomes visible after the delivery delay. */
  send(body: string, attributes: Readonly<Record<string, SnsMessageAttribute>> = {}): string {
    if (this.stopped) throw new Error(`queue ${this.options.name} is stopped`);
    const now = Date.now();
    const message: QueuedMessage = {
      messageId: randomUUID(),
      body,
      messageAttributes: toSqsAttributes(attributes),
      sentAt: now,
      visibleAt: now + this.options.deliveryDelayMs,
      receiveCount: 0,
    };
    this.messages.push(message);
    this.counts.sent++;
    this.schedule();
    return message.messageId;
  }

  /**
   * Delivers every queued message now, ignoring delays and visibility timeouts, and redelivers failures at
   * once until each one succeeds or reaches the max receive count. Resolves when the queue is empty.
   */
  drain(): Promise<void> {
    return this.serialize(async () => {
      // Each round receives every message once, so maxReceiveCount rounds empty the queue.
      for (let round = 0; round < this.options.maxReceiveCount && this.messages.length > 0; round++) {
        await this.deliver(this.messages.slice());
      }
    });
  }

  /** Delivers every queued message once, now; failures wait for the visibility timeout as usual. */
  deliverNow(): Promise<void> {
    return this.serialize(() => this.deliver(this.messages.slice()));
  }

  deadLetters(): readonly DeadLetter[] {
    return this.deadLetterList;
  }

  stats(): LocalQueueStats {
    return { ...this.counts, queued: this.messages.length, deadLetters: this.deadLetterList.length };
  }

  /** Stops the timer and waits for a delivery in progress; queued messages stay where they are. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.clearTimer();
    await this.delivering;
  }

  private serialize(work: () => Promise<void>): Promise<void> {
    const run = this.delivering.then(work);
    this.delivering = run.catch(() => undefined);
    return run;
  }

  private clearTimer(): void {
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
    this.timerDueAt = Number.POSITIVE_INFINITY;
  }

  /** Arms one timer for the earliest message to become visible. */
  private schedule(): void {
    if (this.stopped || this.messages.length === 0) return;
    const dueAt = this.messages.reduce(
      (earliest, message) => Math.min(earliest, message.visibleAt),
      Infinity,
    );
    if (dueAt >= this.timerDueAt) return;
    this.clearTimer();
    this.timerDueAt = dueAt;
    this.timer = setTimeout(
      () => {
        this.timer = undefined;
        this.timerDueAt = Number.POSITIVE_INFINITY;
        void this.serialize(() => {
          const now = Date.now();
          return this.deliver(this.messages.filter((message) => message.visibleAt <= now));
        }).finally(() => this.schedule());
      },
      Math.max(0, dueAt - Date.now()),
    );
    this.timer.unref();
  }

  private async deliver(candidates: readonly QueuedMessage[]): Promise<void> {
    for (let start = 0; start < candidates.length; start += this.batchSize) {
      await this.deliverBatch(candidates.slice(start, start + this.batchSize));
    }
    this.schedule();
  }

  private async deliverBatch(batch: readonly QueuedMessage[]): Promise<void> {
    const now = Date.now();
    const records = batch.map((message) => {
      message.receiveCount++;
      message.firstReceivedAt ??= now;
      return this.record(message);
    });
    this.counts.batches++;
    let failedIds: ReadonlySet<string>;
    try {
      const response = await this.options.consumer({ Records: records });
      failedIds = this.failedIdsOf(response, records);
    } catch (error) {
      this.options.onConsumerError?.(error);
      failedIds = new Set(records.map((record) => record.messageId));
    }
    for (const message of batch) {
      if (!failedIds.has(message.messageId)) {
        this.remove(message);
        this.counts.deleted++;
        continue;
      }
      this.counts.failedDeliveries++;
      if (message.receiveCount >= this.options.maxReceiveCount) {
        this.remove(message);
        this.deadLetterList.push({ record: this.record(message), movedAt: Date.now() });
      } else {
        message.visibleAt = Date.now() + this.options.visibilityTimeoutMs;
      }
    }
  }

  /** Lambda's rule: a response naming an unknown or empty item identifier fails the whole batch. */
  private failedIdsOf(response: unknown, records: readonly SQSRecord[]): Set<string> {
    const all = new Set(records.map((record) => record.messageId));
    const failures: unknown = (response as Partial<SQSBatchResponse> | undefined)?.batchItemFailures ?? [];
    if (!Array.isArray(failures)) {
      this.options.onConsumerError?.(new Error('batchItemFailures is not an array'));
      return all;
    }
    const failed = new Set<string>();
    for (const failure of failures) {
      if (typeof failure?.itemIdentifier !== 'string' || !all.has(failure.itemIdentifier)) {
        this.options.onConsumerError?.(
          new Error(`batchItemFailures names an unknown item ${JSON.stringify(failure?.itemIdentifier)}`),
        );
        return all;
      }
      failed.add(failure.itemIdentifier);
    }
    return failed;
  }

  private remove(message: QueuedMessage): void {
    const index = this.messages.indexOf(message);
    if (index >= 0) this.messages.splice(index, 1);
  }

  private record(message: QueuedMessage): SQSRecord {
    return {
      messageId: message.messageId,
      receiptHandle: randomBytes(48).toString('base64'),
      body: message.body,
      attributes: {
        ApproximateReceiveCount: String(message.receiveCount),
        SentTimestamp: String(message.sentAt),
        SenderId: SNS_SENDER_ID,
        ApproximateFirstReceiveTimestamp: String(message.firstReceivedAt ?? message.sentAt),
      },
      messageAttributes: message.messageAttributes,
      md5OfBody: createHash('md5').update(message.body).digest('hex'),
      eventSource: 'aws:sqs',
      eventSourceARN: this.arn,
      awsRegion: LOCAL_REGION,
    };
  }
}
