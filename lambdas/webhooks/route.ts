/**
 * Where the webhook receiver is served and what its Lambda's environment names: plain data, so the CDK
 * constructs (lib/) read it without loading the receiver and its XML parser.
 */
export const WEBHOOK_PATH = '/webhooks/platform';
export const WEBHOOK_ROUTE = `POST ${WEBHOOK_PATH}`;

/** The receiver's own environment, beside the access settings every function gets. */
export const WEBHOOK_ENV = {
  /** Secrets Manager ARN of the shared token the webhook URL carries in `token`. */
  tokenSecretArn: 'WEBHOOK_TOKEN_SECRET_ARN',
} as const;
