/**
 * The namespace bindings in force while a document is read (Namespaces in XML 1.0), as one map plus a log
 * of what each open element changed: a declaration sets the map and logs the binding it hid, and the
 * element's end undoes its entries. No element copies its parent's scope, so K declarations on the root
 * and K declaring children cost K steps, not K².
 */
import { XML_NAMESPACE, XMLNS_NAMESPACE } from '../soap/namespaces';
import { XmlStop } from './xml-stop';

/** Whether an attribute, by its qualified name, declares a namespace. */
export const isDeclaration = (attribute: string) => attribute === 'xmlns' || attribute.startsWith('xmlns:');

/** The local name of a qualified name: all of it when it has no prefix. */
export const localNameOf = (qualifiedName: string) => qualifiedName.slice(qualifiedName.indexOf(':') + 1);

/** One namespace declaration in force: its prefix and the binding it hides, restored at the element's end. */
interface ScopeEntry {
  readonly prefix: string;
  readonly hidden: string | undefined;
}

export class NamespaceScope {
  /**
   * The bindings in force; ScopeEntry records what each declaration hid. A prefix going out of scope is
   * set to undefined, never deleted: V8 keeps deleted entries in the map's hash chains until it rehashes,
   * so deleting and adding one prefix again and again would make each lookup walk all the deleted ones.
   */
  private readonly bindings = new Map<string, string | undefined>([['xml', XML_NAMESPACE]]);
  private readonly log: ScopeEntry[] = [];

  /** `maxNamespaces`: declarations in scope at once, an element's own and its ancestors'. */
  constructor(private readonly maxNamespaces: number) {}

  /** How many declarations are in scope: an element's count is the difference across its start tag. */
  get declarations(): number {
    return this.log.length;
  }

  /** Binds `prefix` ('' for the default namespace) to `uri`; a refusal is reported at `at`. */
  declare(prefix: string, uri: string, at: number): void {
    if (prefix !== '') {
      if (uri === '') throw new XmlStop(`prefix ${prefix} is bound to an empty namespace name`, at);
      if ((prefix === 'xml') !== (uri === XML_NAMESPACE) || prefix === 'xmlns' || uri === XMLNS_NAMESPACE) {
        throw new XmlStop(`prefix ${prefix} may not be bound to ${uri}`, at);
      }
    } else if (uri === XML_NAMESPACE || uri === XMLNS_NAMESPACE) {
      throw new XmlStop(`the default namespace may not be ${uri}`, at);
    }
    this.log.push({ prefix, hidden: this.bindings.get(prefix) });
    if (this.log.length > this.maxNamespaces) {
      throw new XmlStop(
        `more than ${this.maxNamespaces} namespace declarations in scope`,
        at,
        'maxNamespaces',
      );
    }
    this.bindings.set(prefix, uri);
  }

  /** Undoes the last `count` declarations: those of the element that ends. */
  undeclare(count: number): void {
    for (let i = 0; i < count; i++) {
      const entry = this.log.pop() as ScopeEntry;
      this.bindings.set(entry.prefix, entry.hidden);
    }
  }

  /** The namespace of an element's qualified name: without a prefix, the default namespace. */
  ofElement(qualifiedName: string, at: number): string {
    return this.namespaceOf(qualifiedName, at, this.bindings.get(''));
  }

  /** The namespace of an attribute's qualified name: without a prefix, none. */
  ofAttribute(qualifiedName: string, at: number): string {
    return this.namespaceOf(qualifiedName, at, undefined);
  }

  /** The namespace of a qualified name: its prefix's, which must be declared, or `unprefixed`. */
  private namespaceOf(qualifiedName: string, at: number, unprefixed: string | undefined): string {
    const colon = qualifiedName.indexOf(':');
    if (colon === -1) return unprefixed ?? '';
    const prefix = qualifiedName.slice(0, colon);
    const localName = localNameOf(qualifiedName);
    if (prefix === '' || localName === '' || localName.includes(':') || prefix === 'xmlns') {
      throw new XmlStop(`${qualifiedName} is not a valid qualified name`, at);
    }
    const namespace = this.bindings.get(prefix);
    if (namespace === undefined) {
      throw new XmlStop(`prefix ${prefix} of ${qualifiedName} is not declared`, at);
    }
    return namespace;
  }
}
