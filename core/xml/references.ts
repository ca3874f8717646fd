/**
 * XML's references (XML 1.0 section 4.1): the five predefined entities and character references to XML
 * characters. No other entity is ever declared, so none is ever expanded.
 */
import { XmlStop } from './xml-stop';

const CHARACTER_REFERENCE = /^#(?:x([0-9a-fA-F]+)|([0-9]+))$/;
/** What may stand between `&` and `;` as an entity name; anything else means the `&` begins nothing. */
const ENTITY_NAME = /^[^\s&<#]+$/;

const PREDEFINED_ENTITIES: ReadonlyMap<string, string> = new Map([
  ['lt', '<'],
  ['gt', '>'],
  ['amp', '&'],
  ['apos', "'"],
  ['quot', '"'],
]);

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

/** What the reference `&body;` stands for; a fault is reported at `at`, where its text starts. */
function referenced(body: string, at: number): string {
  const predefined = PREDEFINED_ENTITIES.get(body);
  if (predefined !== undefined) return predefined;
  const character = CHARACTER_REFERENCE.exec(body);
  if (character === null) {
    throw new XmlStop(
      ENTITY_NAME.test(body) ? `entity &${body}; is not declared` : '& does not begin a reference',
      at,
    );
  }
  const [, hex, decimal] = character;
  const codePoint = hex !== undefined ? Number.parseInt(hex, 16) : Number(decimal);
  if (!isXmlChar(codePoint)) throw new XmlStop(`character reference &${body}; is not an XML character`, at);
  return String.fromCodePoint(codePoint);
}

/**
 * Text with its references replaced, in one pass from `&` to `;` (a callback per match costs more); `at`
 * is where the text starts in the document.
 */
export function decodeReferences(text: string, at: number): string {
  let reference = text.indexOf('&');
  if (reference === -1) return text;
  let decoded = '';
  let from = 0;
  while (reference !== -1) {
    const end = text.indexOf(';', reference + 1);
    if (end === -1) throw new XmlStop('& does not begin a reference', at);
    decoded += text.slice(from, reference) + referenced(text.slice(reference + 1, end), at);
    from = end + 1;
    reference = text.indexOf('&', from);
  }
  return decoded + text.slice(from);
}
