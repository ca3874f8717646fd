/**
 * JSON as a configuration file is read: JSON.parse keeps the last of two equal keys without a word, so
 * `"failureMode": "allow", ..., "failureMode": "strict"` would quietly run in strict mode. Here a key given
 * twice in one object is an error that names it, as any other bad setting is.
 */
import { ConfigError } from '../core/settings/config';

/** Where the scanner stands: the JSON text and the position of the next character. */
class Scanner {
  position = 0;
  constructor(readonly text: string) {}

  skipWhitespace(): void {
    while (/\s/.test(this.text[this.position] ?? '')) this.position++;
  }

  /** A JSON string starting at the current position (already known valid): its decoded value. */
  string(): string {
    const start = this.position;
    this.position++;
    while (this.text[this.position] !== '"') this.position += this.text[this.position] === '\\' ? 2 : 1;
    this.position++;
    return JSON.parse(this.text.slice(start, this.position)) as string;
  }
}

function settingPath(path: readonly string[], key: string): string {
  return [...path, key].join('.').replace(/\.\[/g, '[');
}

/** Walks one value; throws on the first object that repeats a key. */
function walk(scanner: Scanner, path: string[]): void {
  scanner.skipWhitespace();
  const char = scanner.text[scanner.position];
  if (char === '{') {
    scanner.position++;
    const seen = new Set<string>();
    for (;;) {
      scanner.skipWhitespace();
      if (scanner.text[scanner.position] === '}') break;
      const key = scanner.string();
      if (seen.has(key)) throw new ConfigError(settingPath(path, key), 'is given twice in one object');
      seen.add(key);
      scanner.skipWhitespace();
      scanner.position++; // the colon
      walk(scanner, [...path, key]);
      scanner.skipWhitespace();
      if (scanner.text[scanner.position] === ',') scanner.position++;
    }
    scanner.position++;
  } else if (char === '[') {
    scanner.position++;
    for (let index = 0; ; index++) {
      scanner.skipWhitespace();
      if (scanner.text[scanner.position] === ']') break;
      walk(scanner, [...path, `[${index}]`]);
      scanner.skipWhitespace();
      if (scanner.text[scanner.position] === ',') scanner.position++;
    }
    scanner.position++;
  } else if (char === '"') {
    scanner.string();
  } else {
    while (!/[\s,\]}]/.test(scanner.text[scanner.position] ?? ' ')) scanner.position++;
  }
}

/**
 * Parses JSON text, refusing a key repeated in one object (a ConfigError naming it). Throws JSON.parse's
 * own SyntaxError for text that is not JSON.
 */
export function parseJsonWithoutRepeatedKeys(text: string): unknown {
  const value: unknown = JSON.parse(text);
  walk(new Scanner(text), []);
  return value;
}
