/**
 * Lossless accounting: seeded random runs of calls across 50 keys with faults injected in every
 * component, ended by a flush (queue drained, sweep), after which the platform's `hits` counter of each
 * application is compared with the calls the authorizer allowed for it.
 *
 * - Unambiguous faults only (every failed operation is known not to have happened): SNS publish
 *   refusals, platform 503s on reports and on first calls, Redis cut off between calls, SQS messages
 *   lost. The difference must be 0 for every application.
 * - Ambiguous faults added (an operation fails after it may have taken effect): a reporter that dies
 *   after the platform's 202, Redis hanging while commands are in flight. Nothing may be lost; what is
 *   counted twice is the at-least-once window, printed.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, describe, expect, it } from 'vitest';
import type { Answer } from './support/answers';
import { type Harness, reporterDeath, startHarness } from './support/harness';
import { PATH_SPELLINGS, type PathSpelling } from './support/request-events';
import { reliabilitySeed, seededRandom } from './support/seed';

const KEYS = 50;
const GROUP = 10;

interface RunFigures {
  calls: number;
  allowed: number;
  denied: number;
  unauthorized: number;
  snsRefusals: number;
  reportOutages: number;
  authOutages: number;
  redisBlips: number;
  redisHangs: number;
  reporterDeaths: number;
  lostMessages: number;
  deliveries: number;
  /** Scheduled sweeps that failed because Redis was cut off or paused while they ran. */
  failedSweeps: number;
}

interface RunOptions {
  readonly calls: number;
  readonly ambiguous: boolean;
  readonly seed: number;
  /** app_id applications with this many keys each, every call with one of them; default user keys. */
  readonly keysPerApp?: number;
  /** Calls spell their path in every way that means the same path (percent-encoded, dot segments...). */
  readonly pathSpellings?: boolean;
}

let harness: Harness | undefined;

afterEach(async () => {
  await harness?.stop();
  harness = undefined;
});

async function accountingRun({ calls, ambiguous, seed, keysPerApp, pathSpellings }: RunOptions) {
  const random = seededRandom(seed);
  const chance = (p: number) => random() < p;
  // Message losses draw from a stream of their own: how many messages SNS delivers depends on timing,
  // and the script of calls, faults and sweeps must not (the same seed gives the same run on any machine).
  const lossRandom = seededRandom(seed ^ 0x5eed_1055);
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)] as T;
  const figures: RunFigures = {
    calls: 0,
    allowed: 0,
    denied: 0,
    unauthorized: 0,
    snsRefusals: 0,
    reportOutages: 0,
    authOutages: 0,
    redisBlips: 0,
    redisHangs: 0,
    reporterDeaths: 0,
    lostMessages: 0,
    deliveries: 0,
    failedSweeps: 0,
  };
  const death = reporterDeath(() => figures.reporterDeaths++);
  const h = await startHarness({
    apps: KEYS,
    ...(keysPerApp !== undefined && { mode: 'app_id', keysPerApp }),
    overrides: { reportWindowSeconds: 1, platformTimeoutMs: 500, reportTimeoutMs: 1000 },
    maxReceiveCount: 3,
    loseMessage: () => {
      const lost = lossRandom() < 0.1;
      if (lost) figures.lostMessages++;
      return lost;
    },
    reporterPlatform: death.reporterPlatform,
  });
  harness = h;
  const appOf = new Map(h.fixture.active.flatMap((app) => app.keys.map((key) => [key, app.id] as const)));
  const allowed = new Map(h.fixture.active.map((app) => [app.id, 0]));
  // A few applications carry most of the traffic, as in life; some calls come with keys that get no Allow.
  const hot = h.fixture.active.slice(0, 5).flatMap((app) => app.keys);
  const all = h.fixture.active.flatMap((app) => app.keys);
  const refused = [...h.fixture.suspended.map((app) => app.userKey), 'never:{issued}*1', 'never:{issued}*2'];
  const spellings = Object.keys(PATH_SPELLINGS) as PathSpelling[];

  const record = (userKey: string, answer: Answer) => {
    figures.calls++;
    if (answer.kind === 'crash') throw new Error(`authorizer crashed: ${answer.detail}`);
    if (answer.kind === 'unauthorized') figures.unauthorized++;
    if (answer.kind === 'deny') figures.denied++;
    if (answer.kind !== 'allow') return;
    figures.allowed++;
    const app = appOf.get(userKey);
    if (app === undefined) throw new Error(`Allow for a key the platform never issued: ${userKey}`);
    allowed.set(app, (allowed.get(app) ?? 0) + 1);
  };

  /**
   * A run of the scheduled sweep, a Lambda invocation of its own: while Redis is cut off or paused it
   * fails (its Redis commands time out or find no connection), as that invocation would, and the next
   * schedule runs it again; nothing it leaves behind may be lost. A failure with Redis healthy is a defect.
   */
  const scheduledSweep = async (redisFault: boolean) => {
    try {
      await h.reporterContainer().sweepAll();
    } catch (error) {
      if (!redisFault) throw error;
      figures.failedSweeps++;
    }
  };

  const deliver = async () => {
    figures.deliveries++;
    await h.queue.deliverNow();
    if (h.reporterContainer().dead) h.replaceReporter();
  };

  while (figures.calls < calls) {
    // Faults for this group of concurrent calls.
    const reportOutage = chance(0.08);
    const authOutage = chance(0.03);
    const redisBlip = chance(0.006);
    const redisHang = ambiguous && chance(0.006);
    if (chance(0.05)) {
      const refusals = 1 + Math.floor(random() * 6);
      h.sns.failNextPublishes(refusals);
      figures.snsRefusals += refusals;
    }
    if (reportOutage) figures.reportOutages++;
    if (authOutage) figures.authOutages++;
    h.platformLine.setFault(
      reportOutage || authOutage ? 'unavailable' : 'pass',
      reportOutage && authOutage ? 'all' : reportOutage ? 'report' : 'auth',
    );
    if (redisBlip) {
      figures.redisBlips++;
      h.redisLine.cut();
    }
    if (ambiguous && chance(0.02)) death.arm();

    const group = Array.from({ length: GROUP }, () => {
      const roll = random();
      const key = roll < 0.5 ? pick(hot) : roll < 0.95 ? pick(all) : pick(refused);
      const collection = chance(0.7) ? 'words' : 'sentences';
      const spelling = pathSpellings ? pick(spellings) : 'plain';
      return { key, collection, spelling, word: `w${Math.floor(random() * 20)}` } as const;
    });
    const answers = group.map(({ key, word, collection, spelling }) =>
      h.call(key, word, collection, undefined, spelling).then((answer) => record(key, answer)),
    );
    if (redisHang) {
      // Redis stops answering while the group's commands are in flight: they time out, some still run later.
      figures.redisHangs++;
      await h.redisServer.inspector.call('CLIENT', 'PAUSE', '600', 'ALL');
    }
    await Promise.all(answers);
    if (chance(0.15) || reportOutage) await deliver();
    if (chance(0.02)) await scheduledSweep(redisBlip || redisHang);
    if (redisBlip) h.redisLine.restore();
    if (redisHang) await sleep(650);
  }

  h.platformLine.setFault('pass');
  h.redisLine.restore();
  death.disarm();
  if (h.reporterContainer().dead) h.replaceReporter();
  if (ambiguous) {
    // Leases of dead reporters and of timed-out drains run out (a Redis PX of at least a minute).
    const leases = await h.redisServer.inspector.keys('am:{*}:lease');
    if (leases.length > 0) await h.redisServer.inspector.del(...leases);
  }
  const unreported = await h.flush();

  const differences = h.fixture.active.map((app) => h.reportedHits(app.id) - (allowed.get(app.id) ?? 0));
  return {
    figures,
    unreported,
    differences,
    reported: h.fixture.active.reduce((sum, app) => sum + h.reportedHits(app.id), 0),
    deadLetters: h.queue.stats().deadLetters,
  };
}

describe('lossless accounting', () => {
  it('reports exactly the allowed calls after 5,000 calls with unambiguous faults in every component', {
    timeout: 150_000,
  }, async () => {
    const seed = reliabilitySeed('accounting, unambiguous faults');
    const run = await accountingRun({ calls: 5000, ambiguous: false, seed });
    const difference = run.differences.reduce((sum, d) => sum + d, 0);
    console.log(
      `[accounting, unambiguous faults] ${JSON.stringify(run.figures)}\n` +
        `  reported ${run.reported}, allowed ${run.figures.allowed}, difference ${difference}, ` +
        `dead letters ${run.deadLetters}, applications off: ${run.differences.filter((d) => d !== 0).length}`,
    );
    expect(run.unreported).toEqual([]);
    expect(run.figures.allowed).toBeGreaterThan(4000);
    for (const fault of [
      'snsRefusals',
      'reportOutages',
      'authOutages',
      'redisBlips',
      'lostMessages',
    ] as const) {
      expect(run.figures[fault], fault).toBeGreaterThan(0);
    }
    expect(run.differences).toEqual(run.differences.map(() => 0));
  });

  it('reports exactly the allowed calls of applications with several keys, whatever the spelling of the path', {
    timeout: 150_000,
  }, async () => {
    const seed = reliabilitySeed('accounting, several keys, path spellings');
    const run = await accountingRun({
      calls: 2000,
      ambiguous: false,
      seed,
      keysPerApp: 3,
      pathSpellings: true,
    });
    const difference = run.differences.reduce((sum, d) => sum + d, 0);
    console.log(
      `[accounting, 3 keys per application, path spellings] ${JSON.stringify(run.figures)}\n` +
        `  reported ${run.reported}, allowed ${run.figures.allowed}, difference ${difference}`,
    );
    expect(run.unreported).toEqual([]);
    expect(run.figures.allowed).toBeGreaterThan(1500);
    expect(run.differences).toEqual(run.differences.map(() => 0));
  });

  it('loses nothing when ambiguous failures are added, and counts twice at most the usage in doubt', {
    timeout: 150_000,
  }, async () => {
    const seed = reliabilitySeed('accounting, ambiguous faults');
    const run = await accountingRun({ calls: 2000, ambiguous: true, seed });
    const difference = run.differences.reduce((sum, d) => sum + d, 0);
    console.log(
      `[accounting, ambiguous faults] ${JSON.stringify(run.figures)}\n` +
        `  reported ${run.reported}, allowed ${run.figures.allowed}, difference ${difference} ` +
        `(the at-least-once window), dead letters ${run.deadLetters}`,
    );
    expect(run.unreported).toEqual([]);
    expect(run.figures.reporterDeaths + run.figures.redisHangs).toBeGreaterThan(0);
    expect(run.differences.filter((d) => d < 0)).toEqual([]);
  });
});
