/**
 * Minifies the Lua inside the Lambda bundles, as esbuild minifies the TypeScript around it: in every
 * template tagged `lua` (core/budget/scripts/lua.ts), comment lines, blank lines and indentation go, and so do
 * the spaces beside punctuation outside strings (`a = b, c` is `a=b,c`). Lua needs none of them, and its
 * scripts' comments are a fifth of their text. What could change a script's meaning is refused rather
 * than guessed at: a long bracket (`[[`, `--[[`, a multi-line string or comment) or a line that ends in
 * a backslash; and a line holding a comment after code, or a backslash before a quote, keeps its spaces.
 */
import { readFile } from 'node:fs/promises';
import type { Plugin } from 'esbuild';
import ts from 'typescript';

export class LuaCompactionError extends Error {
  override readonly name = 'LuaCompactionError';
}

/** Characters a space beside which Lua never needs (`-` and `.` left out: `- -` and `1 ..` need theirs). */
const PUNCTUATION = new Set('=,(){}[]<>~+*/%^#;');

/**
 * A line of Lua (as the template's raw text has it) without the spaces beside punctuation outside
 * strings. Left as it is when it holds a comment after code, a backslash before a quote (whose quote
 * this scan could take for the string's end) or a string it does not close. No space goes where its going
 * would join `[[` or `--`.
 */
export function tightenLine(line: string): string {
  if (/\\['"]/.test(line)) return line;
  let out = '';
  let quote = '';
  for (let at = 0; at < line.length; at++) {
    const char = line[at] as string;
    if (quote !== '') {
      out += char;
      if (char === '\\') out += line[++at] ?? '';
      else if (char === quote) quote = '';
      continue;
    }
    if (char === "'" || char === '"') quote = char;
    else if (char === '-' && line[at + 1] === '-') return line;
    else if (char === ' ') {
      const before = out[out.length - 1] ?? '';
      const after = line[at + 1] ?? '';
      const joins = (before === '[' && after === '[') || (before === '-' && after === '-');
      if (!joins && (PUNCTUATION.has(before) || PUNCTUATION.has(after))) continue;
    }
    out += char;
  }
  // A string still open: the line goes on into a substitution; what follows it is not scanned either.
  return quote === '' ? out : line;
}

/**
 * One literal part of a `lua` template, compacted. `startsLine`: the part begins a line of the script (a
 * template's head); a part after a `${...}` continues the line the substitution is on.
 */
function compactPart(raw: string, startsLine: boolean, where: string): string {
  if (/\[=*\[/.test(raw) || /--\[/.test(raw))
    throw new LuaCompactionError(`${where}: a Lua long bracket is not compacted; write it without one`);
  const lines = raw.split('\n');
  if (lines.some((line) => line.endsWith('\\')))
    throw new LuaCompactionError(`${where}: a line ends in a backslash`);
  const kept: string[] = [];
  lines.forEach((line, index) => {
    // The first line may continue one a substitution began; the last may go on into the next
    // substitution, or end a template that another one includes: both keep their place and line break.
    // A line a substitution began may begin inside a string: it is not tightened.
    if (index === 0) kept.push(startsLine ? tightenLine(line.trimStart()) : line);
    else if (index === lines.length - 1) kept.push(tightenLine(line.trimStart()));
    else {
      const text = line.trim();
      if (text !== '' && !text.startsWith('--')) kept.push(tightenLine(text));
    }
  });
  return kept.join('\n');
}

/** The source with the literal text of each `lua` template compacted; the rest is left as it is. */
export function compactLuaTemplates(source: string, fileName: string): string {
  const file = ts.createSourceFile(fileName, source, ts.ScriptTarget.Latest, false, ts.ScriptKind.TS);
  const edits: { start: number; end: number; text: string }[] = [];
  const where = (node: ts.Node) =>
    `${fileName}:${file.getLineAndCharacterOfPosition(node.getStart(file)).line + 1}`;
  const part = (node: ts.TemplateLiteralLikeNode, startsLine: boolean, endsBeforeValue: boolean) => {
    // Between the opening backtick or `}` and the closing backtick or `${`.
    const start = node.getStart(file) + 1;
    const end = node.end - (endsBeforeValue ? 2 : 1);
    edits.push({
      start,
      end,
      text: compactPart(source.slice(start, end), startsLine, where(node)),
    });
  };
  const visit = (node: ts.Node) => {
    if (ts.isTaggedTemplateExpression(node) && ts.isIdentifier(node.tag) && node.tag.text === 'lua') {
      const template = node.template;
      if (ts.isNoSubstitutionTemplateLiteral(template)) part(template, true, false);
      else {
        part(template.head, true, true);
        const spans = template.templateSpans;
        for (const [index, span] of spans.entries()) part(span.literal, false, index < spans.length - 1);
      }
    }
    ts.forEachChild(node, visit);
  };
  visit(file);
  let compacted = source;
  for (const edit of edits.sort((a, b) => b.start - a.start))
    compacted = compacted.slice(0, edit.start) + edit.text + compacted.slice(edit.end);
  return compacted;
}

/** The esbuild plugin: the project's TypeScript that holds `lua` templates is loaded compacted. */
export function luaCompactionPlugin(): Plugin {
  return {
    name: 'lua-compaction',
    setup(plugin) {
      plugin.onLoad({ filter: /[\\/](core|plugin|adapters|lambdas)[\\/].*\.ts$/ }, async (args) => {
        const source = await readFile(args.path, 'utf8');
        if (!source.includes('lua`')) return undefined;
        return { contents: compactLuaTemplates(source, args.path), loader: 'ts' };
      });
    },
  };
}
