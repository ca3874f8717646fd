import { XMLParser } from 'fast-xml-parser';
import { describe, expect, it } from 'vitest';
import { readSoapMessage } from '../../../../core/soap/envelope';
import { SOAP_ECHO_NAMESPACE, soapEcho, startSoapEcho } from '../../../../local/soap-echo';
import { CONTENT_TYPES, envelope, KEY, SOAP11, SOAP12, soapSettings } from './fixtures';

const reader = new XMLParser({ ignoreAttributes: false, attributeNamePrefix: '@_', parseTagValue: false });

describe('the demo SOAP backend', () => {
  it('answers a SOAP 1.1 call with a 1.1 envelope naming the operation and the SOAPAction', () => {
    const answer = soapEcho({
      contentType: CONTENT_TYPES['1.1'],
      soapAction: '"urn:example:GetQuote"',
      body: envelope(),
    });
    expect(answer).toMatchObject({ statusCode: 200, contentType: 'text/xml; charset=utf-8' });
    const parsed = reader.parse(answer.body);
    expect(parsed['soap:Envelope']['@_xmlns:soap']).toBe(SOAP11);
    expect(parsed['soap:Envelope']['soap:Body']['op:GetQuoteResponse']).toEqual({
      '@_xmlns:op': 'urn:example:quotes',
      'op:operation': 'GetQuote',
      'op:action': '"urn:example:GetQuote"',
      'op:soapVersion': '1.1',
    });
    // The answer is itself an envelope the proxy's reader accepts.
    expect(
      readSoapMessage(
        { contentType: answer.contentType, body: answer.body, isBase64Encoded: false },
        soapSettings(),
      ).ok,
    ).toBe(true);
  });

  it('answers a SOAP 1.2 call in 1.2, with the action of the content type, for an operation in no namespace', () => {
    const answer = soapEcho({
      contentType: CONTENT_TYPES['1.2'],
      body: envelope({ version: '1.2', body: '<Ping/>' }),
    });
    expect(answer).toMatchObject({ statusCode: 200, contentType: 'application/soap+xml; charset=utf-8' });
    const parsed = reader.parse(answer.body);
    expect(parsed['soap:Envelope']['@_xmlns:soap']).toBe(SOAP12);
    expect(parsed['soap:Envelope']['soap:Body'].PingResponse).toEqual({
      operation: 'Ping',
      action: 'urn:example:GetQuote',
      soapVersion: '1.2',
    });
  });

  it('never echoes the SOAP header, which carries the credential', () => {
    const answer = soapEcho({ contentType: CONTENT_TYPES['1.1'], body: envelope() });
    expect(answer.body).not.toContain(KEY);
    expect(answer.body).not.toContain('Header');
  });

  it('answers a Fault for anything that is not one SOAP call', () => {
    const notSoap = soapEcho({ contentType: 'application/json', body: '{}' });
    expect(notSoap).toMatchObject({ statusCode: 415, contentType: 'text/xml; charset=utf-8' });
    const twoOperations = soapEcho({
      contentType: CONTENT_TYPES['1.2'],
      body: envelope({ version: '1.2', body: '<A/><B/>' }),
    });
    expect(twoOperations.statusCode).toBe(400);
    expect(twoOperations.body).toContain(`xmlns:t="${SOAP_ECHO_NAMESPACE}"`);
    expect(twoOperations.body).toContain('exactly one operation element');
  });

  it('serves over HTTP on a free loopback port, POST only', async () => {
    const server = await startSoapEcho();
    try {
      const answer = await fetch(server.url, {
        method: 'POST',
        headers: { 'content-type': CONTENT_TYPES['1.1'], soapaction: 'urn:a' },
        body: envelope(),
      });
      expect(answer.status).toBe(200);
      expect(await answer.text()).toContain('<op:action>urn:a</op:action>');
      expect((await fetch(server.url)).status).toBe(405);
    } finally {
      await server.stop();
    }
  });
});
