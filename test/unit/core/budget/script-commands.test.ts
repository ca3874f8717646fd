import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RedisConnection } from '../../../../core/budget/redis-client';
import { defineScripts, LazyScripts, replyItems } from '../../../../core/budget/script-commands';
import type { ScriptDefinition } from '../../../../core/budget/scripts/lua';
import { startRedisTopology, type TestRedis } from '../../../support/redis-topology';

const answer = (name: string, reply: string): ScriptDefinition => ({
  name,
  numberOfKeys: 0,
  lua: `return '${reply}'`,
});

type Commands = Record<string, () => Promise<unknown>>;

describe('scripts as client commands', () => {
  let redis: TestRedis;
  let client: RedisConnection;

  beforeAll(async () => {
    redis = await startRedisTopology('in-memory');
    client = await redis.client();
  });
  afterAll(() => redis.stop());

  it('are defined once per client, and again only when asked', async () => {
    const commands = client as unknown as Commands;
    defineScripts(client, [answer('firstDefined', 'one')]);
    defineScripts(client, [answer('firstDefined', 'two')]);
    expect(await commands.firstDefined?.()).toBe('one');
    defineScripts(client, [answer('firstDefined', 'three')], true);
    expect(await commands.firstDefined?.()).toBe('three');
  });

  it('of a module loaded on first use: loaded once, and loaded again on the next use after a failed load', async () => {
    let loads = 0;
    const lazy = new LazyScripts(
      async () => {
        loads++;
        if (loads === 1) throw new Error('the module could not be read');
        return { scripts: [answer('loadedLater', 'ready')] };
      },
      (module) => module.scripts,
    );
    await expect(lazy.of(client)).rejects.toThrow('the module could not be read');
    expect(typeof (client as unknown as Commands).loadedLater).toBe('undefined');
    await lazy.of(client);
    await lazy.of(client);
    expect(loads).toBe(2);
    expect(await (client as unknown as Commands).loadedLater?.()).toBe('ready');
  });

  it('answer as texts, and a reply that is no array is an error', () => {
    expect(replyItems(['hits', 3, '0'])).toEqual(['hits', '3', '0']);
    expect(() => replyItems('allow')).toThrow(/unexpected script reply: string/);
  });
});
