/**
 * The Lua minification of the Lambda bundles: comment lines, blank lines and indentation go from `lua`
 * templates, and nothing else changes; what it cannot compact safely it refuses. Every script the
 * project ships still compiles on a real redis-server once compacted.
 */
import { build } from 'esbuild';
import Redis from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  SCRIPTS,
  type ScriptDefinition,
  PRELUDE as WRITTEN_PRELUDE,
} from '../../../core/budget/cache-scripts';
import { GIVE_BACK_SCRIPT } from '../../../core/budget/give-back-script';
import { lua } from '../../../core/budget/lua';
import { REPORT_BATCH_SCRIPTS } from '../../../core/budget/report-batch-scripts';
import { type LocalRedis, startRedisServer } from '../../../local/redis';
import {
  compactLuaTemplates,
  LuaCompactionError,
  luaCompactionPlugin,
} from '../../../scripts/lua-compaction';

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
        "if x == 1 then return '--' end",
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
      `const S = lua\`${p}\nlocal y = 2\n${q}\nreturn y -- t\n\`;`,
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

  /** The scripts as the Lambda bundles define them: the modules built with the bundles' plugin, then run. */
  async function bundledScripts(): Promise<ScriptDefinition[]> {
    const built = await build({
      stdin: {
        contents:
          "export { PRELUDE, SCRIPTS } from './core/budget/cache-scripts';\n" +
          "export { REPORT_BATCH_SCRIPTS } from './core/budget/report-batch-scripts';\n" +
          "export { GIVE_BACK_SCRIPT } from './core/budget/give-back-script';",
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
});
