/**
 * The SNS client both the project and the baseline publish through: the real SDK client, pointed at
 * the local SNS endpoint, with a middleware that holds every send() for the simulated in-region
 * publish latency before the request goes out. One mechanism, applied identically to both.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { SNSClient } from '@aws-sdk/client-sns';
import { LOCAL_AWS_CREDENTIALS, LOCAL_REGION } from '../local/sns-endpoint';

export function createSnsClientWithLatency(endpointUrl: string, latencyMs: number): SNSClient {
  const client = new SNSClient({
    region: LOCAL_REGION,
    endpoint: endpointUrl,
    credentials: LOCAL_AWS_CREDENTIALS,
  });
  client.middlewareStack.add(
    (next) => async (args) => {
      if (latencyMs > 0) await sleep(latencyMs);
      return next(args);
    },
    { step: 'initialize', name: 'simulatedPublishLatency' },
  );
  return client;
}
