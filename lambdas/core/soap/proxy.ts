/**
 * The SOAP access proxy's decision for one request, with its ports as arguments: read the envelope,
 * take the credential and the method from its header, ask the access core (`decide`) exactly as a
 * REST call `POST /<method>` would, then forward an allowed call to the backend or answer a Fault.
 */
import { errorMessage, type LogPort, type MetricsPort } from '../observability';
import {
  readAccessHeader,
  SOAP_CREDENTIAL_SCHEMES,
  type SoapCredential,
  type SoapCredentialMode,
} from './access-header';
import {
  readSoapMessage,
  type SoapAnswer,
  type SoapMessage,
  type SoapRequest,
  type SoapVersion,
  utf8Text,
  versionOfContentType,
} from './envelope';
import { type Fault, faultAnswer, faultCauseOfDenial } from './faults';
import type { BackendResult, ForwardPort } from './forward';
import type { SoapSettings } from './settings';

/** The request the access core decides on: the REST request a SOAP call stands for. */
export interface SoapAccessRequest {
  readonly credential: SoapCredential;
  readonly method: 'POST';
  /** `/` and the operation name, which the mapping rules match. */
  readonly path: string;
  readonly query: Readonly<Record<string, readonly string[]>>;
}

export type SoapAccessDecision =
  | {
      readonly effect: 'allow';
      /**
       * Called once when the backend then gives no answer (unreachable or timed out), so the core can
       * take back the usage this call counted. Without it the call stays counted, as a REST call whose
       * integration fails does.
       */
      readonly release?: () => Promise<void>;
    }
  | { readonly effect: 'deny'; readonly reason?: string }
  | { readonly effect: 'unauthorized' };

/** The access core's entry point, as the proxy uses it. */
export type DecideAccess = (request: SoapAccessRequest) => Promise<SoapAccessDecision>;

export interface SoapHttpRequest extends SoapRequest {
  /** The SOAPAction header, forwarded as sent. */
  readonly soapAction?: string;
}

export type SoapProxy = (request: SoapHttpRequest) => Promise<SoapAnswer>;

export interface SoapProxyDeps {
  readonly settings: SoapSettings;
  readonly credentialMode: SoapCredentialMode;
  readonly decide: DecideAccess;
  readonly forward: ForwardPort;
  readonly logger: LogPort;
  readonly metrics: MetricsPort;
}

export const SOAP_METRIC = {
  parseTime: 'SoapParseTime',
  refused: 'SoapRefused',
  forwarded: 'SoapForwarded',
  backendUnavailable: 'SoapBackendUnavailable',
  backendTimeout: 'SoapBackendTimeout',
  accessCheckFailed: 'SoapAccessCheckFailed',
  proxyError: 'SoapProxyError',
} as const;

/** The backend's answer as it came: text when it is UTF-8, otherwise its bytes as base64. */
function backendAnswer(result: Extract<BackendResult, { ok: true }>): SoapAnswer {
  const text = utf8Text(result.body);
  return {
    statusCode: result.status,
    ...(result.contentType !== undefined && { contentType: result.contentType }),
    body: text ?? result.body.toString('base64'),
    isBase64Encoded: text === undefined,
  };
}

export function createSoapProxy(deps: SoapProxyDeps): SoapProxy {
  const { settings, logger, metrics } = deps;
  const scheme = SOAP_CREDENTIAL_SCHEMES[deps.credentialMode];
  const count = (name: string) => metrics.addMetric(name, 'Count', 1);

  const refuse = (version: SoapVersion, fault: Fault): SoapAnswer => {
    count(SOAP_METRIC.refused);
    logger.info('soap call refused', { cause: fault.cause, version });
    return faultAnswer(version, fault, settings.soapNamespace);
  };

  async function forward(
    message: SoapMessage,
    release: (() => Promise<void>) | undefined,
    soapAction: string | undefined,
  ): Promise<SoapAnswer> {
    const result = await deps.forward({
      url: settings.soapBackendUrl,
      body: message.bytes,
      contentType: message.contentType,
      ...(soapAction !== undefined && { soapAction }),
      timeoutMs: settings.soapBackendTimeoutMs,
    });
    if (result.ok) {
      count(SOAP_METRIC.forwarded);
      return backendAnswer(result);
    }
    const timedOut = result.failure === 'timeout';
    count(timedOut ? SOAP_METRIC.backendTimeout : SOAP_METRIC.backendUnavailable);
    logger.warn('soap backend failed', { failure: result.failure, detail: result.detail });
    if (release) {
      try {
        await release();
      } catch (error) {
        logger.error('usage of a call the backend never answered stays counted', {
          error: errorMessage(error),
        });
      }
    }
    return refuse(message.version, {
      cause: timedOut ? 'backend_timeout' : 'backend_unavailable',
      detail: result.detail,
    });
  }

  async function handle(request: SoapHttpRequest): Promise<SoapAnswer> {
    const startedAt = performance.now();
    const reading = readSoapMessage(request, settings.soapMaxBodyBytes);
    metrics.addMetric(SOAP_METRIC.parseTime, 'Milliseconds', performance.now() - startedAt);
    if (!reading.ok) return refuse(reading.version, reading);
    const { message } = reading;
    const header = readAccessHeader(message, scheme, settings.soapNamespace);
    if (!header.ok) return refuse(message.version, header);
    const { credential, method } = header.header;
    let decision: SoapAccessDecision;
    try {
      decision = await deps.decide({ credential, method: 'POST', path: `/${method}`, query: {} });
    } catch (error) {
      count(SOAP_METRIC.accessCheckFailed);
      logger.error('soap access check failed', { error: errorMessage(error) });
      return refuse(message.version, { cause: 'access_check_failed' });
    }
    switch (decision.effect) {
      case 'unauthorized':
        return refuse(message.version, { cause: 'invalid_credential' });
      case 'deny': {
        const cause = faultCauseOfDenial(decision.reason);
        return refuse(message.version, { cause, ...(cause === 'no_mapping_rule' && { detail: method }) });
      }
      case 'allow':
        return forward(message, decision.release, request.soapAction);
    }
  }

  return async (request) => {
    try {
      return await handle(request);
    } catch (error) {
      count(SOAP_METRIC.proxyError);
      logger.error('soap proxy failed', { error: errorMessage(error) });
      return refuse(versionOfContentType(request.contentType).version, { cause: 'proxy_error' });
    }
  };
}
