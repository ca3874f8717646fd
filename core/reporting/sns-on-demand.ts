/**
 * The SNS client, and the SDK behind it, loaded on the first publish. The authorizer publishes at most
 * once per application per report window, while loading `@aws-sdk/client-sns` at module init cost every
 * cold start 100-190 ms (issue 23): a cache hit never needs it.
 */
import type { SNSClient, SNSClientConfig } from '@aws-sdk/client-sns';

/** A client already built (tests, the local stack), or one built on first use. */
export type SnsClientSource = SNSClient | (() => Promise<SNSClient>);

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

export function snsClientOf(source: SnsClientSource): Promise<SNSClient> {
  return typeof source === 'function' ? source() : Promise.resolve(source);
}
