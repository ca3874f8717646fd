/**
 * The SOAP access proxy as a Lambda proxy integration: API Gateway's event becomes the proxy's request
 * and its answer API Gateway's result. The access core is the `decide` port (the REST authorizer's core,
 * built from the same ports: `createSoapAccessProxyHandler`); the backend call is the `forward` port.
 */
import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import { createLogger, createMetrics } from '../../adapters/powertools/observability';
import { createAccessAuthorizerOnSns } from '../../adapters/sns/report-publisher';
import { SERVICE_NAME } from '../../core/observability/metric-names';
import type { LogPort, MetricsPort } from '../../core/observability/observability';
import type { SoapCredentialMode } from '../../core/soap/access-header';
import type { SoapAnswer } from '../../core/soap/envelope';
import { type ForwardPort, forwardToBackend, SOAP_ACTION_HEADER } from '../../core/soap/forward';
import { createSoapProxy, type DecideAccess, decideWithAccessCore } from '../../core/soap/proxy';
import type { SoapSettings } from '../../core/soap/settings';
import type { AuthorizerDeps } from '../authorizer/handler';

export const SOAP_PROXY_SERVICE_NAME = SERVICE_NAME.soapProxy;

export interface SoapProxyHandlerDeps {
  readonly settings: SoapSettings;
  readonly credentialMode: SoapCredentialMode;
  readonly decide: DecideAccess;
  /** Default: an HTTP call to `settings.soapBackendUrl`. */
  readonly forward?: ForwardPort;
  readonly logger?: LogPort;
  readonly metrics?: MetricsPort;
}

export type SoapProxyHandler = (event: APIGatewayProxyEvent) => Promise<APIGatewayProxyResult>;

/** A header's value, its name matched case-insensitively, as API Gateway keeps the client's spelling. */
export function headerValue(
  headers: Readonly<Record<string, string | undefined>> | null,
  name: string,
): string | undefined {
  const wanted = name.toLowerCase();
  const key = Object.keys(headers ?? {}).find((candidate) => candidate.toLowerCase() === wanted);
  return key === undefined ? undefined : headers?.[key];
}

/** The proxy's answer as API Gateway's proxy result: status, content type and body, nothing else. */
export function proxyResultOf(answer: SoapAnswer): APIGatewayProxyResult {
  return {
    statusCode: answer.statusCode,
    headers: answer.contentType === undefined ? {} : { 'content-type': answer.contentType },
    body: answer.body,
    isBase64Encoded: answer.isBase64Encoded,
  };
}

export function createSoapProxyHandler(deps: SoapProxyHandlerDeps): SoapProxyHandler {
  const metrics = deps.metrics ?? createMetrics(SOAP_PROXY_SERVICE_NAME);
  const proxy = createSoapProxy({
    settings: deps.settings,
    credentialMode: deps.credentialMode,
    decide: deps.decide,
    forward: deps.forward ?? forwardToBackend,
    logger: deps.logger ?? createLogger(SOAP_PROXY_SERVICE_NAME),
    metrics,
  });
  return async (event) => {
    const soapAction = headerValue(event.headers, SOAP_ACTION_HEADER);
    try {
      const answer = await proxy({
        contentType: headerValue(event.headers, 'content-type'),
        ...(soapAction !== undefined && { soapAction }),
        body: event.body,
        isBase64Encoded: event.isBase64Encoded,
      });
      return proxyResultOf(answer);
    } finally {
      metrics.publishStoredMetrics();
    }
  };
}

/** The ports the REST authorizer has (same cache, platform client and report topic), and the SOAP settings. */
export interface SoapAccessProxyDeps extends AuthorizerDeps {
  readonly settings: SoapSettings;
  /** Default: an HTTP call to `settings.soapBackendUrl`. */
  readonly forward?: ForwardPort;
}

/** The proxy deciding with the access core, exactly as the REST authorizer does for `POST /<method>`. */
export function createSoapAccessProxyHandler(deps: SoapAccessProxyDeps): SoapProxyHandler {
  const logger = deps.logger ?? createLogger(SOAP_PROXY_SERVICE_NAME);
  const metrics = deps.metrics ?? createMetrics(SOAP_PROXY_SERVICE_NAME);
  const core = createAccessAuthorizerOnSns({ ...deps, logger, metrics });
  return createSoapProxyHandler({
    settings: deps.settings,
    credentialMode: deps.config.credentialMode,
    decide: decideWithAccessCore(core),
    ...(deps.forward && { forward: deps.forward }),
    logger,
    metrics,
  });
}
