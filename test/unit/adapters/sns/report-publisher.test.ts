/**
 * The SNS report publisher's deadlines against a real HTTP endpoint: an attempt that gets no answer is
 * given up after the client's request timeout and tried again, all within the publish deadline.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { SNSClient } from '@aws-sdk/client-sns';
import { afterEach, describe, expect, it } from 'vitest';
import { PUBLISH_TIMEOUT_MS, SNS_CLIENT_SETTINGS } from '../../../../adapters/sns/client';
import { snsReportPublisher } from '../../../../adapters/sns/report-publisher';
import { reportMessage } from '../../../../core/reporting/message';

const PUBLISHED = `<PublishResponse xmlns="http://sns.amazonaws.com/doc/2010-03-31/"><PublishResult><MessageId>m-1</MessageId></PublishResult><ResponseMetadata><RequestId>r-1</RequestId></ResponseMetadata></PublishResponse>`;
const TOPIC = 'arn:aws:sns:us-east-1:123456789012:usage';

let close: (() => void) | undefined;
afterEach(() => close?.());

/** An SNS endpoint that leaves the first `silentAttempts` requests unanswered and answers the others. */
async function snsEndpoint(silentAttempts: number): Promise<{ url: string; attempts: () => number }> {
  let attempts = 0;
  const server = createServer((request: IncomingMessage, response: ServerResponse) => {
    attempts++;
    request.resume();
    if (attempts <= silentAttempts) return;
    response.writeHead(200, { 'content-type': 'text/xml' }).end(PUBLISHED);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  close = () => {
    server.closeAllConnections();
    server.close();
  };
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, attempts: () => attempts };
}

function publisherTo(url: string) {
  const sns = new SNSClient({
    ...SNS_CLIENT_SETTINGS,
    region: 'us-east-1',
    endpoint: url,
    credentials: { accessKeyId: 'test', secretAccessKey: 'test' },
  });
  return snsReportPublisher(sns, TOPIC);
}

const message = reportMessage('svc', 'a'.repeat(64));

describe('snsReportPublisher', () => {
  it('tries again after an attempt that gets no answer, within the publish deadline', async () => {
    const endpoint = await snsEndpoint(1);
    await publisherTo(endpoint.url).publish(message);
    expect(endpoint.attempts()).toBe(2);
  });

  it('gives up at the publish deadline when no attempt is answered', async () => {
    const endpoint = await snsEndpoint(Number.POSITIVE_INFINITY);
    const startedAt = performance.now();
    await expect(publisherTo(endpoint.url).publish(message)).rejects.toThrow();
    expect(performance.now() - startedAt).toBeLessThan(PUBLISH_TIMEOUT_MS + 500);
  });
});
