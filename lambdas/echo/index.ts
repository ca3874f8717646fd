import type { APIGatewayProxyHandler } from 'aws-lambda';
import { ENV } from '../core/config';
import { echo } from './handler';

/** The credential headers this deployment is configured with, hidden on top of the usual names. */
const configuredCredentialHeaders = [process.env[ENV.credentialHeader], process.env[ENV.appKeyHeader]].filter(
  (name): name is string => name !== undefined && name !== '',
);

export const handler: APIGatewayProxyHandler = async (event) =>
  echo(event, { hiddenNames: configuredCredentialHeaders });
