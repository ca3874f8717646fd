/** Envelopes, requests and settings shared by the SOAP tests. */
import type { APIGatewayProxyEvent } from 'aws-lambda';
import { SOAP_VERSIONS, type SoapRequest, type SoapVersion } from '../../../../core/soap/envelope';
import { parseSoapSettings, type SoapSettings } from '../../../../core/soap/settings';
import { textPostEvent } from '../../../../local/proxy-event';

export const NS = 'urn:example:access';
export const KEY = 'demo-key-1';
export const SOAP11 = SOAP_VERSIONS['1.1'].namespace;
export const SOAP12 = SOAP_VERSIONS['1.2'].namespace;

export const CONTENT_TYPES: Readonly<Record<SoapVersion, string>> = {
  '1.1': 'text/xml; charset=utf-8',
  '1.2': 'application/soap+xml; charset=utf-8; action="urn:example:GetQuote"',
};

export interface EnvelopeParts {
  readonly version?: SoapVersion;
  /** Header blocks, as XML; `t` is bound to NS on the Envelope. */
  readonly header?: string | null;
  readonly body?: string;
}

/** A SOAP envelope as the specification shows it: prefix `t` for the extension namespace on the Envelope. */
export function envelope({
  version = '1.1',
  header = `<t:ApiKey>${KEY}</t:ApiKey><t:method>GetQuote</t:method>`,
  body = '<q:GetQuote xmlns:q="urn:example:quotes"><q:symbol>ACME</q:symbol></q:GetQuote>',
}: EnvelopeParts = {}): string {
  const soapHeader = header === null ? '' : `<soap:Header>${header}</soap:Header>`;
  return (
    `<?xml version="1.0" encoding="UTF-8"?>` +
    `<soap:Envelope xmlns:soap="${SOAP_VERSIONS[version].namespace}" xmlns:t="${NS}">` +
    `${soapHeader}<soap:Body>${body}</soap:Body></soap:Envelope>`
  );
}

export function request(body: string, version: SoapVersion = '1.1'): SoapRequest {
  return { contentType: CONTENT_TYPES[version], body, isBase64Encoded: false };
}

export function soapSettings(overrides: Partial<SoapSettings> = {}): SoapSettings {
  return parseSoapSettings({ soapNamespace: NS, soapBackendUrl: 'http://127.0.0.1:9/soap', ...overrides });
}

/** The billion-laughs document: ten levels of ten references, 10^9 "lol"s once expanded. */
export function billionLaughs(version: SoapVersion = '1.1'): string {
  const entities = ['<!ENTITY lol0 "lol">'];
  for (let level = 1; level <= 9; level++) {
    entities.push(`<!ENTITY lol${level} "${`&lol${level - 1};`.repeat(10)}">`);
  }
  return (
    `<?xml version="1.0"?><!DOCTYPE soap:Envelope [${entities.join('')}]>` +
    envelope({ version, header: `<t:ApiKey>&lol9;</t:ApiKey><t:method>GetQuote</t:method>` }).replace(
      /^<\?xml[^>]*\?>/,
      '',
    )
  );
}

/** The event API Gateway's Lambda proxy integration hands the SOAP route. */
export function proxyEvent(
  body: string,
  headers: Record<string, string> = { 'Content-Type': CONTENT_TYPES['1.1'] },
): APIGatewayProxyEvent {
  return textPostEvent('/soap', body, headers);
}
