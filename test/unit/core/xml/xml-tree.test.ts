import { describe, expect, it } from 'vitest';
import { readXml, type XmlBounds, type XmlElement, type XmlReading } from '../../../../core/xml/xml-tree';

const BOUNDS: XmlBounds = { maxDepth: 64, maxAttributes: 256, maxNamespaces: 256 };

function root(document: string): XmlElement {
  const reading = readXml(document, BOUNDS);
  if (!reading.ok) throw new Error(`refused: ${reading.detail}`);
  return reading.root;
}

function refused(document: string, bounds = BOUNDS): Extract<XmlReading, { ok: false }> {
  const reading = readXml(document, bounds);
  if (reading.ok) throw new Error(`read, though it is not well-formed: ${document}`);
  return reading;
}

describe('readXml', () => {
  it('reads names by namespace URI, text runs trimmed and decoded, CDATA, comments and instructions', () => {
    const document =
      '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n<!-- before --><?pi data?>' +
      '<a:r xmlns:a="urn:a" xmlns="urn:d" x="1" a:y=\'2\'>\n <b> x &lt;&#65;&#x42;&quot; </b><![CDATA[ <c> ]]>' +
      '<a:c xmlns:a="urn:other"/><e xmlns=""/><!-- in --><?pi?></a:r>\n<!-- after -->';
    const element = root(document);
    expect([element.namespace, element.localName, element.text]).toEqual(['urn:a', 'r', '<c>']);
    expect(element.children.map((child) => [child.namespace, child.localName, child.text])).toEqual([
      ['urn:d', 'b', 'x <AB"'],
      ['urn:other', 'c', ''],
      ['', 'e', ''],
    ]);
  });

  it('refuses documents that are not well-formed, saying where', () => {
    const documents = [
      '',
      'text',
      '<a>',
      '<a></b>',
      '<a/><b/>',
      '<a/>text',
      '<a x="1" x="2"/>',
      '<a x="1"y="2"/>',
      '<a x=1/>',
      '<a x="<"/>',
      '<a>&nbsp;</a>',
      '<a>& b</a>',
      '<a>&#0;</a>',
      '<a>&#xD800;</a>',
      '<a>]]></a>',
      '<a>\u0001</a>',
      '<a><!-- a -- b --></a>',
      '<a><![CDATA[x</a>',
      '<a><?xml version="1.0"?></a>',
      '<?xml version="2"?><a/>',
      '<!DOCTYPE a><a/>',
      '<a><!ENTITY e "x"></a>',
      '<1a/>',
      '</a>',
    ];
    for (const document of documents) expect(refused(document).bound, document).toBeUndefined();
    expect(refused('<a>\n<b></a>').detail).toMatch(/line 2, column 4/);
  });

  it('refuses documents that are not namespace-well-formed', () => {
    const documents = [
      '<x:a/>',
      '<a x:y="1"/>',
      '<a:b:c xmlns:a="urn:a"/>',
      '<a xmlns:p=""/>',
      '<a xmlns:xml="urn:not-xml"/>',
      '<a xmlns:xmlns="urn:x"/>',
      '<a xmlns:p="http://www.w3.org/2000/xmlns/"/>',
      '<a xmlns:p="urn:p" xmlns:q="urn:p" p:x="1" q:x="2"/>',
      '<xmlns:a/>',
      '<a><p:b xmlns:p="urn:p"/><p:c/></a>',
    ];
    for (const document of documents) expect(refused(document).bound, document).toBeUndefined();
  });

  it('names the bound a document goes over', () => {
    const small: XmlBounds = { maxDepth: 3, maxAttributes: 2, maxNamespaces: 2 };
    expect(readXml('<a><b><c/></b></a>', small).ok).toBe(true);
    expect(refused('<a><b><c><d/></c></b></a>', small).bound).toBe('maxDepth');
    expect(refused('<a x="1" y="2" z="3"/>', small).bound).toBe('maxAttributes');
    expect(refused('<a xmlns:p="urn:p" xmlns:q="urn:q"><b/><c xmlns:p="urn:p"/></a>', small).bound).toBe(
      'maxNamespaces',
    );
    expect(refused('<a xmlns:p="urn:p"><b xmlns:q="urn:q"><c xmlns="urn:c"/></b></a>', small).bound).toBe(
      'maxNamespaces',
    );
    // A sibling's declarations leave scope with it.
    expect(readXml('<a xmlns:p="urn:p"><b xmlns:q="urn:q"/><c xmlns:q="urn:q"/></a>', small).ok).toBe(true);
  });
});
