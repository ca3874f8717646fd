/**
 * Lambda entry of the SOAP access proxy. The configuration, secrets and clients are built once per
 * container, on the first invocation; a container that cannot start answers a Receiver Fault and
 * logs why, then tries again on the next invocation.
 */
import { SNSClient } from '@aws-sdk/client-sns';
import type { APIGatewayProxyEvent } from 'aws-lambda';
import { createLogger } from '../../adapters/powertools/observability';
import { SNS_CLIENT_SETTINGS } from '../../adapters/sns/client';
import { errorMessage } from '../../core/observability/observability';
import { versionOfContentType } from '../../core/soap/envelope';
import { faultAnswer } from '../../core/soap/faults';
import { SOAP_DEFAULTS, SOAP_ENV, soapSettingsFromEnv } from '../../core/soap/settings';
import { loadRuntime, oncePerContainer } from '../runtime';
import {
  createSoapAccessProxyHandler,
  headerValue,
  proxyResultOf,
  SOAP_PROXY_SERVICE_NAME,
  type SoapProxyHandler,
} from './handler';

const startupLogger = createLogger(SOAP_PROXY_SERVICE_NAME);

const proxy = oncePerContainer(async (): Promise<SoapProxyHandler> => {
  const settings = soapSettingsFromEnv();
  const runtime = await loadRuntime(SOAP_PROXY_SERVICE_NAME);
  return createSoapAccessProxyHandler({ ...runtime, settings, sns: new SNSClient(SNS_CLIENT_SETTINGS) });
});

export const handler = async (event: APIGatewayProxyEvent) => {
  let handle: SoapProxyHandler;
  try {
    handle = await proxy();
  } catch (error) {
    startupLogger.error('soap proxy cannot start', { error: errorMessage(error) });
    const { version } = versionOfContentType(headerValue(event.headers, 'content-type'));
    const namespace = process.env[SOAP_ENV.soapNamespace] || SOAP_DEFAULTS.soapNamespace;
    return proxyResultOf(faultAnswer(version, { cause: 'proxy_error' }, namespace));
  }
  return handle(event);
};
