/**
 * The SNS client of the report and alert publishers (the core's ReportPublisher and AlertPublisher
 * ports over SNS), and the SDK behind it, loaded on the first publish. The authorizer publishes at most
 * once per application per report window, while loading `@aws-sdk/client-sns` at module init cost every
 * cold start 100-190 ms (issue 23): a cache hit never needs it.
 */
import type { PublishCommandInput, SNSClient, SNSClientConfig } from '@aws-sdk/client-sns';
import type { SnsClientSource, SnsSender } from './client-source';

export type { SnsClientSource, SnsSender } from './client-source';

/** The SDK module itself, loaded once; Node keeps it after the first import. */
export function snsSdk(): Promise<typeof import('@aws-sdk/client-sns')> {
  return import('@aws-sdk/client-sns');
}

/** A client made with `settings` on the first call; a failed load is forgotten, so the next call tries again. */
export function snsClientOnFirstUse(settings: SNSClientConfig): () => Promise<SNSClient> {
  let client: Promise<SNSClient> | undefined;
  return () => {
    client ??= snsSdk().then(
      ({ SNSClient }) => new SNSClient(settings),
      (error: unknown) => {
        client = undefined;
        throw error;
      },
    );
    return client;
  };
}

export function snsClientOf(source: SnsClientSource): Promise<SnsSender> {
  return typeof source === 'function' ? source() : Promise.resolve(source);
}

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
