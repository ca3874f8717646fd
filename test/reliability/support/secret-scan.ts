/**
 * Finds raw secrets in captured text, in the spellings a leak takes on its way out: as is, URL-encoded
 * (a query string or form body), JSON-escaped (a log attribute) and base64 (a header or a blob).
 */

export interface SecretHit {
  readonly source: string;
  readonly secret: string;
  readonly spelling: string;
  /** The text around the hit, with the secret masked. */
  readonly context: string;
}

function spellings(secret: string): [string, string][] {
  const all: [string, string][] = [
    ['raw', secret],
    ['url-encoded', encodeURIComponent(secret)],
    ['form-encoded', new URLSearchParams({ v: secret }).toString().slice(2)],
    ['json-escaped', JSON.stringify(secret).slice(1, -1)],
    ['base64', Buffer.from(secret, 'utf8').toString('base64').replace(/=+$/, '')],
    ['base64url', Buffer.from(secret, 'utf8').toString('base64url')],
  ];
  const unique = new Map<string, string>();
  for (const [name, text] of all) if (!unique.has(text)) unique.set(text, name);
  return [...unique.entries()].map(([text, name]) => [name, text]);
}

export function findSecrets(
  sources: Readonly<Record<string, string>>,
  secrets: readonly string[],
): SecretHit[] {
  const hits: SecretHit[] = [];
  for (const secret of secrets) {
    if (secret.length < 8)
      throw new Error(`a secret this short would match by chance: ${secret.length} chars`);
    for (const [spelling, text] of spellings(secret)) {
      for (const [source, content] of Object.entries(sources)) {
        const at = content.indexOf(text);
        if (at < 0) continue;
        const context = content.slice(Math.max(0, at - 80), at + text.length + 80).replace(text, '<SECRET>');
        hits.push({ source, secret: `${secret.slice(0, 4)}…`, spelling, context });
      }
    }
  }
  return hits;
}
