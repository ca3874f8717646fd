import type { XmlBound } from './xml-tree';

/** Why reading stopped: thrown where the reader meets the fault, caught in readXml and turned into its answer. */
export class XmlStop extends Error {
  constructor(
    readonly detail: string,
    readonly at: number,
    readonly bound?: XmlBound,
  ) {
    super(detail);
    this.name = 'XmlStop';
  }
}
