/**
 * Reads an XML document into elements named by namespace URI and local name, with fast-xml-parser.
 *
 * fast-xml-parser keeps prefixes as written (`t:ApiKey`) and knows nothing of namespaces, so the
 * `xmlns` and `xmlns:p` declarations are resolved here, scope by scope: the same element may use any
 * prefix, a default namespace, or a prefix redeclared on an inner element.
 *
 * Only the top `READ_DEPTH` levels become elements. The content of an element at that depth stays
 * unparsed text, so an operation's payload, however deep or large, costs no object per node and its
 * element names never reach object keys. The caller refuses markup declarations (DTDs) before this
 * runs; the entity decoder below knows XML's five predefined entities and character references only.
 */
import { XMLParser, XMLValidator } from 'fast-xml-parser';

import { XML_NAMESPACE, XMLNS_NAMESPACE } from './namespaces';

export { XML_NAMESPACE, XMLNS_NAMESPACE };

/** Envelope, Header or Body, header block or operation, and the children of those. */
export const READ_DEPTH = 4;

export interface XmlElement {
  /** '' when the element is in no namespace. */
  readonly namespace: string;
  readonly localName: string;
  readonly children: readonly XmlElement[];
  /**
   * The element's own text, character data and CDATA sections, entity references decoded, each
   * text run trimmed. At READ_DEPTH: the unparsed content, markup included.
   */
  readonly text: string;
}

/** The document is not well-formed XML, or not namespace-well-formed; the message says where. */
export class XmlReadError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'XmlReadError';
  }
}

const PREDEFINED_ENTITIES: ReadonlyMap<string, string> = new Map([
  ['lt', '<'],
  ['gt', '>'],
  ['amp', '&'],
  ['apos', "'"],
  ['quot', '"'],
]);

const REFERENCE = /&(?:#x([0-9a-fA-F]+)|#([0-9]+)|([^;&\s]+));/g;

/** XML 1.0's Char production: what a character reference may stand for. */
function isXmlChar(codePoint: number): boolean {
  return (
    codePoint === 0x9 ||
    codePoint === 0xa ||
    codePoint === 0xd ||
    (codePoint >= 0x20 && codePoint <= 0xd7ff) ||
    (codePoint >= 0xe000 && codePoint <= 0xfffd) ||
    (codePoint >= 0x10000 && codePoint <= 0x10ffff)
  );
}

function replaceReference(reference: string, hex?: string, decimal?: string, name?: string): string {
  if (name !== undefined) {
    const value = PREDEFINED_ENTITIES.get(name);
    if (value === undefined) throw new XmlReadError(`entity ${reference} is not declared`);
    return value;
  }
  const codePoint = hex !== undefined ? Number.parseInt(hex, 16) : Number(decimal);
  if (!isXmlChar(codePoint))
    throw new XmlReadError(`character reference ${reference} is not an XML character`);
  return String.fromCodePoint(codePoint);
}

/**
 * fast-xml-parser's default decoder leaves character references such as `&#34;` undecoded (some
 * serializers write quotes in values that way), and its HTML option would also decode HTML's names,
 * which XML does not have. This decoder follows XML 1.0 section 4: predefined entities and character
 * references; any other entity is undeclared, because entity declarations are never accepted.
 */
const xmlEntityDecoder = {
  reset() {},
  setXmlVersion() {},
  setExternalEntities() {},
  addInputEntities() {
    throw new XmlReadError('entity declarations are not accepted');
  },
  decode(text: string): string {
    return text.includes('&') ? text.replace(REFERENCE, replaceReference) : text;
  },
};

const ATTRIBUTES = ':@';
const TEXT = '#text';
const ATTRIBUTE_PREFIX = '@_';
const XMLNS = `${ATTRIBUTE_PREFIX}xmlns`;
const XMLNS_PREFIXED = `${XMLNS}:`;

/** Element names fast-xml-parser would refuse (it guards object prototypes); no XML name starts with `#`. */
const OBJECT_MEMBER_NAMES: ReadonlySet<string> = new Set(['__proto__', 'constructor', 'prototype']);
const MEMBER_MARK = '#';

/** fast-xml-parser's ordered node: `{ [name]: children }` plus `':@'` for attributes, or `{ '#text': text }`. */
type OrderedNode = Readonly<Record<string, unknown>>;

const parser = new XMLParser({
  preserveOrder: true,
  // Only namespace declarations matter here; other attributes are neither kept nor decoded.
  ignoreAttributes: (name: string) => name !== 'xmlns' && !name.startsWith('xmlns:'),
  attributeNamePrefix: ATTRIBUTE_PREFIX,
  removeNSPrefix: false,
  parseTagValue: false,
  parseAttributeValue: false,
  trimValues: true,
  ignoreDeclaration: true,
  ignorePiTags: true,
  stopNodes: [Array.from({ length: READ_DEPTH }, () => '*').join('.')],
  processEntities: true,
  entityDecoder: xmlEntityDecoder,
  // No callback here reads the element path, so the parser need not build it as a string per element.
  jPath: false,
  // Ordered nodes are fresh object literals read by their own keys, so names such as `toString` are
  // kept as written, and the names the parser refuses outright are carried under a mark no XML name has.
  onDangerousProperty: (name: string) => name,
  transformTagName: (name: string) => (OBJECT_MEMBER_NAMES.has(name) ? `${MEMBER_MARK}${name}` : name),
});

type Scope = ReadonlyMap<string, string>;

const ROOT_SCOPE: Scope = new Map([['xml', XML_NAMESPACE]]);

function nameOf(node: OrderedNode): string | undefined {
  for (const key in node) if (key !== ATTRIBUTES) return key;
  return undefined;
}

const NO_CHILDREN: readonly XmlElement[] = Object.freeze([]);

/** The scope inside an element: its parent's bindings plus the element's own declarations. */
function scopeOf(attributes: Readonly<Record<string, unknown>> | undefined, parent: Scope): Scope {
  if (attributes === undefined) return parent;
  let scope: Map<string, string> | undefined;
  const bind = (prefix: string, uri: string) => {
    scope ??= new Map(parent);
    scope.set(prefix, uri);
  };
  for (const [key, value] of Object.entries(attributes)) {
    const uri = String(value);
    if (key === XMLNS) bind('', uri);
    else if (key.startsWith(XMLNS_PREFIXED)) {
      const prefix = key.slice(XMLNS_PREFIXED.length);
      if (uri === '') throw new XmlReadError(`prefix ${prefix} is bound to an empty namespace name`);
      if ((prefix === 'xml') !== (uri === XML_NAMESPACE) || prefix === 'xmlns' || uri === XMLNS_NAMESPACE) {
        throw new XmlReadError(`prefix ${prefix} may not be bound to ${uri}`);
      }
      bind(prefix, uri);
    }
  }
  return scope ?? parent;
}

function elementOf(node: OrderedNode, key: string, parentScope: Scope): XmlElement {
  const scope = scopeOf(node[ATTRIBUTES] as Record<string, unknown> | undefined, parentScope);
  const name = key.startsWith(MEMBER_MARK) ? key.slice(MEMBER_MARK.length) : key;
  const colon = name.indexOf(':');
  const prefix = colon === -1 ? '' : name.slice(0, colon);
  const localName = colon === -1 ? name : name.slice(colon + 1);
  const namespace = scope.get(prefix);
  if (localName.includes(':') || prefix === 'xmlns')
    throw new XmlReadError(`${name} is not a valid element name`);
  if (prefix !== '' && namespace === undefined) {
    throw new XmlReadError(`prefix ${prefix} of element ${name} is not declared`);
  }
  // Payloads may hold many thousands of elements at READ_DEPTH: allocate only what an element has.
  let children: XmlElement[] | undefined;
  let text = '';
  for (const child of node[key] as readonly OrderedNode[]) {
    const childName = nameOf(child);
    if (childName === TEXT) text += String(child[TEXT]);
    else if (childName !== undefined) {
      children ??= [];
      children.push(elementOf(child, childName, scope));
    }
  }
  return { namespace: namespace ?? '', localName, children: children ?? NO_CHILDREN, text };
}

/**
 * The document's root element. Throws XmlReadError for anything that is not well-formed,
 * namespace-well-formed XML; the caller bounds the document's size beforehand.
 */
export function readXml(document: string): XmlElement {
  const validity = XMLValidator.validate(document);
  if (validity !== true) {
    const { msg, line, col } = validity.err;
    throw new XmlReadError(`${msg} (line ${line}, column ${col})`);
  }
  let nodes: readonly OrderedNode[];
  try {
    nodes = parser.parse(document) as OrderedNode[];
  } catch (error) {
    if (error instanceof XmlReadError) throw error;
    throw new XmlReadError(error instanceof Error ? error.message : String(error));
  }
  const elements = nodes.flatMap((node) => {
    const name = nameOf(node);
    return name === undefined || name === TEXT ? [] : [{ node, name }];
  });
  const [root] = elements;
  if (elements.length !== 1 || root === undefined)
    throw new XmlReadError('the document has no single root element');
  return elementOf(root.node, root.name, ROOT_SCOPE);
}
