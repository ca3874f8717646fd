/**
 * The report message: the authorizer publishes it to the SNS topic when it sets a credential's report
 * window flag; SNS delivers it to the SQS queue with raw message delivery, so each SQS record body is
 * exactly this JSON. It names the credential by its id only: never a raw credential.
 */

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
