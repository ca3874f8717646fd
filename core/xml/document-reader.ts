/**
 * One reading of one document, markup by markup from the start: the position, the elements open at it
 * and the namespaces in scope. Each construct is read by its own method, which moves the position past
 * it; the first fault throws an XmlStop at once, so a bound is refused where the reader meets it.
 */
import { XMLNS_NAMESPACE } from '../soap/namespaces';
import { ElementTree } from './element-tree';
import { isDeclaration, localNameOf, NamespaceScope } from './namespace-scope';
import { decodeReferences } from './references';
import { XmlStop } from './xml-stop';
import type { XmlBounds, XmlElement } from './xml-tree';

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

interface Attributes {
  readonly names: string[];
  readonly values: string[];
}

/** Refuses an attribute's expanded name when `seen` holds it already; one attribute alone needs no set. */
function once(seen: Set<string> | undefined, expandedName: string, written: string, tagStart: number) {
  if (seen?.has(expandedName)) throw new XmlStop(`attribute ${written} is given twice`, tagStart);
  seen?.add(expandedName);
}

/** Reads one document, once: `new DocumentReader(document, bounds).read()`. */
export class DocumentReader {
  private pos = 0;
  private readonly tree = new ElementTree();
  private readonly scope: NamespaceScope;

  constructor(
    private readonly document: string,
    private readonly bounds: XmlBounds,
  ) {
    this.scope = new NamespaceScope(bounds.maxNamespaces);
  }

  /** The root element, or an XmlStop thrown at the first fault. */
  read(): XmlElement {
    const invalid = NOT_XML_CHAR.exec(this.document);
    if (invalid !== null) this.stop('a character XML does not allow', invalid.index);
    this.prolog();
    this.startTag();
    this.content();
    this.misc();
    if (this.pos !== this.document.length) this.stop('the document has more than its root element');
    return this.tree.rootElement;
  }

  /** The XML declaration, if any, and what may stand between it and the root's start tag. */
  private prolog(): void {
    XML_DECLARATION.lastIndex = 0;
    if (XML_DECLARATION.test(this.document)) this.pos = XML_DECLARATION.lastIndex;
    else if (/^<\?xml[ \t\r\n?]/.test(this.document)) this.stop('the XML declaration is malformed');
    this.misc();
    if (this.document.charCodeAt(this.pos) !== 0x3c || this.document.charCodeAt(this.pos + 1) === 0x2f) {
      this.stop('the document has no root element');
    }
  }

  /** The root's content, markup by markup, up to its end tag. */
  private content(): void {
    const { document, tree } = this;
    while (tree.depth > 0) {
      const markup = document.indexOf('<', this.pos);
      if (markup === -1) this.stop(`element ${tree.innermostName} is not closed`);
      if (markup > this.pos) this.textRun(this.pos, markup);
      this.pos = markup;
      if (document.startsWith('</', markup)) this.endTag();
      else if (document.startsWith('<!--', markup)) this.comment();
      else if (document.startsWith('<![CDATA[', markup)) this.cdata();
      else if (document.startsWith('<!', markup)) {
        this.stop('document type and entity declarations are not accepted');
      } else if (document.startsWith('<?', markup)) this.processingInstruction();
      else this.startTag();
    }
  }

  /** Comments, processing instructions and white space, before and after the root. */
  private misc(): void {
    for (;;) {
      this.skipSpace();
      if (this.document.startsWith('<!--', this.pos)) this.comment();
      else if (this.document.startsWith('<?', this.pos)) this.processingInstruction();
      else return;
    }
  }

  private comment(): void {
    const end = this.through('-->', this.pos + 4, 'a comment');
    if (this.document.indexOf('--', this.pos + 4) < end) this.stop('-- inside a comment');
    this.pos = end + 3;
  }

  private processingInstruction(): void {
    this.pos += 2;
    const target = this.name('a processing instruction target');
    if (target.toLowerCase() === 'xml') this.stop('an XML declaration may only begin the document');
    if (!this.document.startsWith('?>', this.pos) && !this.skipSpace()) {
      this.stop('a processing instruction target must end');
    }
    this.pos = this.through('?>', this.pos, 'a processing instruction') + 2;
  }

  private cdata(): void {
    const end = this.through(']]>', this.pos + 9, 'a CDATA section');
    this.tree.keepText(this.document.slice(this.pos + 9, end));
    this.pos = end + 3;
  }

  /** Character data between two markups, its references checked and decoded. */
  private textRun(start: number, end: number): void {
    const run = this.document.slice(start, end);
    if (run.includes(']]>')) this.stop(']]> in text', start);
    this.tree.keepText(decodeReferences(run, start));
  }

  private startTag(): void {
    const tagStart = this.pos;
    this.pos++;
    const qualifiedName = this.name('an element');
    const attributes = this.attributesOf(qualifiedName);
    const empty = this.document.charCodeAt(this.pos) === 0x2f;
    this.pos += empty ? 2 : 1;
    const { tree, bounds, scope } = this;
    if (tree.depth === bounds.maxDepth) {
      throw new XmlStop(`more than ${bounds.maxDepth} levels of elements`, tagStart, 'maxDepth');
    }
    const declarations = attributes === undefined ? 0 : this.applyAttributes(attributes, tagStart);
    const namespace = scope.ofElement(qualifiedName, tagStart);
    if (!empty) tree.start(qualifiedName, namespace, declarations, this.pos);
    else {
      scope.undeclare(declarations);
      tree.startEmpty(qualifiedName, namespace);
    }
  }

  /** The attributes of a start tag, up to its end; undefined when it has none. */
  private attributesOf(qualifiedName: string): Attributes | undefined {
    const { document, bounds } = this;
    let attributes: Attributes | undefined;
    for (;;) {
      const spaced = this.skipSpace();
      if (document.startsWith('/>', this.pos) || document.charCodeAt(this.pos) === 0x3e) return attributes;
      if (!spaced) this.stop(`attributes of ${qualifiedName} must be separated by white space`);
      attributes ??= { names: [], values: [] };
      if (attributes.names.length === bounds.maxAttributes) {
        throw new XmlStop(
          `more than ${bounds.maxAttributes} attributes on one element`,
          this.pos,
          'maxAttributes',
        );
      }
      attributes.names.push(this.name('an attribute'));
      this.skipSpace();
      this.expect('=', 'an attribute');
      this.skipSpace();
      attributes.values.push(this.attributeValue());
    }
  }

  /** A quoted attribute value, as written. */
  private attributeValue(): string {
    const quote = this.document[this.pos];
    if (quote !== '"' && quote !== "'") this.stop('an attribute value must be quoted');
    const end = this.through(quote as string, this.pos + 1, 'an attribute value');
    const value = this.document.slice(this.pos + 1, end);
    if (value.includes('<')) this.stop('< in an attribute value');
    this.pos = end + 1;
    return value;
  }

  /**
   * Declares the attributes' namespaces, checks the others' values and names, and answers how many
   * declarations the element made. Declarations come first: they are in force for the element's own
   * name and its other attributes.
   */
  private applyAttributes({ names, values }: Attributes, tagStart: number): number {
    const { scope } = this;
    const declaredBefore = scope.declarations;
    const expandedNames = names.length > 1 ? new Set<string>() : undefined;
    for (let i = 0; i < names.length; i++) {
      const attribute = names[i] as string;
      const value = values[i] as string;
      if (!isDeclaration(attribute)) {
        decodeReferences(value, tagStart);
        continue;
      }
      const prefix = attribute.slice('xmlns:'.length);
      if (attribute !== 'xmlns' && (prefix === '' || prefix.includes(':'))) {
        this.stop(`${attribute} is not a valid declaration`, tagStart);
      }
      once(expandedNames, `${XMLNS_NAMESPACE} ${attribute}`, attribute, tagStart);
      scope.declare(prefix, decodeReferences(value.replace(ATTRIBUTE_WHITESPACE, ' '), tagStart), this.pos);
    }
    for (const attribute of names) {
      if (isDeclaration(attribute)) continue;
      const expandedName = `${scope.ofAttribute(attribute, tagStart)} ${localNameOf(attribute)}`;
      once(expandedNames, expandedName, attribute, tagStart);
    }
    return scope.declarations - declaredBefore;
  }

  private endTag(): void {
    const contentEnd = this.pos;
    this.pos += 2;
    const closing = this.name('an end tag');
    const opened = this.tree.innermostName;
    if (closing !== opened) this.stop(`end tag ${closing} does not close ${opened}`, contentEnd);
    this.skipSpace();
    this.expect('>', 'an end tag');
    this.scope.undeclare(this.tree.end(this.document, contentEnd));
  }

  private name(what: string): string {
    NAME.lastIndex = this.pos;
    if (!NAME.test(this.document)) return this.stop(`${what} must be a name`);
    const start = this.pos;
    this.pos = NAME.lastIndex;
    return this.document.slice(start, this.pos);
  }

  /** Moves past white space; answers whether there was any. */
  private skipSpace(): boolean {
    const { document } = this;
    const start = this.pos;
    while (this.pos < document.length && isSpace(document.charCodeAt(this.pos))) this.pos++;
    return this.pos > start;
  }

  private expect(text: string, what: string): void {
    if (!this.document.startsWith(text, this.pos)) this.stop(`${what}: expected ${text}`);
    this.pos += text.length;
  }

  /** The end of `terminator` after `from`, or a stop saying what was left open. */
  private through(terminator: string, from: number, what: string): number {
    const end = this.document.indexOf(terminator, from);
    if (end === -1) this.stop(`${what} is not closed`);
    return end;
  }

  private stop(detail: string, at = this.pos): never {
    throw new XmlStop(detail, at);
  }
}
