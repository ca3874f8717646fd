/**
 * The elements open while a document is read, and the tree the top READ_DEPTH levels of them make:
 * deeper elements are only tracked until their end tag, and the content of one at READ_DEPTH is kept as
 * written.
 */
import { localNameOf } from './namespace-scope';
import type { XmlElement } from './xml-tree';

/** A SOAP reader needs Envelope, Header or Body, header block or operation, and the children of those. */
export const READ_DEPTH = 4;

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
  /** Declarations this element added to the namespace scope, undone at its end. */
  readonly declarations: number;
  /** Where its content starts, for an element at READ_DEPTH. */
  readonly contentStart: number;
  /** The element being built, for the top READ_DEPTH levels. */
  readonly built: BuiltElement | undefined;
}

export class ElementTree {
  private readonly open: OpenElement[] = [];
  private root: XmlElement | undefined;

  /** Levels of elements open, the root's being 1. */
  get depth(): number {
    return this.open.length;
  }

  /** The innermost open element's qualified name as written; only asked while one is open. */
  get innermostName(): string {
    return (this.open[this.open.length - 1] as OpenElement).name;
  }

  /** The root element, once its end tag is read. */
  get rootElement(): XmlElement {
    return this.root as XmlElement;
  }

  /** Opens an element that has content starting at `contentStart`. */
  start(qualifiedName: string, namespace: string, declarations: number, contentStart: number): void {
    const built = this.built(qualifiedName, namespace);
    this.open.push({ name: qualifiedName, declarations, contentStart, built });
  }

  /** An empty-element tag: opened and closed at once. */
  startEmpty(qualifiedName: string, namespace: string): void {
    const built = this.built(qualifiedName, namespace);
    if (built !== undefined) this.attach(built);
  }

  /** Adds text, trimmed, to the innermost element when it is built and not at READ_DEPTH. */
  keepText(text: string): void {
    const top = this.open[this.open.length - 1];
    if (top?.built !== undefined && this.open.length < READ_DEPTH) top.built.text += text.trim();
  }

  /**
   * Closes the innermost element, whose content in `document` ends at `contentEnd`, and answers how many
   * namespace declarations it made.
   */
  end(document: string, contentEnd: number): number {
    const element = this.open.pop() as OpenElement;
    const { built } = element;
    if (built !== undefined) {
      if (this.open.length + 1 === READ_DEPTH) {
        built.text = document.slice(element.contentStart, contentEnd).trim();
      }
      this.attach(built);
    }
    return element.declarations;
  }

  /** The element to build for a start tag at the current depth; undefined below READ_DEPTH. */
  private built(qualifiedName: string, namespace: string): BuiltElement | undefined {
    if (this.open.length >= READ_DEPTH) return undefined;
    return { namespace, localName: localNameOf(qualifiedName), children: NO_CHILDREN, text: '' };
  }

  /** Hands a built element to its parent, or makes it the root. */
  private attach(built: BuiltElement): void {
    const parent = this.open[this.open.length - 1]?.built;
    if (parent === undefined) this.root = built;
    else if (parent.children === NO_CHILDREN) parent.children = [built];
    else (parent.children as XmlElement[]).push(built);
  }
}
