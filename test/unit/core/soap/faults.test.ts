import { XMLParser, XMLValidator } from 'fast-xml-parser';
import { describe, expect, it } from 'vitest';
import type { SoapVersion } from '../../../../core/soap/envelope';
import { FAULTS, type FaultCause, faultAnswer, faultCauseOfDenial } from '../../../../core/soap/faults';
import { SOAP_DEFAULTS } from '../../../../core/soap/settings';
import { readXml } from '../../../../core/xml/xml-tree';
import { NS, SOAP11, SOAP12 } from './fixtures';

/** An independent reading of a fault: fast-xml-parser's plain object form, prefixes as written. */
const reader = new XMLParser({ ignoreAttributes: false, attributeNamePrefix: '@_', parseTagValue: false });

type Node = Record<string, unknown>;

/** The node at `path` of qualified names (as the fault writes them) below the document. */
function at(document: Node, ...path: string[]): Node {
  let node: unknown = document;
  for (const name of path) {
    node = (node as Node | undefined)?.[name];
    if (node === undefined) throw new Error(`no ${name} at ${path.join('/')}`);
  }
  return (typeof node === 'string' ? { '#text': node } : node) as Node;
}

const textOf = (node: Node) => node['#text'];

function fault(version: SoapVersion, cause: FaultCause, detail?: string) {
  const answer = faultAnswer(version, { cause, ...(detail !== undefined && { detail }) }, NS);
  expect(XMLValidator.validate(answer.body)).toBe(true);
  const reading = readXml(answer.body, {
    maxDepth: SOAP_DEFAULTS.soapMaxDepth,
    maxAttributes: SOAP_DEFAULTS.soapMaxAttributes,
    maxNamespaces: SOAP_DEFAULTS.soapMaxNamespaces,
  });
  if (!reading.ok) throw new Error(reading.detail);
  const envelope = reading.root;
  return { answer, envelope, document: reader.parse(answer.body) as Node };
}

describe('SOAP 1.1 faults', () => {
  const F = ['soap:Envelope', 'soap:Body', 'soap:Fault'];

  it('carry soap:Client or soap:Server and a faultstring naming the cause, with HTTP 500', () => {
    const { answer, envelope, document } = fault('1.1', 'limits_exceeded');
    expect(answer).toMatchObject({
      statusCode: 500,
      contentType: 'text/xml; charset=utf-8',
      isBase64Encoded: false,
    });
    expect(answer.body.startsWith('<?xml version="1.0" encoding="UTF-8"?><soap:Envelope')).toBe(true);
    expect([envelope.namespace, envelope.localName]).toEqual([SOAP11, 'Envelope']);
    expect(envelope.children[0]?.children.map((child) => [child.namespace, child.localName])).toEqual([
      [SOAP11, 'Fault'],
    ]);
    expect(at(document, 'soap:Envelope')['@_xmlns:soap']).toBe(SOAP11);
    expect(textOf(at(document, ...F, 'faultcode'))).toBe('soap:Client');
    expect(textOf(at(document, ...F, 'faultstring'))).toBe('Usage limits exceeded');
    expect(textOf(at(fault('1.1', 'platform_unavailable').document, ...F, 'faultcode'))).toBe('soap:Server');
    expect(textOf(at(fault('1.1', 'version_mismatch').document, ...F, 'faultcode'))).toBe(
      'soap:VersionMismatch',
    );
  });
});

describe('SOAP 1.2 faults', () => {
  const F = ['env:Envelope', 'env:Body', 'env:Fault'];

  it('carry env:Sender with the cause as subcode and an English reason, with HTTP 400', () => {
    const { answer, envelope, document } = fault('1.2', 'missing_credential', 'no ApiKey element');
    expect(answer).toMatchObject({ statusCode: 400, contentType: 'application/soap+xml; charset=utf-8' });
    expect([envelope.namespace, envelope.localName]).toEqual([SOAP12, 'Envelope']);
    expect(textOf(at(document, ...F, 'env:Code', 'env:Value'))).toBe('env:Sender');
    const subcode = at(document, ...F, 'env:Code', 'env:Subcode', 'env:Value');
    expect(subcode).toEqual({ '#text': 't:missing_credential', '@_xmlns:t': NS });
    const text = at(document, ...F, 'env:Reason', 'env:Text');
    expect(text).toEqual({ '#text': 'Missing credential: no ApiKey element', '@_xml:lang': 'en' });
  });

  it('answer env:Receiver with HTTP 500 for failures on the provider side', () => {
    const { answer, document } = fault('1.2', 'access_check_failed');
    expect(answer.statusCode).toBe(500);
    expect(textOf(at(document, ...F, 'env:Code', 'env:Value'))).toBe('env:Receiver');
  });

  it('list the supported envelopes in an Upgrade header on a version mismatch', () => {
    const { answer, document } = fault('1.2', 'version_mismatch');
    expect(answer.statusCode).toBe(500);
    expect(textOf(at(document, ...F, 'env:Code', 'env:Value'))).toBe('env:VersionMismatch');
    expect(at(document, 'env:Envelope', 'env:Header', 'env:Upgrade')['env:SupportedEnvelope']).toEqual([
      { '@_qname': 'v12:Envelope', '@_xmlns:v12': SOAP12 },
      { '@_qname': 'v11:Envelope', '@_xmlns:v11': SOAP11 },
    ]);
  });
});

describe('every fault', () => {
  const expectedStatus = (version: SoapVersion, cause: FaultCause): number => {
    const http: Partial<Record<FaultCause, number>> = {
      body_too_large: 413,
      unsupported_media_type: 415,
      backend_unavailable: 502,
      backend_timeout: 504,
    };
    const own = http[cause];
    if (own !== undefined) return own;
    return version === '1.2' && FAULTS[cause].code === 'sender' ? 400 : 500;
  };

  it('is a well-formed envelope of its version with the status its binding gives it', () => {
    for (const version of ['1.1', '1.2'] as const) {
      for (const cause of Object.keys(FAULTS) as FaultCause[]) {
        const { answer, envelope } = fault(version, cause, 'detail');
        expect(envelope.namespace).toBe(version === '1.1' ? SOAP11 : SOAP12);
        const body = envelope.children.find((child) => child.localName === 'Body');
        expect(body?.children.map((child) => child.localName)).toEqual(['Fault']);
        expect(answer.statusCode, `${version} ${cause}`).toBe(expectedStatus(version, cause));
        expect(answer.body).toContain(`${FAULTS[cause].reason}: detail`);
      }
    }
  });

  it('escapes whatever its detail holds, and drops characters XML cannot carry', () => {
    const hostile = `</faultstring><x>&amp; "quoted" 'single' ]]> <!-- \u0000\u0007\ud800 end`;
    const expected = `Invalid method: </faultstring><x>&amp; "quoted" 'single' ]]> <!-- \ufffd\ufffd\ufffd end`;
    const decoding = new XMLParser({ parseTagValue: false, htmlEntities: true });
    const faultstring = decoding.parse(fault('1.1', 'method_invalid', hostile).answer.body)['soap:Envelope'][
      'soap:Body'
    ]['soap:Fault'].faultstring;
    expect(faultstring).toBe(expected);
    const reason = decoding.parse(fault('1.2', 'method_invalid', hostile).answer.body)['env:Envelope'][
      'env:Body'
    ]['env:Fault']['env:Reason']['env:Text'];
    expect(reason).toBe(expected);
  });

  it('escapes the extension namespace put in the 1.2 subcode', () => {
    const answer = faultAnswer('1.2', { cause: 'limits_exceeded' }, 'urn:a"b<c>&d');
    expect(answer.body).toContain('xmlns:t="urn:a&quot;b&lt;c&gt;&amp;d"');
    expect(XMLValidator.validate(answer.body)).toBe(true);
  });
});

describe('denials', () => {
  it('name the access core reason they carry, and any other reason as access denied', () => {
    expect(faultCauseOfDenial('limits_exceeded')).toBe('limits_exceeded');
    expect(faultCauseOfDenial('no_mapping_rule')).toBe('no_mapping_rule');
    expect(faultCauseOfDenial('platform_unavailable')).toBe('platform_unavailable');
    expect(faultCauseOfDenial('something_new')).toBe('access_denied');
    expect(faultCauseOfDenial(undefined)).toBe('access_denied');
    expect(faultCauseOfDenial('backend_timeout')).toBe('access_denied');
  });
});
