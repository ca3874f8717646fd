/**
 * Reads an XML document in one pass, in time linear in its length whatever its shape, into elements
 * named by namespace URI and local name.
 *
 * Namespace scopes (NamespaceScope) are one map of the bindings in force, each element's declarations
 * undone at its end tag: no element copies its parent's scope.
 *
 * The whole document is checked: well-formedness (XML 1.0: characters, names, matching tags, quoted
 * attributes, no duplicate attribute, references), namespace well-formedness (Namespaces in XML 1.0:
 * declared prefixes, reserved prefixes), and the structural bounds the caller gives. Only the top
 * `READ_DEPTH` levels become elements; the content of an element at that depth is kept as written.
 * Markup declarations (DOCTYPE, ENTITY...) are refused: only XML's five predefined entities and
 * character references are decoded, and no entity is ever expanded.
 */
import { XMLNS_NAMESPACE } from '../soap/namespaces';
import { isDeclaration, localNameOf, NamespaceScope } from './namespace-scope';
import { decodeReferences } from './references';
import { XmlStop } from './xml-stop';

/** A SOAP reader needs Envelope, Header or Body, header block or operation, and the children of those. */
export const READ_DEPTH = 4;

export interface XmlElement {
  /** '' when the element is in no namespace. */
  readonly namespace: string;
  readonly localName: string;
  readonly children: readonly XmlElement[];
  /**
   * The element's own text, character data and CDATA sections, references decoded, each text run
   * trimmed. At READ_DEPTH: the content as written, markup included, trimmed.
   */
  readonly text: string;
}

/** Structural bounds: a document over one is refused, naming it, as soon as the reader meets it. */
export interface XmlBounds {
  /** Levels of nested elements, the root being level 1. */
  readonly maxDepth: number;
  /** Attributes on one element, namespace declarations included. */
  readonly maxAttributes: number;
  /** Namespace declarations in scope at once: an element's own and its ancestors'. */
  readonly maxNamespaces: number;
}

export type XmlBound = keyof XmlBounds;

export type XmlReading =
  | { readonly ok: true; readonly root: XmlElement }
  /** `bound` when the document is over one of the bounds, absent when it is not well-formed. */
  | { readonly ok: false; readonly bound?: XmlBound; readonly detail: string };

// XML 1.0 (fifth edition) section 2.3, NameStartChar and NameChar.
const NAME_START =
  ':A-Z_a-z\\u00C0-\\u00D6\\u00D8-\\u00F6\\u00F8-\\u02FF\\u0370-\\u037D\\u037F-\\u1FFF\\u200C-\\u200D' +
  '\\u2070-\\u218F\\u2C00-\\u2FEF\\u3001-\\uD7FF\\uF900-\\uFDCF\\uFDF0-\\uFFFD\\u{10000}-\\u{EFFFF}';
const NAME = new RegExp(`[${NAME_START}][${NAME_START}\\-.0-9\\u00B7\\u0300-\\u036F\\u203F-\\u2040]*`, 'uy');
/** XML 1.0 section 2.2, Char: anything else may not appear, even escaped. */
const NOT_XML_CHAR = /[^\t\n\r\u0020-\uD7FF\uE000-\uFFFD\u{10000}-\u{10FFFF}]/u;
const XML_DECLARATION =
  /<\?xml[ \t\r\n]+version[ \t\r\n]*=[ \t\r\n]*(?:"1\.[0-9]+"|'1\.[0-9]+')(?:[ \t\r\n]+encoding[ \t\r\n]*=[ \t\r\n]*(?:"[A-Za-z][\w.-]*"|'[A-Za-z][\w.-]*'))?(?:[ \t\r\n]+standalone[ \t\r\n]*=[ \t\r\n]*(?:"(?:yes|no)"|'(?:yes|no)'))?[ \t\r\n]*\?>/y;
const ATTRIBUTE_WHITESPACE = /[\t\n\r]/g;

const isSpace = (code: number) => code === 0x20 || code === 0x9 || code === 0xa || code === 0xd;

const NO_CHILDREN: readonly XmlElement[] = Object.freeze([]);

/** An element of the top READ_DEPTH levels while it is read; it is handed out as it is. */
interface BuiltElement extends XmlElement {
  /** NO_CHILDREN until its first child: payloads may hold many thousands of leaves. */
  children: readonly XmlElement[];
  text: string;
}

interface OpenElement {
  /** The qualified name as written, which its end tag must repeat. */
  readonly name: string;
  /** Entries this element added to the scope log, undone at its end. */
  readonly declarations: number;
  /** Where its content starts, for an element at READ_DEPTH. */
  readonly contentStart: number;
  /** The element being built, for the top READ_DEPTH levels. */
  readonly built: BuiltElement | undefined;
}

interface Attributes {
  readonly names: string[];
  readonly values: string[];
}

function readDocument(document: string, bounds: XmlBounds): XmlElement {
  let pos = 0;
  const open: OpenElement[] = [];
  const scope = new NamespaceScope(bounds.maxNamespaces);
  let root: XmlElement | undefined;

  const stop = (detail: string, at = pos): never => {
    throw new XmlStop(detail, at);
  };

  const name = (what: string): string => {
    NAME.lastIndex = pos;
    if (!NAME.test(document)) return stop(`${what} must be a name`);
    const start = pos;
    pos = NAME.lastIndex;
    return document.slice(start, pos);
  };

  const skipSpace = (): boolean => {
    const start = pos;
    while (pos < document.length && isSpace(document.charCodeAt(pos))) pos++;
    return pos > start;
  };

  const expect = (text: string, what: string) => {
    if (!document.startsWith(text, pos)) stop(`${what}: expected ${text}`);
    pos += text.length;
  };

  /** The end of `terminator` after `from`, or a stop saying what was left open. */
  const through = (terminator: string, from: number, what: string): number => {
    const end = document.indexOf(terminator, from);
    if (end === -1) stop(`${what} is not closed`);
    return end;
  };

  const comment = () => {
    const end = through('-->', pos + 4, 'a comment');
    if (document.indexOf('--', pos + 4) < end) stop('-- inside a comment');
    pos = end + 3;
  };

  const processingInstruction = () => {
    pos += 2;
    const target = name('a processing instruction target');
    if (target.toLowerCase() === 'xml') stop('an XML declaration may only begin the document');
    if (!document.startsWith('?>', pos) && !skipSpace()) stop('a processing instruction target must end');
    pos = through('?>', pos, 'a processing instruction') + 2;
  };

  /** Comments, processing instructions and white space, before and after the root. */
  const misc = () => {
    for (;;) {
      skipSpace();
      if (document.startsWith('<!--', pos)) comment();
      else if (document.startsWith('<?', pos)) processingInstruction();
      else return;
    }
  };

  const textRun = (start: number, end: number) => {
    const run = document.slice(start, end);
    if (run.includes(']]>')) stop(']]> in text', start);
    const decoded = decodeReferences(run, start);
    const top = open[open.length - 1];
    if (top?.built !== undefined && open.length < READ_DEPTH) top.built.text += decoded.trim();
  };

  /** Hands a built element to its parent, or makes it the root. */
  const attach = (built: BuiltElement) => {
    const parent = open[open.length - 1]?.built;
    if (parent === undefined) root = built;
    else if (parent.children === NO_CHILDREN) parent.children = [built];
    else (parent.children as XmlElement[]).push(built);
  };

  const close = (contentEnd: number) => {
    const element = open.pop() as OpenElement;
    scope.undeclare(element.declarations);
    const { built } = element;
    if (built === undefined) return;
    if (open.length + 1 === READ_DEPTH) built.text = document.slice(element.contentStart, contentEnd).trim();
    attach(built);
  };

  /** The attributes of a start tag, up to its end; undefined when it has none. */
  const attributesOf = (qualifiedName: string): Attributes | undefined => {
    let attributes: Attributes | undefined;
    for (;;) {
      const spaced = skipSpace();
      if (document.startsWith('/>', pos) || document.charCodeAt(pos) === 0x3e) return attributes;
      if (!spaced) stop(`attributes of ${qualifiedName} must be separated by white space`);
      attributes ??= { names: [], values: [] };
      if (attributes.names.length === bounds.maxAttributes) {
        throw new XmlStop(
          `more than ${bounds.maxAttributes} attributes on one element`,
          pos,
          'maxAttributes',
        );
      }
      attributes.names.push(name('an attribute'));
      skipSpace();
      expect('=', 'an attribute');
      skipSpace();
      const quote = document[pos];
      if (quote !== '"' && quote !== "'") stop('an attribute value must be quoted');
      const end = through(quote as string, pos + 1, 'an attribute value');
      const value = document.slice(pos + 1, end);
      if (value.includes('<')) stop('< in an attribute value');
      attributes.values.push(value);
      pos = end + 1;
    }
  };

  /**
   * Declares the attributes' namespaces, checks the others' values and names, and answers how many
   * declarations the element made. Declarations come first: they are in force for the element's own
   * name and its other attributes.
   */
  const applyAttributes = ({ names, values }: Attributes, tagStart: number): number => {
    const logged = scope.declarations;
    // One attribute cannot repeat itself; its name is still checked.
    const expandedNames = names.length > 1 ? new Set<string>() : undefined;
    const unique = (expandedName: string, written: string) => {
      if (expandedNames?.has(expandedName)) stop(`attribute ${written} is given twice`, tagStart);
      expandedNames?.add(expandedName);
    };
    for (let i = 0; i < names.length; i++) {
      const attribute = names[i] as string;
      const value = values[i] as string;
      if (!isDeclaration(attribute)) {
        decodeReferences(value, tagStart);
        continue;
      }
      const prefix = attribute.slice('xmlns:'.length);
      if (attribute !== 'xmlns' && (prefix === '' || prefix.includes(':'))) {
        stop(`${attribute} is not a valid declaration`, tagStart);
      }
      unique(`${XMLNS_NAMESPACE} ${attribute}`, attribute);
      scope.declare(prefix, decodeReferences(value.replace(ATTRIBUTE_WHITESPACE, ' '), tagStart), pos);
    }
    for (const attribute of names) {
      if (isDeclaration(attribute)) continue;
      unique(`${scope.ofAttribute(attribute, tagStart)} ${localNameOf(attribute)}`, attribute);
    }
    return scope.declarations - logged;
  };

  const startTag = () => {
    const tagStart = pos;
    pos++;
    const qualifiedName = name('an element');
    const attributes = attributesOf(qualifiedName);
    const empty = document.charCodeAt(pos) === 0x2f;
    pos += empty ? 2 : 1;
    if (open.length === bounds.maxDepth) {
      throw new XmlStop(`more than ${bounds.maxDepth} levels of elements`, tagStart, 'maxDepth');
    }
    const declarations = attributes === undefined ? 0 : applyAttributes(attributes, tagStart);
    const namespace = scope.ofElement(qualifiedName, tagStart);
    const built: BuiltElement | undefined =
      open.length < READ_DEPTH
        ? { namespace, localName: localNameOf(qualifiedName), children: NO_CHILDREN, text: '' }
        : undefined;
    if (!empty) open.push({ name: qualifiedName, declarations, contentStart: pos, built });
    else {
      scope.undeclare(declarations);
      if (built !== undefined) attach(built);
    }
  };

  const endTag = () => {
    const contentEnd = pos;
    pos += 2;
    const closing = name('an end tag');
    const element = open[open.length - 1] as OpenElement;
    if (closing !== element.name) stop(`end tag ${closing} does not close ${element.name}`, contentEnd);
    skipSpace();
    expect('>', 'an end tag');
    close(contentEnd);
  };

  const cdata = () => {
    const end = through(']]>', pos + 9, 'a CDATA section');
    const top = open[open.length - 1];
    if (top?.built !== undefined && open.length < READ_DEPTH) {
      top.built.text += document.slice(pos + 9, end).trim();
    }
    pos = end + 3;
  };

  const invalid = NOT_XML_CHAR.exec(document);
  if (invalid !== null) stop('a character XML does not allow', invalid.index);
  XML_DECLARATION.lastIndex = 0;
  if (XML_DECLARATION.test(document)) pos = XML_DECLARATION.lastIndex;
  else if (/^<\?xml[ \t\r\n?]/.test(document)) stop('the XML declaration is malformed');
  misc();
  if (document.charCodeAt(pos) !== 0x3c || document.charCodeAt(pos + 1) === 0x2f) {
    stop('the document has no root element');
  }
  startTag();
  while (open.length > 0) {
    const markup = document.indexOf('<', pos);
    if (markup === -1) stop(`element ${(open[open.length - 1] as OpenElement).name} is not closed`);
    if (markup > pos) textRun(pos, markup);
    pos = markup;
    if (document.startsWith('</', pos)) endTag();
    else if (document.startsWith('<!--', pos)) comment();
    else if (document.startsWith('<![CDATA[', pos)) cdata();
    else if (document.startsWith('<!', pos)) stop('document type and entity declarations are not accepted');
    else if (document.startsWith('<?', pos)) processingInstruction();
    else startTag();
  }
  misc();
  if (pos !== document.length) stop('the document has more than its root element');
  return root as XmlElement;
}

/** Line and column of a position, counted only when a document is refused. */
function position(document: string, at: number): string {
  const before = document.slice(0, at);
  const line = before.split('\n').length;
  return `line ${line}, column ${at - before.lastIndexOf('\n')}`;
}

/**
 * The document's root element, or why it is refused: not well-formed, not namespace-well-formed, or over
 * a bound. The caller bounds the document's size beforehand; the time taken is linear in it.
 */
export function readXml(document: string, bounds: XmlBounds): XmlReading {
  try {
    return { ok: true, root: readDocument(document, bounds) };
  } catch (error) {
    if (!(error instanceof XmlStop)) throw error;
    const detail = `${error.detail} (${position(document, error.at)})`;
    return { ok: false, detail, ...(error.bound !== undefined && { bound: error.bound }) };
  }
}
