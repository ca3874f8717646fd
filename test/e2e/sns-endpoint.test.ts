import { PublishBatchCommand, PublishCommand, SNSClient } from '@aws-sdk/client-sns';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  LOCAL_AWS_CREDENTIALS,
  type PublishedMessage,
  type SnsEndpoint,
  startSnsEndpoint,
  THROTTLING,
} from '../../local/sns-endpoint';

describe('local SNS endpoint, driven by the real @aws-sdk/client-sns', () => {
  let endpoint: SnsEndpoint;
  let sns: SNSClient;
  let delivered: PublishedMessage[];
  let topic: string;

  beforeEach(async () => {
    endpoint = await startSnsEndpoint();
    delivered = [];
    topic = endpoint.addTopic('usage', (message) => delivered.push(message));
    sns = new SNSClient({
      endpoint: endpoint.url,
      region: 'us-east-1',
      credentials: LOCAL_AWS_CREDENTIALS,
      maxAttempts: 1,
    });
  });

  afterEach(async () => {
    sns.destroy();
    await endpoint.stop();
  });

  it('answers Publish with a MessageId and hands the exact message to the subscriber', async () => {
    const message = '{"credential":"abc","note":"<&>\\"\'"}';
    const output = await sns.send(
      new PublishCommand({
        TopicArn: topic,
        Message: message,
        Subject: 'usage',
        MessageAttributes: { kind: { DataType: 'String', StringValue: 'pending' } },
      }),
    );
    expect(output.MessageId).toMatch(/^[0-9a-f-]{36}$/);
    expect(delivered).toHaveLength(1);
    expect(delivered[0]).toMatchObject({
      messageId: output.MessageId,
      topicArn: 'arn:aws:sns:us-east-1:123456789012:usage',
      message,
      subject: 'usage',
      messageAttributes: { kind: { dataType: 'String', stringValue: 'pending' } },
    });
  });

  it('answers PublishBatch with its Successful and Failed entries', async () => {
    const output = await sns.send(
      new PublishBatchCommand({
        TopicArn: topic,
        PublishBatchRequestEntries: [
          { Id: 'first', Message: 'one' },
          { Id: 'empty', Message: '' },
          { Id: 'third', Message: 'three' },
        ],
      }),
    );
    expect(output.Successful?.map((entry) => entry.Id)).toEqual(['first', 'third']);
    expect(output.Successful?.every((entry) => /^[0-9a-f-]{36}$/.test(entry.MessageId ?? ''))).toBe(true);
    expect(output.Failed).toEqual([
      {
        Id: 'empty',
        Code: 'InvalidParameter',
        Message: 'Invalid parameter: Empty message',
        SenderFault: true,
      },
    ]);
    expect(delivered.map((message) => message.message)).toEqual(['one', 'three']);
  });

  it('refuses batches that SNS refuses: too many entries and repeated ids', async () => {
    const entries = Array.from({ length: 11 }, (_, i) => ({ Id: `m${i}`, Message: 'x' }));
    await expect(
      sns.send(new PublishBatchCommand({ TopicArn: topic, PublishBatchRequestEntries: entries })),
    ).rejects.toMatchObject({ name: 'TooManyEntriesInBatchRequestException' });
    await expect(
      sns.send(
        new PublishBatchCommand({
          TopicArn: topic,
          PublishBatchRequestEntries: [
            { Id: 'same', Message: 'a' },
            { Id: 'same', Message: 'b' },
          ],
        }),
      ),
    ).rejects.toMatchObject({ name: 'BatchEntryIdsNotDistinctException' });
    expect(delivered).toEqual([]);
  });

  it('answers an unknown topic with NotFound and delivers nothing', async () => {
    await expect(
      sns.send(new PublishCommand({ TopicArn: `${topic}-missing`, Message: 'lost' })),
    ).rejects.toMatchObject({
      name: 'NotFoundException',
      message: 'Topic does not exist',
      $metadata: { httpStatusCode: 404 },
    });
    expect(delivered).toEqual([]);
  });

  it('answers an unknown action with an InvalidAction error response', async () => {
    const response = await fetch(endpoint.url, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: 'Action=CreateTopic&Name=x&Version=2010-03-31',
    });
    expect(response.status).toBe(400);
    const body = await response.text();
    expect(body).toContain('<ErrorResponse');
    expect(body).toContain('<Code>InvalidAction</Code>');
  });

  it('answers the injected number of publishes with Throttling, then accepts again', async () => {
    endpoint.failNextPublishes(2);
    for (let i = 0; i < 2; i++) {
      await expect(
        sns.send(new PublishCommand({ TopicArn: topic, Message: `try ${i}` })),
      ).rejects.toMatchObject({
        name: THROTTLING.code,
        message: THROTTLING.message,
        $metadata: { httpStatusCode: 400 },
      });
    }
    await sns.send(new PublishCommand({ TopicArn: topic, Message: 'accepted' }));
    expect(delivered.map((message) => message.message)).toEqual(['accepted']);
    expect(endpoint.stats()).toEqual({ requests: 3, published: 1, injectedFailures: 2 });
  });

  it('lets the SDK retry an injected throttle with its standard strategy', async () => {
    const retrying = new SNSClient({
      endpoint: endpoint.url,
      region: 'us-east-1',
      credentials: LOCAL_AWS_CREDENTIALS,
      maxAttempts: 2,
    });
    endpoint.failNextPublishes(1);
    const output = await retrying.send(new PublishCommand({ TopicArn: topic, Message: 'after a retry' }));
    retrying.destroy();
    expect(output.$metadata.attempts).toBe(2);
    expect(delivered.map((message) => message.message)).toEqual(['after a retry']);
  });
});
