import { createHash } from 'node:crypto';
import type { SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import { afterEach, describe, expect, it } from 'vitest';
import { LocalQueue, type LocalQueueOptions } from '../../local/queue';

const HOUR_MS = 3_600_000;
const queues: LocalQueue[] = [];

function queue(
  consumer: LocalQueueOptions['consumer'],
  overrides: Partial<LocalQueueOptions> = {},
): LocalQueue {
  const created = new LocalQueue({
    name: 'usage-queue',
    consumer,
    // Long enough that only drain() and deliverNow() deliver, unless a test shortens it.
    deliveryDelayMs: HOUR_MS,
    visibilityTimeoutMs: HOUR_MS,
    maxReceiveCount: 3,
    ...overrides,
  });
  queues.push(created);
  return created;
}

afterEach(async () => {
  await Promise.all(queues.splice(0).map((created) => created.stop()));
});

describe('local SQS queue in front of a consumer', () => {
  it('delivers a message once its delivery delay has passed, as a real-looking SQS record', async () => {
    let resolveEvent: (event: SQSEvent) => void = () => undefined;
    const received = new Promise<SQSEvent>((resolve) => {
      resolveEvent = resolve;
    });
    const usage = queue(
      async (event) => {
        resolveEvent(event);
        return { batchItemFailures: [] };
      },
      { deliveryDelayMs: 5 },
    );
    const messageId = usage.send('{"credential":"c1"}', {
      kind: { dataType: 'String', stringValue: 'usage' },
    });
    const event = await received;
    expect(event.Records).toHaveLength(1);
    const record = event.Records[0] as SQSRecord;
    expect(record).toMatchObject({
      messageId,
      body: '{"credential":"c1"}',
      eventSource: 'aws:sqs',
      eventSourceARN: 'arn:aws:sqs:us-east-1:123456789012:usage-queue',
      awsRegion: 'us-east-1',
      md5OfBody: createHash('md5').update('{"credential":"c1"}').digest('hex'),
      messageAttributes: { kind: { dataType: 'String', stringValue: 'usage' } },
      attributes: { ApproximateReceiveCount: '1' },
    });
    expect(record.receiptHandle.length).toBeGreaterThan(20);
    expect(Number(record.attributes.SentTimestamp)).toBeGreaterThan(0);
  });

  it('hands the consumer batches of at most 10 records', async () => {
    const sizes: number[] = [];
    const usage = queue(async (event) => {
      sizes.push(event.Records.length);
      return undefined;
    });
    for (let i = 0; i < 23; i++) usage.send(`m${i}`);
    await usage.drain();
    expect(sizes).toEqual([10, 10, 3]);
    expect(usage.stats()).toMatchObject({ sent: 23, queued: 0, deleted: 23, batches: 3, deadLetters: 0 });
  });

  it('redelivers only the records named in batchItemFailures, with a new receipt handle', async () => {
    const deliveries: SQSRecord[][] = [];
    const usage = queue(async (event): Promise<SQSBatchResponse> => {
      deliveries.push(event.Records);
      const failing = event.Records.filter(
        (record) => record.body === 'fails once' && deliveries.length === 1,
      );
      return { batchItemFailures: failing.map((record) => ({ itemIdentifier: record.messageId })) };
    });
    usage.send('fine');
    usage.send('fails once');
    await usage.drain();
    expect(deliveries.map((records) => records.map((record) => record.body))).toEqual([
      ['fine', 'fails once'],
      ['fails once'],
    ]);
    const [first, second] = [deliveries[0]?.[1], deliveries[1]?.[0]];
    expect(second?.messageId).toBe(first?.messageId);
    expect(second?.receiptHandle).not.toBe(first?.receiptHandle);
    expect(second?.attributes.ApproximateReceiveCount).toBe('2');
    expect(usage.stats()).toMatchObject({ queued: 0, deleted: 2, failedDeliveries: 1 });
  });

  it('redelivers the whole batch when the consumer throws, and reports the error', async () => {
    const errors: unknown[] = [];
    let calls = 0;
    const usage = queue(
      async () => {
        calls++;
        if (calls === 1) throw new Error('platform unavailable');
        return { batchItemFailures: [] };
      },
      { onConsumerError: (error) => errors.push(error) },
    );
    usage.send('a');
    usage.send('b');
    await usage.drain();
    expect(calls).toBe(2);
    expect(errors).toEqual([new Error('platform unavailable')]);
    expect(usage.stats()).toMatchObject({ queued: 0, deleted: 2, failedDeliveries: 2 });
  });

  it('fails the whole batch when batchItemFailures names an unknown record, as Lambda does', async () => {
    let calls = 0;
    const usage = queue(async () => {
      calls++;
      return calls === 1 ? { batchItemFailures: [{ itemIdentifier: 'not-in-this-batch' }] } : undefined;
    });
    usage.send('a');
    usage.send('b');
    await usage.drain();
    expect(usage.stats()).toMatchObject({ deleted: 2, failedDeliveries: 2, batches: 2 });
  });

  it('moves a message to the dead-letter list after the max receive count', async () => {
    const counts: string[] = [];
    const usage = queue(async (event) => {
      counts.push(...event.Records.map((record) => record.attributes.ApproximateReceiveCount));
      return { batchItemFailures: event.Records.map((record) => ({ itemIdentifier: record.messageId })) };
    });
    const messageId = usage.send('always fails');
    await usage.drain();
    expect(counts).toEqual(['1', '2', '3']);
    expect(usage.stats()).toMatchObject({ queued: 0, deadLetters: 1 });
    expect(usage.deadLetters().map((letter) => letter.record.messageId)).toEqual([messageId]);
  });

  it('deliverNow delivers once and leaves a failed record invisible until its visibility timeout', async () => {
    let calls = 0;
    const usage = queue(async (event) => {
      calls++;
      return { batchItemFailures: event.Records.map((record) => ({ itemIdentifier: record.messageId })) };
    });
    usage.send('fails');
    await usage.deliverNow();
    expect(calls).toBe(1);
    expect(usage.stats()).toMatchObject({ queued: 1, failedDeliveries: 1, deadLetters: 0 });
  });

  it('refuses messages once stopped', async () => {
    const usage = queue(async () => undefined);
    await usage.stop();
    expect(() => usage.send('late')).toThrow('queue usage-queue is stopped');
  });
});
