import type { APIGatewayProxyHandler } from 'aws-lambda';
import { ENV } from '../../core/settings/config';
import { configuredSecretHeaders, echo } from './handler';

/** The credential headers this deployment is configured with, hidden on top of the usual names. */
const hiddenNames = configuredSecretHeaders({
  credentialHeader: process.env[ENV.credentialHeader],
  appKeyHeader: process.env[ENV.appKeyHeader],
});

export const handler: APIGatewayProxyHandler = async (event) => echo(event, { hiddenNames });
