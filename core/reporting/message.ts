/**
 * The report message: the authorizer publishes it to the SNS topic when it sets a credential's report
 * window flag; SNS delivers it to the SQS queue with raw message delivery, so each SQS record body is
 * exactly this JSON. It names the credential by its id only: never a raw credential.
 */
import type { PublishCommandInput, SNSClientConfig } from '@aws-sdk/client-sns';
import { type SnsClientSource, snsClientOf, snsSdk } from './sns-on-demand';

export const REPORT_MESSAGE_VERSION = 1;

export interface ReportMessage {
  readonly v: typeof REPORT_MESSAGE_VERSION;
  readonly serviceId: string;
  /** SHA-256 hex credential id (see credentials.ts). */
  readonly credentialId: string;
}

const CREDENTIAL_ID = /^[0-9a-f]{64}$/;

export class ReportMessageError extends Error {
  constructor(problem: string) {
    super(`invalid report message: ${problem}`);
    this.name = 'ReportMessageError';
  }
}

export function reportMessage(serviceId: string, credentialId: string): ReportMessage {
  return { v: REPORT_MESSAGE_VERSION, serviceId, credentialId };
}

export function encodeReportMessage(message: ReportMessage): string {
  return JSON.stringify(message);
}

/** Parses an SQS record body; throws ReportMessageError naming the problem. */
export function parseReportMessage(body: string): ReportMessage {
  let value: unknown;
  try {
    value = JSON.parse(body);
  } catch {
    throw new ReportMessageError('not JSON');
  }
  if (typeof value !== 'object' || value === null) throw new ReportMessageError('not an object');
  const { v, serviceId, credentialId } = value as Record<string, unknown>;
  if (v !== REPORT_MESSAGE_VERSION) throw new ReportMessageError(`unknown version ${JSON.stringify(v)}`);
  if (typeof serviceId !== 'string' || serviceId === '') throw new ReportMessageError('serviceId missing');
  if (typeof credentialId !== 'string' || !CREDENTIAL_ID.test(credentialId)) {
    throw new ReportMessageError('credentialId is not a SHA-256 hex id');
  }
  return { v, serviceId, credentialId };
}

/** The port the authorizer publishes report messages through. */
export interface ReportPublisher {
  publish(message: ReportMessage): Promise<void>;
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

export function snsReportPublisher(
  sns: SnsClientSource,
  topicArn: string,
  timeoutMs = PUBLISH_TIMEOUT_MS,
): ReportPublisher {
  return {
    publish: (message) =>
      publishWithin(sns, { TopicArn: topicArn, Message: encodeReportMessage(message) }, timeoutMs),
  };
}
