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
import { DocumentReader } from './document-reader';
import { XmlStop } from './xml-stop';

export { READ_DEPTH } from './element-tree';

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
    return { ok: true, root: new DocumentReader(document, bounds).read() };
  } catch (error) {
    if (!(error instanceof XmlStop)) throw error;
    const detail = `${error.detail} (${position(document, error.at)})`;
    return { ok: false, detail, ...(error.bound !== undefined && { bound: error.bound }) };
  }
}
