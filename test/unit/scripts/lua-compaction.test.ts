/**
 * The Lua minification of the Lambda bundles: comment lines, blank lines, indentation and the spaces
 * beside punctuation go from `lua` templates, and nothing else changes; what it cannot compact safely it
 * refuses or leaves. Every script the project ships still compiles on a real redis-server once compacted,
 * into the same tokens as written.
 */
import { build } from 'esbuild';
import Redis from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SCRIPTS } from '../../../core/budget/scripts';
import { GIVE_BACK_SCRIPT } from '../../../core/budget/scripts/give-back-script';
import { lua, type ScriptDefinition } from '../../../core/budget/scripts/lua';
import { PRELUDE as WRITTEN_PRELUDE } from '../../../core/budget/scripts/prelude';
import { REPORT_BATCH_SCRIPTS } from '../../../core/budget/scripts/report-batch-scripts';
import { ALERT_SCRIPTS } from '../../../core/reporting/alerts';
import { type LocalRedis, startRedisServer } from '../../../local/redis';
import {
  compactLuaTemplates,
  LuaCompactionError,
  luaCompactionPlugin,
  tightenLine,
} from '../../../scripts/lua-compaction';

const LUA_OPERATORS = ['...', '..', '==', '~=', '<=', '>='];
const LUA_NUMBER = /^(?:0[xX][0-9a-fA-F]+|\d+\.?\d*(?:[eE][+-]?\d+)?|\.\d+(?:[eE][+-]?\d+)?)/;
const LUA_NAME = /^[A-Za-z_]\w*/;

/** A Lua chunk's tokens (strings as written, quotes and escapes included); whitespace and comments go. */
function luaTokens(source: string): string[] {
  const tokens: string[] = [];
  let at = 0;
  while (at < source.length) {
    const char = source[at] as string;
    if (/\s/.test(char)) at++;
    else if (source.startsWith('--', at)) {
      const end = source.indexOf('\n', at);
      at = end < 0 ? source.length : end;
    } else if (char === "'" || char === '"') {
      let end = at + 1;
      while (source[end] !== char) {
        if (end >= source.length) throw new Error(`unterminated string at ${at}`);
        end += source[end] === '\\' ? 2 : 1;
      }
      tokens.push(source.slice(at, end + 1));
      at = end + 1;
    } else {
      const rest = source.slice(at);
      const token =
        LUA_NUMBER.exec(rest)?.[0] ??
        LUA_NAME.exec(rest)?.[0] ??
        LUA_OPERATORS.find((operator) => rest.startsWith(operator)) ??
        char;
      tokens.push(token);
      at += token.length;
    }
  }
  return tokens;
}

describe('compactLuaTemplates', () => {
  it('drops comment lines, blank lines and indentation, and keeps code, trailing comments and other templates', () => {
    const source = [
      'const A = lua`',
      '-- what A does',
      '  local x = 1 -- kept: a comment after code',
      '',
      "  if x == 1 then return '--' end",
      '`;',
      'const B = `',
      '  -- not Lua: untouched',
      '`;',
    ].join('\n');
    expect(compactLuaTemplates(source, 'a.ts')).toBe(
      [
        'const A = lua`',
        'local x = 1 -- kept: a comment after code',
        "if x==1 then return '--' end",
        '`;',
        'const B = `',
        '  -- not Lua: untouched',
        '`;',
      ].join('\n'),
    );
  });

  it('keeps the line a substitution continues, and the line break before it', () => {
    const substitution = (name: string) => `\${${name}}`;
    const [p, q] = [substitution('P'), substitution('Q')];
    const source = `const S = lua\`${p}\n  -- c\n  local y = 2\n  ${q}\nreturn y -- t\n\`;`;
    expect(compactLuaTemplates(source, 's.ts')).toBe(
      `const S = lua\`${p}\nlocal y=2\n${q}\nreturn y -- t\n\`;`,
    );
  });

  it.each([
    ['a long string', 'const L = lua`local s = [[x]]`;'],
    ['a long comment', 'const L = lua`--[==[ c ]==]\nreturn 1`;'],
    ['a line continued by a backslash', 'const L = lua`local s = "a\\\nb"`;'],
  ])('refuses %s, naming the file and line', (_, source) => {
    expect(() => compactLuaTemplates(source, 'l.ts')).toThrow(LuaCompactionError);
    expect(() => compactLuaTemplates(source, 'l.ts')).toThrow(/^l\.ts:1: /);
  });

  it('takes the spaces beside punctuation out of code, never out of a string, never where it would join two tokens', () => {
    expect(tightenLine('local a, b = f(x) + 1, { \'c d\', "e = f" }')).toBe(
      'local a,b=f(x)+1,{\'c d\',"e = f"}',
    );
    expect(tightenLine('return a - -b .. 1 .. c')).toBe('return a - -b .. 1 .. c');
    expect(tightenLine('x = t[ [1] ]')).toBe('x=t[ [1]]');
    expect(tightenLine("local s = 'a\\'b' -- left")).toBe("local s = 'a\\'b' -- left");
    expect(tightenLine('y = 1 -- a comment after code')).toBe('y = 1 -- a comment after code');
    expect(tightenLine("z = 'open ")).toBe("z = 'open ");
  });

  it('gives the same text through the tag as an untagged template', () => {
    const n = 3;
    expect(lua`a ${'b'} ${n}\n-- c`).toBe(`a ${'b'} ${n}\n-- c`);
  });
});

describe('the shipped scripts, compacted', () => {
  let server: LocalRedis;
  let redis: Redis;
  beforeAll(async () => {
    server = await startRedisServer('/usr/bin/redis-server');
    redis = new Redis(server.port, server.host, { lazyConnect: true });
  });
  afterAll(async () => {
    redis?.disconnect();
    await server?.stop();
  });

  /** The usage alerts' scripts, as bundledScripts built them. */
  let bundledAlertScripts: ScriptDefinition[] = [];

  /** The scripts as the Lambda bundles define them: the modules built with the bundles' plugin, then run. */
  async function bundledScripts(): Promise<ScriptDefinition[]> {
    const built = await build({
      stdin: {
        contents:
          "export { PRELUDE } from './core/budget/scripts/prelude';\n" +
          "export { SCRIPTS } from './core/budget/scripts';\n" +
          "export { REPORT_BATCH_SCRIPTS } from './core/budget/scripts/report-batch-scripts';\n" +
          "export { GIVE_BACK_SCRIPT } from './core/budget/scripts/give-back-script';\n" +
          "export { ALERT_SCRIPTS } from './core/reporting/alerts';",
        resolveDir: process.cwd(),
        loader: 'ts',
      },
      bundle: true,
      platform: 'node',
      format: 'cjs',
      write: false,
      plugins: [luaCompactionPlugin()],
    });
    const module = { exports: {} as Record<string, unknown> };
    new Function('module', 'exports', 'require', built.outputFiles[0]?.text ?? '')(
      module,
      module.exports,
      require,
    );
    const { SCRIPTS, REPORT_BATCH_SCRIPTS, GIVE_BACK_SCRIPT, PRELUDE } = module.exports as {
      SCRIPTS: ScriptDefinition[];
      REPORT_BATCH_SCRIPTS: ScriptDefinition[];
      GIVE_BACK_SCRIPT: ScriptDefinition;
      PRELUDE: string;
    };
    bundledAlertScripts = module.exports.ALERT_SCRIPTS as ScriptDefinition[];
    expect(PRELUDE.length).toBeLessThan(0.8 * WRITTEN_PRELUDE.length);
    return [...SCRIPTS, ...REPORT_BATCH_SCRIPTS, GIVE_BACK_SCRIPT];
  }

  it('compile on redis-server, shorter than written', async () => {
    const scripts = await bundledScripts();
    expect(scripts.map(({ name }) => name)).toEqual(
      [...SCRIPTS, ...REPORT_BATCH_SCRIPTS, GIVE_BACK_SCRIPT].map(({ name }) => name),
    );
    for (const script of scripts) {
      await expect(redis.script('LOAD', script.lua)).resolves.toMatch(/^[0-9a-f]{40}$/);
    }
  });

  it('hold the same Lua tokens as written', async () => {
    const written = [...SCRIPTS, ...REPORT_BATCH_SCRIPTS, GIVE_BACK_SCRIPT, ...ALERT_SCRIPTS];
    const scripts = [...(await bundledScripts()), ...bundledAlertScripts];
    for (const [index, script] of scripts.entries()) {
      const tokens = luaTokens(script.lua);
      expect(tokens.length).toBeGreaterThan(10);
      expect(tokens, script.name).toEqual(luaTokens((written[index] as ScriptDefinition).lua));
    }
  });
});
