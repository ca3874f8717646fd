/**
 * The SOAP access proxy's decision for one request, with its ports as arguments: read the envelope,
 * take the credential and the method from its header, ask the access core (`decide`) exactly as a
 * REST call `POST /<method>` would, then forward an allowed call to the backend or answer a Fault.
 */
import type { AccessAuthorizer } from '../decision/access';
import { METRIC } from '../observability/metric-names';
import { errorMessage, type LogPort, type MetricsPort } from '../observability/observability';
import {
  readAccessHeader,
  SOAP_CREDENTIAL_SCHEMES,
  type SoapCredential,
  type SoapCredentialMode,
} from './access-header';
import { checkAction } from './action';
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

/**
 * What the proxy needs of a decision; the access core's `AccessDecision` is one as it is. An allowed call
 * whose backend then fails is not counted: `giveBack` takes its usage back as far as it is still pending
 * (docs/soap.md, "Backend failures and usage").
 */
export type SoapAccessDecision =
  | {
      readonly effect: 'allow';
      /** Takes back the usage the decision recorded; absent when there is none to take back. */
      readonly giveBack?: () => Promise<unknown>;
    }
  | { readonly effect: 'deny'; readonly reason?: string }
  | { readonly effect: 'unauthorized' };

/** The access core's entry point, as the proxy uses it. */
export type DecideAccess = (request: SoapAccessRequest) => Promise<SoapAccessDecision>;

/**
 * The decide port filled by the access core: the same credential schemes, cache, limits, pending usage
 * and reports as a REST call `POST /<method>`.
 */
export function decideWithAccessCore(core: Pick<AccessAuthorizer, 'decideCall' | 'giveBack'>): DecideAccess {
  return async (request) => {
    const { credential } = request;
    // The SOAP oauth scheme reads an AccessToken element; the core verifies tokens once it has an oauth mode.
    if (credential.kind === 'access_token') throw new Error('the access core has no oauth credential mode');
    const decision = await core.decideCall({ ...request, credential });
    if (decision.effect !== 'allow' || decision.recorded === undefined) return decision;
    return { ...decision, giveBack: () => core.giveBack(decision) };
  };
}

export interface SoapHttpRequest extends SoapRequest {
  /** The SOAPAction header, forwarded as sent once it agrees with the operation (`./action.ts`). */
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
  usageGivenBack: 'SoapUsageGivenBack',
  giveBackFailed: 'SoapGiveBackFailed',
  accessCheckFailed: 'SoapAccessCheckFailed',
  proxyError: METRIC.soapProxyError,
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

  /** A call the backend did not serve is not counted, as far as its usage is still pending. */
  async function giveBack(decision: Extract<SoapAccessDecision, { effect: 'allow' }>): Promise<void> {
    if (!decision.giveBack) return;
    try {
      await decision.giveBack();
      count(SOAP_METRIC.usageGivenBack);
    } catch (error) {
      count(SOAP_METRIC.giveBackFailed);
      logger.warn('usage of a call the backend did not serve stays counted', { error: errorMessage(error) });
    }
  }

  async function forward(
    message: SoapMessage,
    soapAction: string | undefined,
    decision: Extract<SoapAccessDecision, { effect: 'allow' }>,
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
    await giveBack(decision);
    return refuse(message.version, {
      cause: timedOut ? 'backend_timeout' : 'backend_unavailable',
      detail: result.detail,
    });
  }

  async function handle(request: SoapHttpRequest): Promise<SoapAnswer> {
    const startedAt = performance.now();
    const reading = readSoapMessage(request, settings);
    metrics.addMetric(SOAP_METRIC.parseTime, 'Milliseconds', performance.now() - startedAt);
    if (!reading.ok) return refuse(reading.version, reading);
    const { message } = reading;
    const header = readAccessHeader(message, scheme, settings.soapNamespace);
    if (!header.ok) return refuse(message.version, header);
    const { credential, method } = header.header;
    const action = checkAction(message.contentType, request.soapAction, method);
    if (!action.ok) return refuse(message.version, { cause: 'action_mismatch', detail: action.detail });
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
        return forward(message, request.soapAction, decision);
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
