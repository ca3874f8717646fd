import { describe, expect, it } from 'vitest';
import {
  type MessageReading,
  readSoapMessage,
  type SoapMessage,
  versionOfContentType,
} from '../../../lambdas/core/soap/envelope';
import { readXml, XmlReadError } from '../../../lambdas/core/soap/xml-tree';
import { billionLaughs, envelope, KEY, NS, request, SOAP11 } from './fixtures';

const MAX = 1024 * 1024;

function read(body: string, version: '1.1' | '1.2' = '1.1', max = MAX): MessageReading {
  return readSoapMessage(request(body, version), max);
}

function message(reading: MessageReading): SoapMessage {
  if (!reading.ok) throw new Error(`refused: ${reading.cause}: ${reading.detail}`);
  return reading.message;
}

function refusal(reading: MessageReading) {
  if (reading.ok) throw new Error('read, though it should have been refused');
  return reading;
}

describe('SOAP envelopes', () => {
  it('reads a SOAP 1.1 envelope: version, header blocks by namespace, the operation, the exact bytes', () => {
    const body = envelope();
    const read11 = message(read(body));
    expect(read11.version).toBe('1.1');
    expect(read11.headerBlocks.map((b) => [b.namespace, b.localName, b.text])).toEqual([
      [NS, 'ApiKey', KEY],
      [NS, 'method', 'GetQuote'],
    ]);
    expect(read11.bodyElements.map((b) => [b.namespace, b.localName])).toEqual([
      ['urn:example:quotes', 'GetQuote'],
    ]);
    expect(read11.bytes.equals(Buffer.from(body, 'utf8'))).toBe(true);
    expect(read11.contentType).toBe('text/xml; charset=utf-8');
  });

  it('reads a SOAP 1.2 envelope sent as application/soap+xml with an action parameter', () => {
    const read12 = message(read(envelope({ version: '1.2' }), '1.2'));
    expect(read12.version).toBe('1.2');
    expect(read12.headerBlocks.map((b) => b.localName)).toEqual(['ApiKey', 'method']);
    expect(read12.contentType).toContain('action="urn:example:GetQuote"');
  });

  it('resolves namespaces by URI, whatever the prefix: other prefixes, default namespaces, redeclarations', () => {
    const documents = [
      // another prefix on the Envelope, and a SOAP prefix other than soap
      `<e:Envelope xmlns:e="${SOAP11}" xmlns:acc="${NS}"><e:Header><acc:ApiKey>${KEY}</acc:ApiKey></e:Header><e:Body><Op/></e:Body></e:Envelope>`,
      // a default namespace declared on the header element itself
      `<soap:Envelope xmlns:soap="${SOAP11}"><soap:Header><ApiKey xmlns="${NS}">${KEY}</ApiKey></soap:Header><soap:Body><Op/></soap:Body></soap:Envelope>`,
      // the SOAP namespace as the default namespace
      `<Envelope xmlns="${SOAP11}"><Header><t:ApiKey xmlns:t="${NS}">${KEY}</t:ApiKey></Header><Body><Op xmlns=""/></Body></Envelope>`,
      // `t` bound elsewhere on the Envelope, rebound to the extension namespace on the Header
      `<s:Envelope xmlns:s="${SOAP11}" xmlns:t="urn:other"><s:Header xmlns:t="${NS}"><t:ApiKey>${KEY}</t:ApiKey></s:Header><s:Body><t:Op/></s:Body></s:Envelope>`,
    ];
    for (const document of documents) {
      const read11 = message(read(document));
      expect(read11.headerBlocks.map((b) => [b.namespace, b.localName, b.text])).toEqual([
        [NS, 'ApiKey', KEY],
      ]);
    }
    const rebound = message(read(documents[3] as string));
    expect(rebound.bodyElements[0]?.namespace).toBe('urn:other');
    const undeclaredDefault = message(read(documents[2] as string));
    expect(undeclaredDefault.bodyElements[0]?.namespace).toBe('');
  });

  it('keeps the extension prefix bound to another URI out of the extension namespace', () => {
    const mismatch = envelope().replace(`xmlns:t="${NS}"`, 'xmlns:t="urn:example:other"');
    const read11 = message(read(mismatch));
    expect(read11.headerBlocks.every((b) => b.namespace === 'urn:example:other')).toBe(true);
  });

  it('refuses an undeclared prefix and prefixes bound against the namespace rules', () => {
    const unbound = `<soap:Envelope xmlns:soap="${SOAP11}"><soap:Header><x:ApiKey>k</x:ApiKey></soap:Header><soap:Body/></soap:Envelope>`;
    expect(refusal(read(unbound))).toMatchObject({ cause: 'unreadable_envelope' });
    expect(refusal(read(unbound)).detail).toContain('prefix x');
    for (const binding of [
      'xmlns:x=""',
      'xmlns:xml="urn:not-xml"',
      `xmlns:x="http://www.w3.org/2000/xmlns/"`,
    ]) {
      const document = envelope().replace('xmlns:t=', `${binding} xmlns:t=`);
      expect(refusal(read(document)).cause).toBe('unreadable_envelope');
    }
  });

  it('answers a version mismatch for an Envelope of another namespace, and refuses other roots', () => {
    const draft = envelope().replace(SOAP11, 'http://www.w3.org/2001/12/soap-envelope');
    expect(refusal(read(draft))).toMatchObject({ cause: 'version_mismatch', version: '1.1' });
    expect(refusal(read('<Quote><symbol>ACME</symbol></Quote>'))).toMatchObject({
      cause: 'unreadable_envelope',
    });
  });

  it('wants the Body after an optional Header, and nothing after it but what SOAP 1.1 allows', () => {
    expect(message(read(envelope({ header: null }))).headerBlocks).toEqual([]);
    const noBody = `<soap:Envelope xmlns:soap="${SOAP11}"><soap:Header/></soap:Envelope>`;
    expect(refusal(read(noBody)).cause).toBe('unreadable_envelope');
    const headerLast = `<soap:Envelope xmlns:soap="${SOAP11}"><soap:Body/><soap:Header/></soap:Envelope>`;
    expect(refusal(read(headerLast)).cause).toBe('unreadable_envelope');
    const trailer = '<x:Trailer xmlns:x="urn:x"/>';
    const after11 = envelope().replace('</soap:Envelope>', `${trailer}</soap:Envelope>`);
    expect(message(read(after11)).bodyElements).toHaveLength(1);
    const after12 = envelope({ version: '1.2' }).replace('</soap:Envelope>', `${trailer}</soap:Envelope>`);
    expect(refusal(read(after12, '1.2')).cause).toBe('unreadable_envelope');
    const text = envelope().replace('<soap:Body>', 'loose text<soap:Body>');
    expect(refusal(read(text)).cause).toBe('unreadable_envelope');
  });

  it('decodes predefined entities, character references and CDATA in values, and refuses undeclared entities', () => {
    const header = '<t:ApiKey>a&amp;b&#34;c&#x41;<![CDATA[<d>]]></t:ApiKey><t:method>GetQuote</t:method>';
    expect(message(read(envelope({ header }))).headerBlocks[0]?.text).toBe('a&b"cA<d>');
    for (const value of ['&nbsp;', '&#0;', '&#xD800;', '&#x110000;']) {
      const bad = envelope({ header: `<t:ApiKey>k${value}</t:ApiKey>` });
      expect(refusal(read(bad)).cause).toBe('unreadable_envelope');
    }
  });

  it('accepts a byte order mark and a base64 body, and forwards the bytes exactly', () => {
    const withBom = `\ufeff${envelope()}`;
    expect(message(read(withBom)).headerBlocks).toHaveLength(2);
    const bytes = Buffer.from(envelope({ body: '<Op>café</Op>' }), 'utf8');
    const reading = readSoapMessage(
      { contentType: 'text/xml', body: bytes.toString('base64'), isBase64Encoded: true },
      MAX,
    );
    expect(message(reading).bytes.equals(bytes)).toBe(true);
    const latin1 = { contentType: 'text/xml', body: Buffer.from('<a>é</a>', 'latin1').toString('base64') };
    expect(refusal(readSoapMessage({ ...latin1, isBase64Encoded: true }, MAX)).detail).toContain('UTF-8');
  });

  it('reads element names objects reserve (constructor, prototype, toString) like any other', () => {
    const body = '<constructor><prototype>1</prototype><__proto__/><toString/></constructor>';
    const read11 = message(read(envelope({ body })));
    expect(read11.bodyElements.map((b) => [b.localName, b.children.map((c) => c.localName)])).toEqual([
      ['constructor', ['prototype', '__proto__', 'toString']],
    ]);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it('reads four levels and leaves deeper content unparsed, so payload depth costs nothing', () => {
    const depth = 50_000;
    const body = `<Op><arg>${'<n>'.repeat(depth)}x${'</n>'.repeat(depth)}</arg></Op>`;
    const [operation] = message(read(envelope({ body }))).bodyElements;
    expect(operation?.children[0]?.localName).toBe('arg');
    expect(operation?.children[0]?.children).toEqual([]);
    expect(operation?.children[0]?.text.startsWith('<n><n>')).toBe(true);
  });
});

describe('refused before parsing', () => {
  it('refuses a billion-laughs document at once, without expanding anything', () => {
    const startedAt = performance.now();
    const reading = refusal(read(billionLaughs()));
    const elapsedMs = performance.now() - startedAt;
    // Refused by the check on the raw text, not by the parser.
    expect(reading).toMatchObject({
      cause: 'unreadable_envelope',
      detail: 'document type and entity declarations are not accepted',
    });
    console.log(`billion laughs refused in ${elapsedMs.toFixed(3)} ms`);
  });

  it('refuses every markup declaration wherever it stands: DOCTYPE, external entities, inside the Body', () => {
    const documents = [
      `<!DOCTYPE x SYSTEM "file:///etc/passwd">${envelope().replace(/^<\?xml[^>]*\?>/, '')}`,
      envelope().replace('<soap:Body>', '<soap:Body><!DOCTYPE x [<!ENTITY e "x">]>'),
      `<!doctype x>${envelope().replace(/^<\?xml[^>]*\?>/, '')}`,
      envelope({ body: '<Op><!ENTITY e "x"></Op>' }),
    ];
    for (const document of documents) {
      expect(refusal(read(document)).detail).toBe('document type and entity declarations are not accepted');
    }
    // Comments and CDATA sections are not declarations.
    expect(message(read(envelope({ body: '<!-- a --><Op><![CDATA[x]]></Op>' }))).bodyElements).toHaveLength(
      1,
    );
  });

  it('refuses a body over the cap before reading it, text or base64; a body at the cap is read', () => {
    const body = envelope();
    const size = Buffer.byteLength(body, 'utf8');
    expect(read(body, '1.1', size).ok).toBe(true);
    expect(refusal(read(body, '1.1', size - 1))).toMatchObject({ cause: 'body_too_large', version: '1.1' });
    const multibyte = envelope({ body: `<Op>${'é'.repeat(100)}</Op>` });
    expect(refusal(read(multibyte, '1.1', multibyte.length))).toMatchObject({ cause: 'body_too_large' });
    const base64 = { contentType: 'application/soap+xml', body: Buffer.from(body).toString('base64') };
    expect(refusal(readSoapMessage({ ...base64, isBase64Encoded: true }, size - 1))).toMatchObject({
      cause: 'body_too_large',
      version: '1.2',
    });
  });

  it('refuses bodies that are not XML with an unreadable-envelope fault in the announced version', () => {
    for (const body of ['', '{"method":"GetQuote"}', 'plain text', '<soap:Envelope', '<a></b>', '<a/><b/>']) {
      expect(refusal(read(body, '1.2'))).toMatchObject({ cause: 'unreadable_envelope', version: '1.2' });
    }
  });
});

describe('content types', () => {
  it('takes the version from the media type, case-insensitively, with or without parameters', () => {
    expect(versionOfContentType('text/xml')).toEqual({ ok: true, version: '1.1' });
    expect(versionOfContentType('Text/XML; charset="UTF-8"')).toEqual({ ok: true, version: '1.1' });
    expect(versionOfContentType('application/soap+xml;charset=utf8;action="urn:a;b"')).toEqual({
      ok: true,
      version: '1.2',
    });
  });

  it('refuses other media types, a missing or broken content type and charsets other than UTF-8', () => {
    for (const contentType of [undefined, '', 'application/json', 'application/xml', 'text/plain', 'xml']) {
      expect(versionOfContentType(contentType)).toMatchObject({
        ok: false,
        cause: 'unsupported_media_type',
        version: '1.1',
      });
    }
    expect(versionOfContentType('application/soap+xml; charset=iso-8859-1')).toMatchObject({
      ok: false,
      cause: 'unsupported_media_type',
      version: '1.2',
    });
  });

  it('refuses an envelope whose version is not the one its content type announces, answering in its own', () => {
    expect(refusal(read(envelope({ version: '1.2' }), '1.1'))).toMatchObject({
      cause: 'unsupported_media_type',
      version: '1.2',
    });
    expect(refusal(read(envelope({ version: '1.1' }), '1.2'))).toMatchObject({
      cause: 'unsupported_media_type',
      version: '1.1',
    });
  });

  it('checks the content type before anything else: a JSON body sent as JSON is a media type refusal', () => {
    const reading = readSoapMessage(
      { contentType: 'application/json', body: '{}', isBase64Encoded: false },
      MAX,
    );
    expect(refusal(reading).cause).toBe('unsupported_media_type');
  });
});

describe('readXml', () => {
  it('refuses entity declarations itself too, should a DTD ever reach the parser', () => {
    expect(() => readXml(billionLaughs())).toThrow('entity declarations are not accepted');
  });

  it('throws XmlReadError with the position for documents that are not well-formed', () => {
    expect(() => readXml('<a><b></a>')).toThrow(XmlReadError);
    expect(() => readXml('<a><b></a>')).toThrow(/line 1/);
    expect(() => readXml('<a x="1" x="2"/>')).toThrow(XmlReadError);
    expect(() => readXml('<a:b:c xmlns:a="urn:a"/>')).toThrow(XmlReadError);
  });
});
