/**
 * Online guessing of client secrets, bounded (docs/oauth.md, "Guessing a secret"): each token request
 * that will ask the platform takes one attempt from its source address's counter and one from its
 * client's, in fixed windows shared by every instance through Redis. A failed check keeps both attempts;
 * a genuine client, or a platform that could not judge, gives them back. Past a bound the endpoint
 * answers 429 at once, without asking the platform. The address's bound is the lower one, so one
 * address runs out long before the client does.
 *
 * The client's bound must not lock the genuine client out: its id is no secret (every token names it),
 * so strangers can spend its attempts. Past it, an address that has not failed in the window still gets
 * one check (it costs that address an attempt like any other): the right secret from a clean address
 * gets its token, while each address that keeps failing is refused. Guessing stays bounded: at most the
 * client's bound, plus one per distinct address, per window.
 *
 * Counters are named by hashes (the client's credential id, a SHA-256 of the address), never by a secret.
 * Redis unreachable: each instance counts in its own memory with the same bounds, and says so in a
 * warning; neither every guess nor no request gets through.
 */
import { createHash } from 'node:crypto';
import {
  ensureConnected,
  REDIS_COMMAND_TIMEOUT_MS,
  type RedisConnection,
} from '../../core/budget/redis-client';
import { credentialIdOf, credentialIdPrefix } from '../../core/credentials';
import { errorMessage, type LogPort } from '../../core/observability/observability';
import type { SettingValues } from '../../core/settings/settings';

export type GuessBounds = Pick<
  SettingValues,
  'tokenGuessWindowSeconds' | 'tokenGuessesPerAddress' | 'tokenGuessesPerClient'
>;

/** One counter's answer: whether an attempt was taken, how many are taken now, and when its window ends. */
export interface Take {
  readonly taken: boolean;
  readonly count: number;
  readonly resetInMs: number;
}

/** Counters of attempts in fixed windows, by name. */
export interface GuessCounter {
  /** Takes an attempt unless `bound` are taken in the window (which the first attempt opens). */
  take(name: string, bound: number, windowMs: number): Promise<Take>;
  /** Gives an attempt back, as far as the window still holds one. */
  giveBack(name: string): Promise<void>;
}

/** Whose attempts ran out: refused requests say it, so a client behind a busy address knows why. */
export type GuessSubject = 'address' | 'client';

export type Admission =
  | { readonly ok: true; giveBack(): Promise<void> }
  | { readonly ok: false; readonly subject: GuessSubject; readonly retryAfterSeconds: number };

const TAKE_SCRIPT = `
local taken = tonumber(redis.call('GET', KEYS[1]) or '0')
if taken >= tonumber(ARGV[1]) then return {0, redis.call('PTTL', KEYS[1]), taken} end
local count = redis.call('INCR', KEYS[1])
if count == 1 then redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
return {1, redis.call('PTTL', KEYS[1]), count}`;

const GIVE_BACK_SCRIPT = `
if tonumber(redis.call('GET', KEYS[1]) or '0') > 0 then redis.call('DECR', KEYS[1]) end
return 0`;

/** The counters in Redis, one key each (`tokguess:...`, a single slot), expiring with their window. */
export function redisGuessCounter(redis: RedisConnection): GuessCounter {
  const key = (name: string) => `tokguess:${name}`;
  return {
    async take(name, bound, windowMs) {
      await ensureConnected(redis, REDIS_COMMAND_TIMEOUT_MS);
      const [taken, resetInMs, count] = (await redis.eval(TAKE_SCRIPT, 1, key(name), bound, windowMs)) as [
        number,
        number,
        number,
      ];
      return { taken: taken === 1, count, resetInMs: Math.max(resetInMs, 0) };
    },
    async giveBack(name) {
      await ensureConnected(redis, REDIS_COMMAND_TIMEOUT_MS);
      await redis.eval(GIVE_BACK_SCRIPT, 1, key(name));
    },
  };
}

/** Counters an instance keeps beside Redis: enough for a flood's addresses, bounded all the same. */
export const MEMORY_COUNTERS_KEPT = 10_000;

/** The counters in this instance's memory, the oldest window dropped first past `capacity`. */
export function memoryGuessCounter(now: () => number, capacity = MEMORY_COUNTERS_KEPT): GuessCounter {
  const windows = new Map<string, { taken: number; until: number }>();
  const current = (name: string) => {
    const window = windows.get(name);
    if (window !== undefined && window.until <= now()) windows.delete(name);
    return windows.get(name);
  };
  return {
    async take(name, bound, windowMs) {
      const window = current(name) ?? { taken: 0, until: now() + windowMs };
      const resetInMs = window.until - now();
      if (window.taken >= bound) return { taken: false, count: window.taken, resetInMs };
      windows.set(name, { ...window, taken: window.taken + 1 });
      if (windows.size > capacity) {
        const [oldest] = windows.keys();
        if (oldest !== undefined) windows.delete(oldest);
      }
      return { taken: true, count: window.taken + 1, resetInMs };
    },
    async giveBack(name) {
      const window = current(name);
      if (window !== undefined && window.taken > 0) windows.set(name, { ...window, taken: window.taken - 1 });
    },
  };
}

/** `shared`, or `local` while `shared` fails, with a warning each time. */
function counterWithFallback(shared: GuessCounter, local: GuessCounter, logger: LogPort): GuessCounter {
  const warn = (error: unknown) =>
    logger.warn('token guess counters unavailable: counting in this instance alone', {
      error: errorMessage(error),
    });
  return {
    take: (name, bound, windowMs) =>
      shared.take(name, bound, windowMs).catch((error: unknown) => {
        warn(error);
        return local.take(name, bound, windowMs);
      }),
    giveBack: (name) =>
      shared.giveBack(name).catch((error: unknown) => {
        warn(error);
        return local.giveBack(name);
      }),
  };
}

/** The token function's counters: in Redis, or in this instance's memory while Redis fails. */
export function guessCounterOf(
  redis: RedisConnection,
  logger: LogPort,
  now: () => number = Date.now,
): GuessCounter {
  return counterWithFallback(redisGuessCounter(redis), memoryGuessCounter(now), logger);
}

/** The attempts of one service's token endpoint: per source address and per client. */
export class GuessLimit {
  private readonly windowMs: number;

  constructor(
    private readonly serviceId: string,
    private readonly bounds: GuessBounds,
    private readonly counter: GuessCounter,
    private readonly logger: LogPort,
  ) {
    this.windowMs = bounds.tokenGuessWindowSeconds * 1000;
  }

  /**
   * One attempt of the client from the address, or why not. Without a source address (a caller that is
   * not API Gateway) only the client's bound applies.
   */
  async admit(clientId: string, address: string | undefined): Promise<Admission> {
    const credentialId = credentialIdOf(this.serviceId, { kind: 'app_id', appId: clientId });
    const client = `client:${credentialId}`;
    const from = address === undefined ? undefined : `address:${this.addressHash(address)}`;
    const taken: string[] = [];
    const giveBack = () => Promise.all(taken.map((name) => this.counter.giveBack(name))).then(() => {});
    let cleanAddress = false;
    for (const [subject, name, bound] of [
      ['address', from, this.bounds.tokenGuessesPerAddress],
      ['client', client, this.bounds.tokenGuessesPerClient],
    ] as const) {
      if (name === undefined) continue;
      const take = await this.counter.take(name, bound, this.windowMs);
      if (take.taken) {
        taken.push(name);
        // The address's first attempt of the window: it has failed nothing yet.
        cleanAddress = subject === 'address' && take.count === 1;
        continue;
      }
      // Past the client's bound a clean address still gets its one check, so strangers who spent the
      // client's attempts cannot refuse the genuine client its token.
      if (subject === 'client' && cleanAddress) return { ok: true, giveBack };
      // An address refused because its client ran out did no wrong: its attempt is not kept.
      await giveBack();
      this.logger.info('token refused: too many failed client checks', {
        subject,
        client: credentialIdPrefix(credentialId),
      });
      return { ok: false, subject, retryAfterSeconds: Math.max(Math.ceil(take.resetInMs / 1000), 1) };
    }
    return { ok: true, giveBack };
  }

  private addressHash(address: string): string {
    return createHash('sha256')
      .update(`${Buffer.byteLength(this.serviceId)}:${this.serviceId}${address}`)
      .digest('hex');
  }
}
