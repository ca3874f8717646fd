import { describe, expect, it } from 'vitest';
import {
  type MessageReading,
  readSoapMessage,
  type SoapMessage,
  type SoapReadSettings,
  versionOfContentType,
} from '../../../../core/soap/envelope';
import { SOAP_DEFAULTS } from '../../../../core/soap/settings';
import { billionLaughs, envelope, KEY, NS, request, SOAP11, soapSettings } from './fixtures';

const MAX = 1024 * 1024;

function read(
  body: string,
  version: '1.1' | '1.2' = '1.1',
  max = MAX,
  bounds: Partial<SoapReadSettings> = {},
): MessageReading {
  return readSoapMessage(request(body, version), { ...SOAP_DEFAULTS, soapMaxBodyBytes: max, ...bounds });
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
      soapSettings(),
    );
    expect(message(reading).bytes.equals(bytes)).toBe(true);
    const latin1 = { contentType: 'text/xml', body: Buffer.from('<a>é</a>', 'latin1').toString('base64') };
    expect(refusal(readSoapMessage({ ...latin1, isBase64Encoded: true }, soapSettings())).detail).toContain(
      'UTF-8',
    );
  });

  it('reads element names objects reserve (constructor, prototype, toString) like any other', () => {
    const body = '<constructor><prototype>1</prototype><__proto__/><toString/></constructor>';
    const read11 = message(read(envelope({ body })));
    expect(read11.bodyElements.map((b) => [b.localName, b.children.map((c) => c.localName)])).toEqual([
      ['constructor', ['prototype', '__proto__', 'toString']],
    ]);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it('reads four levels and keeps deeper content as written, markup included', () => {
    const body = `<Op><arg>${'<n a="1">'.repeat(60)}x &amp; y${'</n>'.repeat(60)}</arg></Op>`;
    const [operation] = message(read(envelope({ body }))).bodyElements;
    expect(operation?.children[0]?.localName).toBe('arg');
    expect(operation?.children[0]?.children).toEqual([]);
    expect(operation?.children[0]?.text.startsWith('<n a="1"><n a="1">')).toBe(true);
    expect(operation?.children[0]?.text).toContain('x &amp; y');
  });

  it('checks the content below four levels too: matching tags, references, declared prefixes', () => {
    for (const body of [
      '<Op><a><b><c></b></a></Op>',
      '<Op><a><b>&nbsp;</b></a></Op>',
      '<Op><a><x:b/></a></Op>',
    ]) {
      expect(refusal(read(envelope({ body }))).cause).toBe('unreadable_envelope');
    }
  });
});

/**
 * The shape that made reading quadratic: K prefixes declared on the Envelope, and K header blocks that each
 * declare one more. Each declaring element used to copy its parent's whole scope.
 */
function declarationsEverywhere(prefixes: number): string {
  const declarations = Array.from({ length: prefixes }, (_, i) => `xmlns:p${i}="urn:p${i}"`).join(' ');
  const blocks = Array.from({ length: prefixes }, (_, i) => `<q${i}:b xmlns:q${i}="urn:q"/>`).join('');
  return envelope({
    header: `${blocks}<t:ApiKey>${KEY}</t:ApiKey><t:method>Op</t:method>`,
    body: '<Op/>',
  }).replace(`xmlns:t="${NS}"`, `xmlns:t="${NS}" ${declarations}`);
}

/** CPU time of one call, in ms: other load on the machine inflates it less than wall time. */
function cpuMs(work: () => unknown): number {
  const before = process.cpuUsage();
  work();
  const used = process.cpuUsage(before);
  return (used.user + used.system) / 1000;
}

describe('reading cost', () => {
  it('reads many prefixes times many declaring elements in time linear in the size', () => {
    const document = declarationsEverywhere(9_000);
    expect(Buffer.byteLength(document)).toBeGreaterThan(400_000);
    let reading: MessageReading | undefined;
    // Tens of ms when linear; about a minute when each declaring element copies the Envelope's bindings.
    const ms = cpuMs(() => {
      reading = read(document, '1.1', MAX, { soapMaxNamespaces: 10_000, soapMaxAttributes: 10_000 });
    });
    expect(reading && message(reading).headerBlocks).toHaveLength(9_002);
    expect(ms).toBeLessThan(2000);
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
    expect(
      refusal(
        readSoapMessage(
          { ...base64, isBase64Encoded: true },
          { ...SOAP_DEFAULTS, soapMaxBodyBytes: size - 1 },
        ),
      ),
    ).toMatchObject({
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
      soapSettings(),
    );
    expect(refusal(reading).cause).toBe('unsupported_media_type');
  });
});

describe('structural bounds', () => {
  const nested = (levels: number) => `<Op>${'<n>'.repeat(levels)}${'</n>'.repeat(levels)}</Op>`;

  it('refuses an envelope nested deeper than soapMaxDepth, naming the setting', () => {
    // Envelope, Body and Op are three levels.
    expect(read(envelope({ body: nested(61) })).ok).toBe(true);
    const deep = refusal(read(envelope({ body: nested(62) })));
    expect(deep).toMatchObject({ cause: 'envelope_too_complex', version: '1.1' });
    expect(deep.detail).toContain('more than 64 levels of elements');
    expect(deep.detail).toContain('soapMaxDepth');
    expect(read(envelope({ body: nested(62) }), '1.1', MAX, { soapMaxDepth: 65 }).ok).toBe(true);
    const deeper = refusal(read(envelope({ body: nested(30_000) })));
    expect(deeper.cause).toBe('envelope_too_complex');
  });

  it('refuses more attributes on one element than soapMaxAttributes, naming the setting', () => {
    const attributes = (count: number) => Array.from({ length: count }, (_, i) => `a${i}="1"`).join(' ');
    expect(read(envelope({ body: `<Op ${attributes(256)}/>` })).ok).toBe(true);
    const many = refusal(read(envelope({ body: `<Op ${attributes(257)}/>` })));
    expect(many).toMatchObject({ cause: 'envelope_too_complex' });
    expect(many.detail).toContain('soapMaxAttributes');
    expect(
      read(envelope({ body: `<Op ${attributes(257)}/>` }), '1.1', MAX, { soapMaxAttributes: 300 }).ok,
    ).toBe(true);
  });

  it('refuses more namespace declarations in scope than soapMaxNamespaces, naming the setting', () => {
    // The Envelope declares soap and t; a sibling's declarations leave scope with it.
    const declarations = (count: number, from = 0) =>
      Array.from({ length: count }, (_, i) => `xmlns:p${from + i}="urn:p"`).join(' ');
    const siblings = `<a ${declarations(254)}/><b ${declarations(254)}/>`;
    expect(read(envelope({ body: `<Op>${siblings}</Op>` })).ok).toBe(true);
    const nestedScopes = `<Op ${declarations(200)}><a ${declarations(55, 200)}/></Op>`;
    const over = refusal(read(envelope({ body: nestedScopes })));
    expect(over).toMatchObject({ cause: 'envelope_too_complex' });
    expect(over.detail).toContain('more than 256 namespace declarations in scope');
    expect(over.detail).toContain('soapMaxNamespaces');
  });
});
