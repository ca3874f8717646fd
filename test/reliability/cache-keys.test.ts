/**
 * Cache keys never collide: distinct budgets (user keys, app ids, across services), 1 to 256 bytes long
 * and full of the characters that break naive key schemes (':', '{', '}', '*', newlines), get distinct
 * credential ids and distinct Redis key names, each key carrying only its own budget's hash tag; every
 * key of one application gets the application's budget and a key id of its own. Then the same on a real
 * redis-server: usage admitted for each budget lands in its own keys only, and the sweep's SCAN pattern
 * finds exactly the budgets with usage.
 */
import fc from 'fast-check';
import type Redis from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AccessCache } from '../../core/budget/cache';
import { credentialKeys } from '../../core/budget/keys';
import { createRedisClient } from '../../core/budget/redis-client';
import { credentialIdOf, keyIdOf } from '../../core/credentials';
import { createCredentialSealer } from '../../core/credentials/seal';
import type { Credential } from '../../core/platform/types';
import { usageIn } from '../unit/core/fakes';
import { startTestRedis, type TestRedisServer } from './support/redis-server';
import { reliabilitySeed } from './support/seed';

const HOSTILE = [':', '{', '}', '*', '\n', '{}', '}{', '::', '*:*', '\r\n', '?', '[', ']', '\\', '"'];
/** The service's segment holds no brace, colon or glob character, whatever its id (keys.ts serviceSegment). */
const KEY_NAME = /^am:[A-Za-z0-9_.%-]+:\{[0-9a-f]{64}\}:[a-z]+$/;
/** Any id, for counting the keys of a budget. */
const ID_SHAPE = '0'.repeat(64);

/** Text of 1 to 256 UTF-8 bytes, mostly made of separators and glob characters. */
const hostileText = fc
  .array(
    fc.oneof(
      { weight: 6, arbitrary: fc.constantFrom(...HOSTILE) },
      { weight: 3, arbitrary: fc.string({ minLength: 1, maxLength: 8 }) },
      { weight: 1, arbitrary: fc.string({ unit: 'grapheme', minLength: 1, maxLength: 3 }) },
    ),
    { minLength: 1, maxLength: 80 },
  )
  .map((parts) => parts.join(''))
  .filter((text) => {
    const bytes = Buffer.byteLength(text, 'utf8');
    return bytes >= 1 && bytes <= 256;
  });

/** Also the lengths at the ends of the range. */
const edgeLengthText = fc.oneof(
  fc.constantFrom(...HOSTILE.map((c) => c.slice(0, 1))),
  fc.constantFrom(':', '{', '}', '*', '\n').map((c) => c.repeat(256)),
  fc
    .tuple(fc.constantFrom(...HOSTILE), fc.integer({ min: 1, max: 256 }))
    .map(([c, n]) => c.repeat(n).slice(0, n)),
);

const keyText = fc.oneof({ weight: 4, arbitrary: hostileText }, { weight: 1, arbitrary: edgeLengthText });

const credential: fc.Arbitrary<Credential> = fc.oneof(
  keyText.map((userKey): Credential => ({ kind: 'user_key', userKey })),
  fc
    .tuple(keyText, fc.option(keyText, { nil: undefined }))
    .map(
      ([appId, appKey]): Credential => ({ kind: 'app_id', appId, ...(appKey !== undefined && { appKey }) }),
    ),
);

/** Pairs built to collide under a naive `a:b` join: the separator moved from one field into the other. */
const shiftedPair = fc
  .tuple(hostileText, hostileText, fc.constantFrom(':', '{', '}', '\n'))
  .chain(([a, b, sep]) =>
    fc.constant<[Credential, Credential]>([
      { kind: 'app_id', appId: `${a}${sep}`, appKey: b },
      { kind: 'app_id', appId: a, appKey: `${sep}${b}` },
    ]),
  );

const SERVICE = '2555417735060';
const serviceId = fc.oneof(fc.constantFrom('2555417735060', '2555417735060:', '255541773506'), hostileText);

/** What names a budget: the service and the user key, or the app id whatever key comes with it. */
const budget = (service: string, c: Credential) =>
  JSON.stringify([service, c.kind, c.kind === 'user_key' ? c.userKey : c.appId]);

describe('cache key names', () => {
  it('never collide for distinct budgets of 1 to 256 bytes, across user_key, app_id and services', () => {
    const seed = reliabilitySeed('cache keys');
    const entries = fc.uniqueArray(fc.tuple(serviceId, credential), {
      minLength: 20,
      maxLength: 60,
      selector: ([service, c]) => budget(service, c),
    });
    let compared = 0;
    fc.assert(
      fc.property(entries, (list) => {
        const ids = new Set<string>();
        const names = new Set<string>();
        // Checked with plain comparisons and asserted once per batch: an expect() per key name made
        // this test CPU-bound near its timeout on a loaded machine, for the same checks.
        const malformed: string[] = [];
        for (const [service, c] of list) {
          const id = credentialIdOf(service, c);
          if (!/^[0-9a-f]{64}$/.test(id)) malformed.push(`id ${id}`);
          ids.add(id);
          for (const name of Object.values(credentialKeys(service, id))) {
            // Only the hex id and fixed parts: no raw credential byte, and the hash tag is the id.
            const tag = name.slice(name.indexOf('{') + 1, name.indexOf('}'));
            if (!KEY_NAME.test(name) || tag !== id) malformed.push(`key ${name} of ${id}`);
            names.add(name);
          }
        }
        expect(malformed).toEqual([]);
        compared += list.length;
        expect(ids.size).toBe(list.length);
        expect(names.size).toBe(list.length * Object.keys(credentialKeys('1', ID_SHAPE)).length);
      }),
      { seed, numRuns: 400 },
    );
    console.log(`[cache keys] ${compared} credentials compared in 400 batches`);
  });

  it('keep an app id and key apart from the same text split at another separator', () => {
    const seed = reliabilitySeed('cache keys, shifted separators');
    fc.assert(
      fc.property(serviceId, shiftedPair, (service, [first, second]) => {
        expect(credentialIdOf(service, first)).not.toBe(credentialIdOf(service, second));
        expect(keyIdOf(service, first)).not.toBe(keyIdOf(service, second));
        // A user key spelling the same bytes as an app id + key pair is yet another credential.
        const joined: Credential =
          first.kind === 'app_id'
            ? { kind: 'user_key', userKey: `${first.appId}${first.appKey ?? ''}` }
            : first;
        expect(credentialIdOf(service, joined)).not.toBe(credentialIdOf(service, first));
        expect(credentialIdOf(service, { kind: 'app_id', appId: `${service}` })).not.toBe(
          credentialIdOf(`${service}x`, { kind: 'app_id', appId: '' }),
        );
      }),
      { seed, numRuns: 1000 },
    );
  });
});

describe('key ids', () => {
  it('never collide for distinct app keys of one application, nor with the application presenting none', () => {
    const seed = reliabilitySeed('key ids');
    const keys = fc.uniqueArray(fc.option(hostileText, { nil: undefined }), { minLength: 2, maxLength: 30 });
    fc.assert(
      fc.property(serviceId, hostileText, keys, (service, appId, appKeys) => {
        const ids = appKeys.map((appKey) =>
          keyIdOf(service, { kind: 'app_id', appId, ...(appKey !== undefined && { appKey }) }),
        );
        expect(new Set(ids).size).toBe(appKeys.length);
        const budgets = appKeys.map((appKey) =>
          credentialIdOf(service, { kind: 'app_id', appId, ...(appKey !== undefined && { appKey }) }),
        );
        expect(new Set(budgets).size).toBe(1);
      }),
      { seed, numRuns: 400 },
    );
  });
});

describe('cache keys on a real redis-server', () => {
  let server: TestRedisServer;
  let redis: Redis;
  const sealer = createCredentialSealer('pk-key-property', '2555417735060');

  beforeAll(async () => {
    server = await startTestRedis();
    redis = createRedisClient({ host: server.host, port: server.port, tls: false });
  });

  afterAll(async () => {
    redis?.disconnect();
    await server?.stop();
  });

  it('keeps the usage of each hostile credential in its own keys, and the sweep finds each one', async () => {
    const seed = reliabilitySeed('cache keys on redis');
    const cache = new AccessCache(redis, { serviceId: SERVICE, negativeTtlMs: 60_000, leaseMs: 60_000 });
    const batch = fc.uniqueArray(credential, {
      minLength: 10,
      maxLength: 25,
      selector: (c) => budget('2555417735060', c),
    });
    await fc.assert(
      fc.asyncProperty(batch, async (credentials) => {
        await server.inspector.flushall();
        const now = Date.UTC(2024, 5, 1);
        const expected = new Map<string, number>();
        for (const [i, c] of credentials.entries()) {
          const id = credentialIdOf(SERVICE, c);
          await cache.admit(id, sealer.seal(id, c), { hits: i + 1 }, now, 0);
          expected.set(id, i + 1);
        }
        for (const [id, hits] of expected) {
          expect(await usageIn(server.inspector, credentialKeys(SERVICE, id).pending)).toEqual({ hits });
          expect(
            sealer.unseal(id, (await server.inspector.hget(credentialKeys(SERVICE, id).app, 'cred')) ?? ''),
          ).toEqual(credentials[hits - 1]);
        }
        const found = await cache.unreportedSince(now, 1000);
        expect(new Set(found)).toEqual(new Set(expected.keys()));
        expect(found).toHaveLength(expected.size);
      }),
      { seed, numRuns: 40 },
    );
  });
});
