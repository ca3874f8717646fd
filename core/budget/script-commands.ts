/**
 * The scripts as commands of an ioredis client, which sends each once per connection (EVAL) and then by
 * SHA (EVALSHA), falling back to EVAL when the server answers NOSCRIPT.
 */
import type { RedisConnection } from './redis-client';
import type { ScriptDefinition } from './scripts/lua';

/**
 * Defines each script as a command of the client (ioredis sends it by SHA): once per client, or `again`
 * whatever the client has under its name.
 */
export function defineScripts(
  redis: RedisConnection,
  scripts: readonly ScriptDefinition[],
  again = false,
): void {
  const commands = redis as unknown as Record<string, unknown>;
  for (const script of scripts) {
    if (again || typeof commands[script.name] !== 'function') {
      redis.defineCommand(script.name, { numberOfKeys: script.numberOfKeys, lua: script.lua });
    }
  }
}

/**
 * A module of scripts the authorizer never runs (the reporter's, the SOAP proxy's), loaded and its
 * scripts defined on first use: the authorizer's bundle leaves it out of what every cold start reads.
 */
export class LazyScripts<Module> {
  private loaded: Promise<Module> | undefined;

  constructor(
    private readonly load: () => Promise<Module>,
    private readonly scriptsOf: (module: Module) => readonly ScriptDefinition[],
  ) {}

  of(redis: RedisConnection): Promise<Module> {
    this.loaded ??= this.load().then(
      (module) => {
        // Defined whatever the client answers for the name: what stands there may be a wrapper of the
        // command (a proxy that fails it on purpose) with no script behind it yet.
        defineScripts(redis, this.scriptsOf(module), true);
        return module;
      },
      (error: unknown) => {
        this.loaded = undefined;
        throw error;
      },
    );
    return this.loaded;
  }
}

/** A script's reply, a flat array of texts and integers, as texts; anything else is an error. */
export function replyItems(reply: unknown): string[] {
  if (!Array.isArray(reply)) throw new Error(`unexpected script reply: ${typeof reply}`);
  return reply.map((item) => String(item));
}
