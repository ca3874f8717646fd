/**
 * The tag of every Lua script's source: `lua\`...\`` is the text as written, as an untagged template
 * would give it. It marks what the Lambda bundles minify as Lua, the way esbuild minifies the TypeScript
 * around it: comment lines and indentation go (the build's scripts/lua-compaction.ts, at the repository's
 * root), so the explanations stay beside the code and cost no bytes at a cold start.
 */
export function lua(strings: TemplateStringsArray, ...values: readonly (string | number)[]): string {
  let text = strings[0] as string;
  for (let index = 0; index < values.length; index++) text += `${values[index]}${strings[index + 1]}`;
  return text;
}

/** A script as AccessCache loads and calls it: its name, how many of its arguments are keys, its text. */
export interface ScriptDefinition {
  readonly name: string;
  readonly numberOfKeys: number;
  readonly lua: string;
}
