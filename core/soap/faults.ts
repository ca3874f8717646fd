/**
 * SOAP Faults: every refusal of the proxy, in the request's SOAP version, with a reason naming the
 * cause and the HTTP status that version's HTTP binding gives a fault (docs/soap.md, "Faults").
 *
 * - SOAP 1.1 section 6.2 (and WS-I Basic Profile 1.1 R1126): a Fault travels with HTTP 500.
 * - SOAP 1.2 part 2 section 7.5.2.2: env:Sender with 400, env:Receiver and env:VersionMismatch with 500.
 * - Refusals of the HTTP request itself rather than of the envelope keep their HTTP status: 413 for
 *   a body over the cap, 415 for a media type that is not SOAP (WS-I R1115), and 502/504 when the
 *   backend fails, as API Gateway answers a failed or timed-out integration.
 */
import { XMLBuilder } from 'fast-xml-parser';
import type { AccessHeaderCause } from './access-header';
import { type EnvelopeCause, SOAP_VERSIONS, type SoapAnswer, type SoapVersion } from './envelope';

/** Denial reasons of the access core that a Fault names; any other denial is `access_denied`. */
const DENIAL_CAUSES = [
  'limits_exceeded',
  'no_mapping_rule',
  'application_not_active',
  'application_key_invalid',
  'service_not_active',
  'referrer_not_allowed',
  'platform_unavailable',
  'platform_misconfigured',
  'platform_busy',
] as const;

type DenialCause = (typeof DENIAL_CAUSES)[number] | 'access_denied';

export type FaultCause =
  | EnvelopeCause
  | AccessHeaderCause
  | 'action_mismatch'
  | DenialCause
  | 'access_check_failed'
  | 'backend_unavailable'
  | 'backend_timeout'
  | 'proxy_error';

/** Whose fault it is: SOAP 1.1 Client/Server/VersionMismatch, SOAP 1.2 Sender/Receiver/VersionMismatch. */
export type FaultCode = 'sender' | 'receiver' | 'version_mismatch';

interface FaultKind {
  readonly code: FaultCode;
  readonly reason: string;
  /** An HTTP-level refusal keeps this status in both versions. */
  readonly status?: number;
}

export const FAULTS: Readonly<Record<FaultCause, FaultKind>> = {
  unsupported_media_type: { code: 'sender', reason: 'Unsupported media type', status: 415 },
  body_too_large: { code: 'sender', reason: 'Request too large', status: 413 },
  unreadable_envelope: { code: 'sender', reason: 'Unreadable envelope' },
  envelope_too_complex: { code: 'sender', reason: 'Envelope over a structural bound' },
  version_mismatch: { code: 'version_mismatch', reason: 'Unsupported SOAP envelope version' },
  missing_credential: { code: 'sender', reason: 'Missing credential' },
  invalid_credential: { code: 'sender', reason: 'Invalid credential' },
  method_missing: { code: 'sender', reason: 'Method missing' },
  method_invalid: { code: 'sender', reason: 'Invalid method' },
  action_mismatch: { code: 'sender', reason: 'The SOAP action names another operation' },
  limits_exceeded: { code: 'sender', reason: 'Usage limits exceeded' },
  no_mapping_rule: { code: 'sender', reason: 'No mapping rule matches the operation' },
  application_not_active: { code: 'sender', reason: 'Application is not active' },
  application_key_invalid: { code: 'sender', reason: 'Application key is invalid' },
  service_not_active: { code: 'sender', reason: 'Service is not active' },
  referrer_not_allowed: { code: 'sender', reason: 'Referrer is not allowed' },
  access_denied: { code: 'sender', reason: 'Access denied' },
  platform_unavailable: { code: 'receiver', reason: 'The access check is unavailable; try again later' },
  platform_misconfigured: { code: 'receiver', reason: 'The access check is misconfigured' },
  platform_busy: { code: 'receiver', reason: 'The access check is busy; try again later' },
  access_check_failed: { code: 'receiver', reason: 'The access check failed; try again later' },
  backend_unavailable: { code: 'receiver', reason: 'The SOAP backend is unavailable', status: 502 },
  backend_timeout: { code: 'receiver', reason: 'The SOAP backend did not answer in time', status: 504 },
  proxy_error: { code: 'receiver', reason: 'The SOAP access proxy failed; try again later' },
};

export function faultCauseOfDenial(reason: string | undefined): FaultCause {
  return DENIAL_CAUSES.find((cause) => cause === reason) ?? 'access_denied';
}

export interface Fault {
  readonly cause: FaultCause;
  /** What exactly was wrong; never a credential value. */
  readonly detail?: string;
}

interface FaultFormat {
  readonly statuses: Readonly<Record<FaultCode, number>>;
  /** The Envelope element of the fault document, as fast-xml-parser's builder takes it. */
  envelope(code: FaultCode, fault: Fault, reason: string, namespace: string): Record<string, unknown>;
}

const SOAP11 = SOAP_VERSIONS['1.1'].namespace;
const SOAP12 = SOAP_VERSIONS['1.2'].namespace;

const SOAP11_CODES: Readonly<Record<FaultCode, string>> = {
  sender: 'Client',
  receiver: 'Server',
  version_mismatch: 'VersionMismatch',
};
const SOAP12_CODES: Readonly<Record<FaultCode, string>> = {
  sender: 'Sender',
  receiver: 'Receiver',
  version_mismatch: 'VersionMismatch',
};

/** SOAP 1.2 part 1 section 5.4.7: a VersionMismatch fault lists the envelopes this node supports. */
const UPGRADE_HEADER = {
  'env:Upgrade': {
    'env:SupportedEnvelope': [
      { '@_qname': 'v12:Envelope', '@_xmlns:v12': SOAP12 },
      { '@_qname': 'v11:Envelope', '@_xmlns:v11': SOAP11 },
    ],
  },
};

const FAULT_FORMATS: Readonly<Record<SoapVersion, FaultFormat>> = {
  '1.1': {
    statuses: { sender: 500, receiver: 500, version_mismatch: 500 },
    // SOAP 1.1 section 4.4: faultcode and faultstring are unqualified; the cause is in faultstring only,
    // because `detail` may not carry errors about header entries, which most causes are.
    envelope: (code, _fault, reason) => ({
      'soap:Envelope': {
        '@_xmlns:soap': SOAP11,
        'soap:Body': { 'soap:Fault': { faultcode: `soap:${SOAP11_CODES[code]}`, faultstring: reason } },
      },
    }),
  },
  '1.2': {
    statuses: { sender: 400, receiver: 500, version_mismatch: 500 },
    // The cause, as a qualified name in the extension namespace, is the Subcode: machine-readable,
    // and the same word as the REST path's `reason`.
    envelope: (code, fault, reason, namespace) => ({
      'env:Envelope': {
        '@_xmlns:env': SOAP12,
        ...(code === 'version_mismatch' && { 'env:Header': UPGRADE_HEADER }),
        'env:Body': {
          'env:Fault': {
            'env:Code': {
              'env:Value': `env:${SOAP12_CODES[code]}`,
              'env:Subcode': { 'env:Value': { '@_xmlns:t': namespace, '#text': `t:${fault.cause}` } },
            },
            'env:Reason': { 'env:Text': { '@_xml:lang': 'en', '#text': reason } },
          },
        },
      },
    }),
  },
};

const builder = new XMLBuilder({ ignoreAttributes: false, attributeNamePrefix: '@_' });

const DECLARATION = '<?xml version="1.0" encoding="UTF-8"?>';

/** Characters XML 1.0 cannot carry even escaped; the builder escapes markup, this removes the rest. */
const NOT_XML = /[^\t\n\r\x20-\ud7ff\ue000-\ufffd\u{10000}-\u{10ffff}]/gu;

export function contentTypeOf(version: SoapVersion): string {
  return `${SOAP_VERSIONS[version].mediaType}; charset=utf-8`;
}

/**
 * The HTTP answer carrying `fault` in `version`. `namespace` is the extension namespace, which
 * qualifies the SOAP 1.2 subcode.
 */
export function faultAnswer(version: SoapVersion, fault: Fault, namespace: string): SoapAnswer {
  const kind = FAULTS[fault.cause];
  const format = FAULT_FORMATS[version];
  const reason = (fault.detail === undefined ? kind.reason : `${kind.reason}: ${fault.detail}`).replace(
    NOT_XML,
    '\ufffd',
  );
  return {
    statusCode: kind.status ?? format.statuses[kind.code],
    contentType: contentTypeOf(version),
    body: DECLARATION + builder.build(format.envelope(kind.code, fault, reason, namespace)),
    isBase64Encoded: false,
  };
}
