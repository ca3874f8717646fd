/**
 * The reporter's core, stage by stage (drain, verify with its resync, report, settle) and as the
 * whole flush. The handler tests (test/unit/handlers/reporter.test.ts) map its results to SQS.
 */
import type Redis from 'ioredis';
import RedisMock from 'ioredis-mock';
import { beforeEach, describe, expect, it } from 'vitest';
import { AccessCache } from '../../../../core/budget/cache';
import { credentialKeys } from '../../../../core/budget/keys';
import { credentialIdOf, keyIdOf } from '../../../../core/credentials';
import { createCredentialSealer } from '../../../../core/credentials/seal';
import type { AuthOutcome, Credential, Usage, UsageReport } from '../../../../core/platform/types';
import { drainUsage } from '../../../../core/reporting/drain';
import type {
  DrainedUsage,
  FlushPorts,
  ResyncedUsage,
  ResyncObserver,
} from '../../../../core/reporting/flush-types';
import { LeaseBook } from '../../../../core/reporting/leases';
import { reportUsage } from '../../../../core/reporting/report';
import { createUsageFlusher } from '../../../../core/reporting/reporting';
import { settleUsage } from '../../../../core/reporting/settle';
import { verifyCredentials } from '../../../../core/reporting/verify';
import { parseConfig } from '../../../../core/settings/config';
import {
  authorized,
  CapturingLogger,
  CapturingMetrics,
  denied,
  FakePlatform,
  hourly,
  invalidCredential,
  MISCONFIGURED,
  releaseRefusing,
  UNAVAILABLE,
  usageIn,
} from '../fakes';

const SERVICE = '2555417735060';
const T0 = Date.UTC(2030, 0, 1, 10, 0, 0);
const END = Date.UTC(2030, 0, 1, 11, 0, 0);
const sealer = createCredentialSealer('pk-test', SERVICE);

let redis: Redis;
let platform: FakePlatform;
let logger: CapturingLogger;
let metrics: CapturingMetrics;
let observed: ResyncedUsage[];
let clock: number;

const credential = (key: string): Credential => ({ kind: 'user_key', userKey: key });
const status = (usageReports: UsageReport[]) => ({
  plan: 'Basic',
  usageReports,
  hierarchy: { hits: ['get_word', 'post_word'] },
});
const idOf = (key: string) => credentialIdOf(SERVICE, credential(key));

function ports(overrides: Partial<FlushPorts> = {}): FlushPorts {
  return {
    serviceId: SERVICE,
    cache: new AccessCache(redis, { serviceId: SERVICE, negativeTtlMs: 60_000, leaseMs: 60_000 }),
    sealer,
    platform,
    now: () => clock,
    logger,
    metrics,
    onResynced: (resynced) => {
      observed.push(resynced);
      return undefined;
    },
    leases: new LeaseBook(),
    settleRetryMs: 0,
    ...overrides,
  };
}

/** The client with the named scripts failing as a Redis refusing writes does. */
function failing(...scripts: string[]): Redis {
  return new Proxy(redis, {
    get: (target, property, receiver) =>
      scripts.includes(String(property))
        ? () => Promise.reject(new Error("READONLY You can't write against a read only replica."))
        : Reflect.get(target, property, receiver),
  });
}

/** Usage allowed for the key and waiting for the reporter, with the key's snapshot when given. */
async function pending(key: string, usage: Usage, answer?: AuthOutcome) {
  const cache = ports().cache;
  const sealed = sealer.seal(idOf(key), credential(key));
  if (answer?.kind === 'authorized' || answer?.kind === 'denied') {
    await cache.storeAnswer({
      credentialId: idOf(key),
      keyId: '',
      sealedCredential: sealed,
      answer,
      now: clock,
    });
  }
  await cache.admit(idOf(key), sealed, usage, clock, 0);
}

async function drained(...keys: string[]): Promise<DrainedUsage[]> {
  const { ready } = await drainUsage(ports(), keys.map(idOf));
  return keys.map((key) => {
    const item = ready.find((each) => each.credentialId === idOf(key));
    if (!item) throw new Error(`nothing drained for ${key}`);
    return item;
  });
}

const usageInFlight = (key: string) => usageIn(redis, key);

/** The minute bucket admitted usage goes to (no snapshot tells the plan's periods). */
const bucketOf = (usage: Usage, at = T0) => ({ start: at - (at % 60_000), lastCallAt: at, usage });

beforeEach(async () => {
  redis = new RedisMock() as unknown as Redis;
  await redis.flushall();
  platform = new FakePlatform();
  logger = new CapturingLogger();
  metrics = new CapturingMetrics();
  observed = [];
  clock = T0;
});

describe('drain', () => {
  it('takes pending usage in flight under a lease and unseals the credential; sorts out empty and busy', async () => {
    await pending('key-a', { get_word: 2 });
    await pending('key-c', { get_word: 1 });
    await redis.set(credentialKeys(SERVICE, idOf('key-c')).lease, 'another-reporter');
    const result = await drainUsage(ports(), ['key-a', 'key-b', 'key-c'].map(idOf));
    expect(result).toEqual({
      ready: [
        {
          credentialId: idOf('key-a'),
          lease: expect.any(String),
          sealedCredential: expect.stringMatching(/^v1\./),
          credential: credential('key-a'),
          buckets: [bucketOf({ get_word: 2 })],
          usage: { get_word: 2 },
          batch: expect.any(String),
          history: 'none',
          refusals: [],
        },
      ],
      idle: [],
      empty: [idOf('key-b')],
      busy: [idOf('key-c')],
      failed: [],
      unreadable: [],
    });
    const keys = credentialKeys(SERVICE, idOf('key-a'));
    expect(await usageInFlight(keys.inFlight)).toEqual({ get_word: 2 });
    expect(await redis.get(keys.lease)).toBe(result.ready[0].lease);
    expect(await redis.get(keys.batch)).toBe(`${result.ready[0].batch} new`);
    expect(metrics.counts.FlushBusy).toBe(1);
  });

  it('a credential sealed under another key, or not stored, is unreadable: its usage stays, unleased', async () => {
    const rotated = createCredentialSealer('pk-rotated', SERVICE);
    await ports().cache.admit(
      idOf('key-r'),
      rotated.seal(idOf('key-r'), credential('key-r')),
      { hits: 1 },
      T0,
      0,
    );
    await pending('key-m', { hits: 1 });
    await redis.hdel(credentialKeys(SERVICE, idOf('key-m')).app, 'cred');
    const result = await drainUsage(ports(), [idOf('key-r'), idOf('key-m')]);
    expect(result.ready).toEqual([]);
    expect([...result.unreadable].sort()).toEqual([idOf('key-r'), idOf('key-m')].sort());
    for (const key of ['key-r', 'key-m']) {
      expect(await usageInFlight(credentialKeys(SERVICE, idOf(key)).inFlight)).toEqual({ hits: 1 });
      expect(await redis.exists(credentialKeys(SERVICE, idOf(key)).lease)).toBe(0);
    }
    expect(metrics.counts.FlushUnreadable).toBe(2);
    expect(logger.lines.filter((line) => line.level === 'error')).toHaveLength(2);
  });

  it('Redis failing: the credential failed, said in a warning', async () => {
    await pending('key-a', { hits: 1 });
    const cache = new AccessCache(failing('accessDrain'), {
      serviceId: SERVICE,
      negativeTtlMs: 60_000,
      leaseMs: 60_000,
    });
    expect(await drainUsage(ports({ cache }), [idOf('key-a')])).toMatchObject({
      ready: [],
      failed: [idOf('key-a')],
    });
    expect(logger.lines).toContainEqual(expect.objectContaining({ level: 'warn' }));
  });

  it('a drain that ran but whose answer was lost leaves the budget free for the next drain, which resends it', async () => {
    await pending('key-a', { hits: 1 });
    // The script runs in Redis, then the command times out: the lease it took is its own.
    const lateAnswer = new Proxy(redis, {
      get: (target, property, receiver) =>
        property === 'accessDrain'
          ? async (...args: unknown[]) => {
              await (Reflect.get(target, property, receiver) as (...a: unknown[]) => Promise<unknown>).apply(
                target,
                args,
              );
              throw new Error('Command timed out');
            }
          : Reflect.get(target, property, receiver),
    });
    const cache = new AccessCache(lateAnswer, { serviceId: SERVICE, negativeTtlMs: 60_000, leaseMs: 60_000 });
    expect(await drainUsage(ports({ cache }), [idOf('key-a')])).toMatchObject({ failed: [idOf('key-a')] });
    expect(await redis.exists(credentialKeys(SERVICE, idOf('key-a')).lease)).toBe(0);
    const [again] = await drained('key-a');
    expect(again).toMatchObject({ usage: { hits: 1 }, history: 'unsent' });
  });
});

describe('verify (with the resync)', () => {
  const verdicts: [string, AuthOutcome, 'reportable' | 'discarded' | 'unverified'][] = [
    ['authorized', authorized(), 'reportable'],
    ['over its limits', denied('limits_exceeded'), 'reportable'],
    ['suspended', denied('application_not_active'), 'reportable'],
    ['invalid', invalidCredential(), 'discarded'],
    ['of an application that does not exist', invalidCredential('application_not_found'), 'discarded'],
    [
      'whose kept app key was revoked (the application exists)',
      denied('application_key_invalid'),
      'reportable',
    ],
    ['not answered (platform unavailable)', UNAVAILABLE, 'unverified'],
    ['not answered (our configuration refused)', MISCONFIGURED, 'unverified'],
  ];

  it.each(verdicts)('a credential %s is %s', async (_, answer, verdict) => {
    await pending('key-a', { get_word: 1 });
    const [item] = await drained('key-a');
    platform.authorizeAnswer = () => answer;
    const result = await verifyCredentials(ports(), [item]);
    expect(result).toEqual({
      reportable: [],
      discarded: [],
      rejected: [],
      unverified: [],
      [verdict]: [item],
    });
    expect(platform.calls).toEqual([
      { op: 'authorize', credential: credential('key-a'), usage: { get_word: 1 } },
    ]);
    expect(metrics.counts.UsageDiscarded).toBe(verdict === 'discarded' ? 1 : undefined);
    // Verify settles nothing: the usage stays in flight under the lease.
    expect(await usageInFlight(credentialKeys(SERVICE, item.credentialId).inFlight)).toEqual({ get_word: 1 });
    expect(await redis.get(credentialKeys(SERVICE, item.credentialId).lease)).toBe(item.lease);
  });

  it('stores the fresh answer: a new period, a changed limit, a suspension', async () => {
    await pending('key-a', { get_word: 1 }, authorized([hourly('hits', 10, 9, END)]));
    await pending('key-s', { get_word: 1 }, authorized([hourly('hits', 10, 1, END)]));
    const items = await drained('key-a', 'key-s');
    clock = END + 1;
    platform.authorizeAnswer = (asked) =>
      asked.kind === 'user_key' && asked.userKey === 'key-s'
        ? denied('application_not_active', [hourly('hits', 10, 1, END + 3_600_000)])
        : authorized([hourly('hits', 20, 0, END + 3_600_000)]);
    await verifyCredentials(ports(), items);
    const app = await redis.hgetall(credentialKeys(SERVICE, idOf('key-a')).app);
    expect(app).toMatchObject({ state: 'active', synced: String(END + 1) });
    expect(app['limit:hour:hits']).toBe(`${END} ${END + 3_600_000} 20 0`);
    expect(await redis.hget(credentialKeys(SERVICE, idOf('key-s')).app, 'state')).toBe(
      'denied:application_not_active',
    );
  });

  it("shows the observer each known credential's fresh usage, with the usage in flight and the key that names it", async () => {
    await pending('key-a', { get_word: 3 });
    await pending('key-x', { get_word: 1 });
    await pending('key-u', { get_word: 1 });
    const items = await drained('key-a', 'key-x', 'key-u');
    const answers: Record<string, AuthOutcome> = {
      'key-a': authorized([hourly('hits', 100, 41, END)]),
      'key-x': invalidCredential(),
      'key-u': UNAVAILABLE,
    };
    platform.authorizeAnswer = (asked) => answers[asked.kind === 'user_key' ? asked.userKey : ''];
    await verifyCredentials(ports(), items);
    expect(observed).toEqual([
      {
        credentialId: idOf('key-a'),
        state: { kind: 'active' },
        status: expect.objectContaining({
          plan: 'Basic',
          usageReports: [hourly('hits', 100, 41, END)],
          hierarchy: { hits: ['get_word', 'post_word'] },
        }),
        inFlight: { get_word: 3 },
        inFlightBuckets: [bucketOf({ get_word: 3 })],
        userKey: 'key-a',
        refusals: [],
        now: T0,
      },
    ]);
  });

  it('an observer that fails, or an answer that cannot be stored, changes no verdict', async () => {
    await pending('key-a', { get_word: 1 });
    const [item] = await drained('key-a');
    const cache = new AccessCache(failing('accessStore'), {
      serviceId: SERVICE,
      negativeTtlMs: 60_000,
      leaseMs: 60_000,
    });
    const onResynced = () => Promise.reject(new Error('alerts down'));
    expect(await verifyCredentials(ports({ cache, onResynced }), [item])).toMatchObject({
      reportable: [item],
    });
    expect(metrics.counts.ResyncFailed).toBe(1);
    expect(logger.lines.map((line) => `${line.level} ${line.message}`)).toEqual([
      'warn resync not stored',
      'warn resync observer failed',
    ]);
  });

  it('asks the platform about 16 credentials at a time at most, and about every one', async () => {
    const keys = Array.from({ length: 40 }, (_, i) => `key-${i}`);
    for (const key of keys) await pending(key, { hits: 1 });
    let running = 0;
    let most = 0;
    const slow = Object.assign(new FakePlatform(), {
      async authorize(): Promise<AuthOutcome> {
        running += 1;
        most = Math.max(most, running);
        await new Promise((resolve) => setTimeout(resolve, 1));
        running -= 1;
        return authorized();
      },
    });
    const result = await verifyCredentials(ports({ platform: slow }), await drained(...keys));
    expect(result.reportable).toHaveLength(40);
    expect(most).toBe(16);
  });
});

describe('verify: what the platform would not take', () => {
  it('keeps aside the usage of a metric the platform does not have, and verifies the rest', async () => {
    await pending('key-a', { get_word: 2, ghost: 3 });
    await pending('key-g', { ghost: 1 });
    const items = await drained('key-a', 'key-g');
    platform.authorizeAnswer = (_, usage) =>
      'ghost' in usage
        ? { kind: 'misconfigured', code: 'metric_invalid', status: 404, message: 'metric "ghost" is invalid' }
        : authorized();
    const result = await verifyCredentials(ports(), items);
    expect(result.reportable).toEqual([
      expect.objectContaining({
        credentialId: idOf('key-a'),
        usage: { get_word: 2 },
        buckets: [bucketOf({ get_word: 2 })],
      }),
    ]);
    expect(result.rejected).toEqual([expect.objectContaining({ credentialId: idOf('key-g'), usage: {} })]);
    expect(await ports().cache.rejectedUsage()).toEqual(
      expect.arrayContaining([
        { credentialId: idOf('key-a'), usage: { ghost: 3 } },
        { credentialId: idOf('key-g'), usage: { ghost: 1 } },
      ]),
    );
    expect(metrics.counts.UsageRejected).toBe(4);
    expect(logger.lines.filter((line) => line.level === 'error')).toHaveLength(2);
  });

  it("tries the application's other valid keys when the one its budget keeps was revoked", async () => {
    const app = (appKey: string): Credential => ({ kind: 'app_id', appId: 'app-1', appKey });
    const id = credentialIdOf(SERVICE, app('k-old'));
    const cache = ports().cache;
    const answer = { kind: 'authorized', ...status([hourly('hits', 100, 5, END)]) } as const;
    for (const appKey of ['k-new', 'k-old']) {
      await cache.storeAnswer({
        credentialId: id,
        keyId: keyIdOf(SERVICE, app(appKey)),
        sealedCredential: sealer.seal(id, app(appKey)),
        answer,
        now: clock,
      });
    }
    await cache.admit(id, sealer.seal(id, app('k-old')), { hits: 1 }, clock, 0);
    const { ready } = await drainUsage(ports(), [id]);
    platform.authorizeAnswer = (asked) =>
      asked.kind === 'app_id' && asked.appKey === 'k-old'
        ? denied('application_key_invalid')
        : authorized([hourly('hits', 100, 6, END)]);
    const result = await verifyCredentials(ports(), ready);
    expect(result.reportable).toEqual([expect.objectContaining({ credential: app('k-new') })]);
    expect(await redis.hget(credentialKeys(SERVICE, id).keys, keyIdOf(SERVICE, app('k-old')))).toMatch(
      /^bad /,
    );
    expect(await redis.hget(credentialKeys(SERVICE, id).app, 'limit:hour:hits')).toBe(
      `${END - 3_600_000} ${END} 100 6`,
    );
  });
});

describe('report', () => {
  it('nothing to report: no platform call', async () => {
    expect(await reportUsage(ports(), [])).toEqual({ accepted: [], refused: [], unsent: [] });
    expect(platform.calls).toEqual([]);
    expect(metrics.counts).toEqual({});
  });

  it('one report call with one transaction per credential, all accepted', async () => {
    await pending('key-a', { get_word: 2 });
    await pending('key-b', { post_word: 1 });
    const items = await drained('key-a', 'key-b');
    expect(await reportUsage(ports(), items)).toEqual({ accepted: items, refused: [], unsent: [] });
    expect(platform.calls).toEqual([
      {
        op: 'report',
        transactions: [
          { credential: credential('key-a'), usage: { get_word: 2 }, timestamp: T0 },
          { credential: credential('key-b'), usage: { post_word: 1 }, timestamp: T0 },
        ],
      },
    ]);
    expect(metrics.counts).toEqual({ PlatformCall: 1, ReportedTransactions: 2 });
  });

  it('sends each period bucket with the time of its last call, and usage the platform would refuse as of now', async () => {
    const cache = ports().cache;
    const sealed = sealer.seal(idOf('key-a'), credential('key-a'));
    await cache.admit(idOf('key-a'), sealed, { hits: 1 }, T0 - 25 * 3_600_000, 0);
    await cache.admit(idOf('key-a'), sealed, { hits: 2 }, T0 - 61_000, 0);
    await cache.admit(idOf('key-a'), sealed, { hits: 3 }, T0 - 1_000, 0);
    const items = await drained('key-a');
    await reportUsage(ports(), items);
    expect(platform.calls).toEqual([
      {
        op: 'report',
        transactions: [
          { credential: credential('key-a'), usage: { hits: 1 } },
          { credential: credential('key-a'), usage: { hits: 2 }, timestamp: T0 - 61_000 },
          { credential: credential('key-a'), usage: { hits: 3 }, timestamp: T0 - 1_000 },
        ],
      },
    ]);
    expect(logger.lines).toEqual([
      expect.objectContaining({ level: 'warn', message: expect.stringMatching(/as of now/) }),
    ]);
  });

  it('a budget counts as accepted only when all of its buckets were', async () => {
    const cache = ports().cache;
    for (const key of ['key-a', 'key-b']) {
      const sealed = sealer.seal(idOf(key), credential(key));
      await cache.admit(idOf(key), sealed, { hits: 1 }, T0 - 61_000, 0);
      await cache.admit(idOf(key), sealed, { hits: 1 }, T0, 0);
    }
    const items = await drained('key-a', 'key-b');
    platform.reportAnswer = () => ({ ...UNAVAILABLE, acceptedTransactions: 3 });
    expect(await reportUsage(ports(), items)).toEqual({
      accepted: items.slice(0, 1),
      refused: items.slice(1),
      unsent: items.slice(1),
    });
  });

  const TIMED_OUT = { kind: 'unavailable', cause: 'timeout', message: 'no answer' } as const;
  it.each([
    ['unavailable', { ...UNAVAILABLE }, 0, 'warn', true],
    ['split, accepted in part', { ...UNAVAILABLE, acceptedTransactions: 1 }, 1, 'warn', true],
    ['refusing our configuration', { ...MISCONFIGURED }, 0, 'error', true],
    ['not answering in time', TIMED_OUT, 0, 'warn', false],
  ] as const)(
    'a platform %s: the accepted part counts, the rest is refused',
    async (_, outcome, acceptedCount, level, countedNothing) => {
      for (const key of ['key-a', 'key-b', 'key-c']) await pending(key, { hits: 1 });
      const items = await drained('key-a', 'key-b', 'key-c');
      platform.reportAnswer = () => outcome;
      // Only an answer tells the refused part was not counted; a timeout leaves it unknown.
      expect(await reportUsage(ports(), items)).toEqual({
        accepted: items.slice(0, acceptedCount),
        refused: items.slice(acceptedCount),
        unsent: countedNothing ? items.slice(acceptedCount) : [],
      });
      expect(metrics.counts).toMatchObject({ ReportFailed: 1, ReportedTransactions: acceptedCount });
      expect(logger.lines).toEqual([
        expect.objectContaining({
          level,
          attributes: expect.objectContaining({ accepted: acceptedCount, refused: 3 - acceptedCount }),
        }),
      ]);
    },
  );
});

describe('settle', () => {
  it('acknowledged usage leaves Redis, folded into the snapshot; released usage stays and is resent', async () => {
    await pending('key-a', { get_word: 2 }, authorized([hourly('hits', 100, 5, END)]));
    await pending('key-b', { get_word: 1 });
    const [a, b] = await drained('key-a', 'key-b');
    await settleUsage(ports(), { acknowledge: [a], release: [b] });
    const keysA = credentialKeys(SERVICE, a.credentialId);
    expect(await redis.exists(keysA.inFlight, keysA.pending, keysA.since, keysA.lease)).toBe(0);
    expect(await redis.hget(keysA.app, 'limit:hour:hits')).toBe(`${END - 3_600_000} ${END} 100 7`);
    const keysB = credentialKeys(SERVICE, b.credentialId);
    expect(await usageInFlight(keysB.inFlight)).toEqual({ get_word: 1 });
    expect(await redis.exists(keysB.lease)).toBe(0);
    expect(await drained('key-b')).toEqual([
      expect.objectContaining({ usage: { get_word: 1 }, history: 'unsent' }),
    ]);
  });

  it('a batch marked sent whose acknowledgement Redis refused is settled by the next drain, never sent again', async () => {
    await pending('key-a', { get_word: 2 }, authorized([hourly('hits', 100, 5, END)]));
    const [a] = await drained('key-a');
    const cache = new AccessCache(failing('accessAcknowledge', 'accessRelease'), {
      serviceId: SERVICE,
      negativeTtlMs: 60_000,
      leaseMs: 60_000,
    });
    const leases = new LeaseBook();
    await settleUsage(ports({ cache, leases }), { acknowledge: [a], release: [] });
    expect(logger.lines).toEqual([
      expect.objectContaining({
        level: 'warn',
        message: expect.stringMatching(/acknowledges it by its mark/),
      }),
    ]);
    const keys = credentialKeys(SERVICE, a.credentialId);
    expect(await redis.get(keys.batch)).toBe(`${a.batch} sent`);
    // The lease it could not give back: this process's next drain takes it over at once.
    expect(leases.heldOn(a.credentialId)).toBe(a.lease);
    const next = await drainUsage(ports({ leases }), [a.credentialId]);
    expect(next).toMatchObject({ ready: [], busy: [], empty: [a.credentialId] });
    expect(metrics.counts.BatchSettledByMark).toBe(1);
    expect(await redis.exists(keys.inFlight, keys.batch, keys.lease, keys.since)).toBe(0);
    expect(await redis.hget(keys.app, 'limit:hour:hits')).toBe(`${END - 3_600_000} ${END} 100 7`);
    expect(leases.heldOn(a.credentialId)).toBe('');
  });

  it('a batch the platform accepted but Redis took no sent mark of is said loudly, to be sent again', async () => {
    await pending('key-a', { get_word: 1 });
    const [a] = await drained('key-a');
    const cache = new AccessCache(failing('accessMarkBatch', 'accessAcknowledge', 'accessRelease'), {
      serviceId: SERVICE,
      negativeTtlMs: 60_000,
      leaseMs: 60_000,
    });
    await settleUsage(ports({ cache }), { acknowledge: [a], release: [] });
    expect(logger.lines).toEqual([
      expect.objectContaining({ level: 'error', message: expect.stringMatching(/no sent mark/) }),
    ]);
    expect(metrics.counts.BatchSentUnmarked).toBe(1);
  });

  it('a batch whose report may have been taken is sent again, counted; one the platform refused is not', async () => {
    for (const key of ['key-a', 'key-b']) await pending(key, { hits: 3 });
    const [a, b] = await drained('key-a', 'key-b');
    const cache = ports().cache;
    for (const item of [a, b])
      expect(await cache.markBatch(item.credentialId, item.batch, 'posting')).toBe(true);
    // key-a's report got no answer (a timeout); key-b's was refused with an answer: it counted nothing.
    await settleUsage(ports(), { acknowledge: [], release: [a, b], unsent: [b] });
    const [againA, againB] = await drained('key-a', 'key-b');
    expect(againA).toMatchObject({ batch: a.batch, history: 'maybe-sent', usage: { hits: 3 } });
    expect(againB).toMatchObject({ batch: b.batch, history: 'unsent', usage: { hits: 3 } });
    expect(metrics.counts.BatchResentMaybeSent).toBe(1);
    expect(metrics.counts.UnitsResentMaybeSent).toBe(3);
  });
});

describe('flush (the stages in rounds)', () => {
  function flusher(onResynced?: ResyncObserver) {
    return createUsageFlusher({
      config: parseConfig({ serviceId: SERVICE, platformCredential: 'pk-test' }),
      redis,
      platform,
      now: () => clock,
      logger,
      metrics,
      ...(onResynced && { onResynced }),
    });
  }

  it('a clean stop gives back the leases a failed settlement left, so no usage waits under them', async () => {
    await pending('key-a', { hits: 2 });
    // The platform refuses the report and Redis then refuses to give the lease back.
    const accepting = platform.reportAnswer;
    platform.reportAnswer = () => UNAVAILABLE;
    const flaky = releaseRefusing(redis);
    const stopping = createUsageFlusher({
      config: parseConfig({ serviceId: SERVICE, platformCredential: 'pk-test' }),
      redis: flaky.client,
      platform,
      now: () => clock,
      logger,
      metrics,
      settleRetryMs: 0,
    });
    expect(await stopping.flush([idOf('key-a')])).toMatchObject({ failed: [idOf('key-a')] });
    const keys = credentialKeys(SERVICE, idOf('key-a'));
    expect(await redis.exists(keys.lease)).toBe(1);
    flaky.heal();
    await stopping.close();
    expect(await redis.exists(keys.lease)).toBe(0);
    // What stays in flight is free for any reporter, and was marked unsent: the platform answered.
    platform.reportAnswer = accepting;
    expect(await flusher().flush([idOf('key-a')])).toMatchObject({ flushed: [idOf('key-a')] });
    expect(metrics.counts.BatchResentMaybeSent).toBeUndefined();
  });

  it('sorts every credential of a batch into one outcome', async () => {
    for (const key of ['ok', 'busy', 'invalid', 'unverified', 'refused-later'])
      await pending(key, { hits: 1 });
    await redis.set(credentialKeys(SERVICE, idOf('busy')).lease, 'another-reporter');
    await redis.hdel(credentialKeys(SERVICE, idOf('refused-later')).app, 'cred');
    platform.authorizeAnswer = (asked) => {
      const key = asked.kind === 'user_key' ? asked.userKey : '';
      if (key === 'invalid') return invalidCredential();
      if (key === 'unverified') return UNAVAILABLE;
      return authorized();
    };
    const result = await flusher().flush(
      ['ok', 'ok', 'empty', 'busy', 'invalid', 'unverified', 'refused-later'].map(idOf),
    );
    expect(result).toEqual({
      flushed: [idOf('ok'), idOf('unverified')],
      unverified: [idOf('unverified')],
      discarded: [idOf('invalid')],
      rejected: [],
      empty: [idOf('empty')],
      busy: [idOf('busy')],
      failed: [],
      unreadable: [idOf('refused-later')],
      retry: [],
    });
    expect(platform.accepted).toEqual([
      { credential: credential('ok'), usage: { hits: 1 }, timestamp: T0 },
      { credential: credential('unverified'), usage: { hits: 1 }, timestamp: T0 },
    ]);
    expect(await redis.exists(credentialKeys(SERVICE, idOf('invalid')).inFlight)).toBe(0);
    expect(await redis.exists(credentialKeys(SERVICE, idOf('unverified')).inFlight)).toBe(0);
  });

  it('reports usage whose re-check got no answer in a report call of its own, and counts it', async () => {
    for (const key of ['ok', 'slow']) await pending(key, { hits: 2 });
    platform.authorizeAnswer = (asked) =>
      asked.kind === 'user_key' && asked.userKey === 'slow' ? UNAVAILABLE : authorized();
    const result = await flusher().flush(['ok', 'slow'].map(idOf));
    expect(result.flushed).toEqual([idOf('ok'), idOf('slow')]);
    expect(result.unverified).toEqual([idOf('slow')]);
    const reports = platform.calls.flatMap((c) => (c.op === 'report' ? [c.transactions] : []));
    expect(reports.map((transactions) => transactions.map((t) => t.credential))).toEqual([
      [credential('ok')],
      [credential('slow')],
    ]);
    expect(metrics.counts.ReportedUnverified).toBe(1);
  });

  it('keeps unverified usage in flight when its own report fails, for the retry', async () => {
    await pending('slow', { hits: 1 });
    platform.authorizeAnswer = () => UNAVAILABLE;
    platform.reportAnswer = () => UNAVAILABLE;
    const result = await flusher().flush([idOf('slow')]);
    expect(result).toMatchObject({ flushed: [], unverified: [], failed: [idOf('slow')] });
    expect(await usageInFlight(credentialKeys(SERVICE, idOf('slow')).inFlight)).toEqual({ hits: 1 });
  });

  it('refreshes a budget whose calls were refused though it has nothing to report, and shows the refusals', async () => {
    const cache = ports().cache;
    const sealed = sealer.seal(idOf('key-a'), credential('key-a'));
    await cache.storeAnswer({
      credentialId: idOf('key-a'),
      keyId: '',
      sealedCredential: sealed,
      answer: { kind: 'authorized', ...status([hourly('hits', 5, 5, END)]) },
      now: clock,
    });
    const check = () =>
      cache.check({
        credentialId: idOf('key-a'),
        keyId: '',
        usage: { hits: 1 },
        now: clock,
        windowMs: 0,
        softLimits: false,
      });
    expect(await check()).toMatchObject({ kind: 'limited', publish: true });
    platform.authorizeAnswer = () => authorized([hourly('hits', 100, 5, END)]);
    const seen: ResyncedUsage[] = [];
    const result = await flusher((resynced) => void seen.push(resynced)).flush([idOf('key-a')]);
    expect(result.empty).toEqual([idOf('key-a')]);
    expect(platform.calls).toEqual([{ op: 'authorize', credential: credential('key-a'), usage: {} }]);
    expect(seen).toEqual([
      expect.objectContaining({ inFlight: {}, refusals: [{ metric: 'hits', period: 'hour', at: T0 }] }),
    ]);
    expect(await check()).toMatchObject({ kind: 'allow' });
  });

  it('a resent batch is followed by the usage that waited behind it, in a second round', async () => {
    await pending('key-a', { hits: 2 });
    platform.reportAnswer = () => UNAVAILABLE;
    expect(await flusher().flush([idOf('key-a')])).toMatchObject({ flushed: [], failed: [idOf('key-a')] });
    await pending('key-a', { hits: 3 });
    platform.reportAnswer = () => ({ kind: 'accepted', requests: 1 });
    const seen: Usage[] = [];
    const result = await flusher((resynced) => void seen.push(resynced.inFlight)).flush([idOf('key-a')]);
    expect(result.flushed).toEqual([idOf('key-a')]);
    expect(seen).toEqual([{ hits: 2 }, { hits: 3 }]);
    expect(platform.accepted.map((transaction) => transaction.usage)).toEqual([{ hits: 2 }, { hits: 3 }]);
  });

  it('a credential whose second round fails is not flushed: its waiting usage stays for the retry', async () => {
    await pending('key-a', { hits: 2 });
    platform.reportAnswer = () => UNAVAILABLE;
    await flusher().flush([idOf('key-a')]);
    await pending('key-a', { hits: 3 });
    let reports = 0;
    platform.reportAnswer = () => (++reports === 1 ? { kind: 'accepted', requests: 1 } : UNAVAILABLE);
    expect(await flusher().flush([idOf('key-a')])).toMatchObject({ flushed: [], failed: [idOf('key-a')] });
    expect(await usageInFlight(credentialKeys(SERVICE, idOf('key-a')).inFlight)).toEqual({ hits: 3 });
  });
});
