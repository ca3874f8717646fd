/**
 * What the SNS publishers send through, by shape: an SNSClient of `@aws-sdk/client-sns` is one. Named
 * without the SDK's types so that declarations which mention it (the plugin's `snsClient` setting) check
 * in an application without the SDK, an optional peer of the plugin.
 */

/** The part of an SNSClient the publishers use. */
export interface SnsSender {
  send(command: object, options?: { readonly abortSignal?: AbortSignal }): Promise<unknown>;
}

/** A client already built (the application's, a test's, the local stack's), or one built on first use. */
export type SnsClientSource = SnsSender | (() => Promise<SnsSender>);
