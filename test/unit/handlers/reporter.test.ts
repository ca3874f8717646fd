import '../core/aws-matchers';
import { PublishCommand, SNSClient } from '@aws-sdk/client-sns';
import { mockClient } from 'aws-sdk-client-mock';
import type Redis from 'ioredis';
import RedisMock from 'ioredis-mock';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { credentialKeys } from '../../../core/budget/keys';
import { credentialIdOf } from '../../../core/credentials';
import type { AlertPublisher, UsageAlert } from '../../../core/reporting/alerts';
import { encodeReportMessage, reportMessage } from '../../../core/reporting/message';
import { sweepMinAgeMs } from '../../../core/reporting/sweep';
import type { AccessConfigInput, AlertLevel } from '../../../core/settings/config';
import { defaultOf } from '../../../core/settings/settings';
import { createAuthorizerHandler } from '../../../lambdas/authorizer/handler';
import { createReporterHandler, createSweepHandler } from '../../../lambdas/reporter/handler';
import {
  authorized,
  CapturingLogger,
  CapturingMetrics,
  denied,
  dumpRedis,
  FakePlatform,
  hourly,
  invalidCredential,
  releaseRefusing,
  UNAVAILABLE,
  usageIn,
} from '../core/fakes';
import { accessConfig, authorizerEvent, END, ID, KEY, SERVICE, sqsEvent, T0 } from './fixtures';

const snsMock = mockClient(SNSClient);
let clock: number;
let platform: FakePlatform;
let logger: CapturingLogger;
let metrics: CapturingMetrics;
let redis: Redis;

function handlers(overrides: Partial<AccessConfigInput> = {}) {
  const config = accessConfig(overrides);
  const deps = { config, redis, platform, now: () => clock, logger, metrics };
  return {
    authorize: createAuthorizerHandler({ ...deps, sns: new SNSClient({ region: 'us-east-1' }) }),
    report: createReporterHandler(deps),
    sweep: createSweepHandler(deps),
  };
}

function published(): string[] {
  return snsMock.commandCalls(PublishCommand).map((call) => String(call.args[0].input.Message));
}

function keyEvent(key: string) {
  return authorizerEvent({ headers: { apikey: key }, multiValueHeaders: null });
}

async function effect(result: Promise<{ policyDocument: { Statement: unknown[] }; context?: unknown }>) {
  const answer = await result;
  const statement = answer.policyDocument.Statement[0] as { Effect: string };
  const reason = (answer.context as { reason?: string } | undefined)?.reason;
  return reason ? `${statement.Effect}:${reason}` : statement.Effect;
}

beforeEach(async () => {
  snsMock.reset();
  snsMock.on(PublishCommand).resolves({ MessageId: 'm' });
  clock = T0;
  platform = new FakePlatform();
  platform.authrepAnswer = () => authorized([hourly('hits', 100, 1, END)]);
  platform.authorizeAnswer = () => authorized([hourly('hits', 100, 1, END)]);
  logger = new CapturingLogger();
  metrics = new CapturingMetrics();
  redis = new RedisMock() as unknown as Redis;
  await redis.flushall();
});

afterEach(() => {
  expect(JSON.stringify(logger.lines)).not.toContain(KEY);
});

describe('reporter', () => {
  it('reports the pending usage of a message in one call, clears it and resyncs the credential', async () => {
    const { authorize, report } = handlers();
    for (let i = 0; i < 4; i++) await authorize(authorizerEvent());
    expect(published()).toHaveLength(1);
    expect(await report(sqsEvent(published()))).toEqual({ batchItemFailures: [] });
    const reports = platform.calls.filter((call) => call.op === 'report');
    expect(reports).toEqual([
      {
        op: 'report',
        transactions: [
          {
            credential: { kind: 'user_key', userKey: KEY },
            usage: { get_word: 3 },
            timestamp: expect.any(Number),
          },
        ],
      },
    ]);
    expect(platform.count('authorize')).toBe(1);
    const keys = credentialKeys(SERVICE, ID);
    expect(await redis.exists(keys.pending, keys.inFlight, keys.since, keys.lease)).toBe(0);
    expect(metrics.counts.ReportedTransactions).toBe(1);
    expect(metrics.published).toBeGreaterThan(0);
  });

  it('sends one report for the whole batch, one transaction per credential', async () => {
    const { authorize, report } = handlers({ reportWindowSeconds: 0 });
    for (const key of ['key-a', 'key-b', 'key-c']) {
      await authorize(keyEvent(key));
      await authorize(keyEvent(key));
      await authorize(keyEvent(key));
    }
    expect(published()).toHaveLength(6);
    expect(await report(sqsEvent(published()))).toEqual({ batchItemFailures: [] });
    const reports = platform.calls.filter((call) => call.op === 'report');
    expect(reports).toHaveLength(1);
    expect(reports[0]).toMatchObject({
      transactions: ['key-a', 'key-b', 'key-c'].map((userKey) => ({
        credential: { kind: 'user_key', userKey },
        usage: { get_word: 2 },
      })),
    });
  });

  it('platform failure: the records come back as failures, nothing leaves Redis, and the retry resends it', async () => {
    const { authorize, report } = handlers();
    await authorize(authorizerEvent());
    await authorize(authorizerEvent());
    await authorize(authorizerEvent());
    const messages = sqsEvent(published());
    platform.reportAnswer = () => UNAVAILABLE;
    expect(await report(messages)).toEqual({ batchItemFailures: [{ itemIdentifier: 'message-0' }] });
    const keys = credentialKeys(SERVICE, ID);
    expect(await usageIn(redis, keys.inFlight)).toEqual({ get_word: 2 });
    expect(metrics.counts.ReportFailed).toBe(1);

    await authorize(authorizerEvent());
    platform.reportAnswer = () => ({ kind: 'accepted', requests: 1 });
    expect(await report(messages)).toEqual({ batchItemFailures: [] });
    const reports = platform.calls.filter((call) => call.op === 'report');
    // The failed batch is sent again unchanged; the usage that waited behind it follows in a second round.
    expect(reports.map((call) => call.op === 'report' && call.transactions[0].usage)).toEqual([
      { get_word: 2 },
      { get_word: 2 },
      { get_word: 1 },
    ]);
    expect(await redis.exists(keys.pending, keys.inFlight, keys.since)).toBe(0);
    expect(platform.reported()).toEqual({ get_word: 3 });
  });

  it('a split report accepted in part: the accepted credentials settle, the others retry', async () => {
    const { authorize, report } = handlers({ reportWindowSeconds: 0 });
    await authorize(keyEvent('key-a'));
    await authorize(keyEvent('key-a'));
    await authorize(keyEvent('key-b'));
    await authorize(keyEvent('key-b'));
    platform.reportAnswer = () => ({ ...UNAVAILABLE, acceptedTransactions: 1 });
    const result = await report(sqsEvent(published()));
    expect(result.batchItemFailures).toEqual([{ itemIdentifier: 'message-1' }]);
    const idA = credentialIdOf(SERVICE, { kind: 'user_key', userKey: 'key-a' });
    const idB = credentialIdOf(SERVICE, { kind: 'user_key', userKey: 'key-b' });
    expect(await redis.exists(credentialKeys(SERVICE, idA).inFlight)).toBe(0);
    expect(await usageIn(redis, credentialKeys(SERVICE, idB).inFlight)).toEqual({ get_word: 1 });
  });

  it('a credential another reporter is flushing comes back as a failure', async () => {
    const { authorize, report } = handlers();
    await authorize(authorizerEvent());
    await authorize(authorizerEvent());
    await redis.set(credentialKeys(SERVICE, ID).lease, 'someone-else', 'PX', 60_000);
    expect(await report(sqsEvent(published()))).toEqual({
      batchItemFailures: [{ itemIdentifier: 'message-0' }],
    });
    expect(platform.count('report')).toBe(0);
    expect(metrics.counts.FlushBusy).toBe(1);
  });

  it('unreadable messages go to the dead-letter queue, the others are reported', async () => {
    const { authorize, report } = handlers();
    await authorize(authorizerEvent());
    await authorize(authorizerEvent());
    const bodies = [
      'not json',
      JSON.stringify({ v: 2, serviceId: SERVICE, credentialId: ID }),
      encodeReportMessage(reportMessage('another-service', ID)),
      JSON.stringify({ v: 1, serviceId: SERVICE, credentialId: KEY }),
      ...published(),
    ];
    const result = await report(sqsEvent(bodies));
    expect(result.batchItemFailures.map((failure) => failure.itemIdentifier)).toEqual([
      'message-0',
      'message-1',
      'message-2',
      'message-3',
    ]);
    expect(platform.reported()).toEqual({ get_word: 1 });
    expect(logger.lines.filter((line) => line.level === 'error')).toHaveLength(4);
  });

  it('a message whose usage was already reported is simply acknowledged', async () => {
    const { authorize, report } = handlers();
    await authorize(authorizerEvent());
    expect(await report(sqsEvent([encodeReportMessage(reportMessage(SERVICE, ID))]))).toEqual({
      batchItemFailures: [],
    });
    expect(platform.count('report')).toBe(0);
  });

  it('usage sealed under another provider key cannot be read: it stays, the record fails, an error says why', async () => {
    const { authorize } = handlers();
    await authorize(authorizerEvent());
    await authorize(authorizerEvent());
    const rotated = createReporterHandler({
      config: accessConfig({ platformCredential: 'pk-rotated' }),
      redis,
      platform,
      logger,
      metrics,
    });
    expect(await rotated(sqsEvent(published()))).toEqual({
      batchItemFailures: [{ itemIdentifier: 'message-0' }],
    });
    expect(metrics.counts.FlushUnreadable).toBe(1);
    expect(await usageIn(redis, credentialKeys(SERVICE, ID).inFlight)).toEqual({ get_word: 1 });
    expect(await redis.exists(credentialKeys(SERVICE, ID).lease)).toBe(0);
  });
});

describe('a clean stop', () => {
  it('close() gives back the leases a failed settlement left, so a live reporter takes their usage at once', async () => {
    const { authorize } = handlers();
    await authorize(authorizerEvent());
    await authorize(authorizerEvent());
    const messages = sqsEvent(published());
    // The platform refuses the report, and Redis then refuses to give the lease back (a failover).
    platform.reportAnswer = () => UNAVAILABLE;
    const flaky = releaseRefusing(redis);
    const reporterOn = (client: Redis) =>
      createReporterHandler({
        config: accessConfig(),
        redis: client,
        platform,
        now: () => clock,
        logger,
        metrics,
      });
    const stopping = reporterOn(flaky.client);
    expect((await stopping(messages)).batchItemFailures).toHaveLength(1);
    const keys = credentialKeys(SERVICE, ID);
    expect(await redis.exists(keys.lease)).toBe(1);
    flaky.heal();
    await stopping.close();
    expect(await redis.exists(keys.lease)).toBe(0);
    platform.reportAnswer = () => ({ kind: 'accepted', requests: 1 });
    expect(await reporterOn(redis)(messages)).toEqual({ batchItemFailures: [] });
    expect(await redis.exists(keys.pending, keys.inFlight, keys.lease)).toBe(0);
  });
});

describe('usage alerts', () => {
  const alertingReporter = (alertLevels: AlertLevel[], alertPublisher: AlertPublisher) =>
    createReporterHandler({
      config: accessConfig({ alertLevels }),
      redis,
      platform,
      now: () => clock,
      logger,
      metrics,
      alertPublisher,
    });

  it('an alert that cannot be published brings its message back; the next delivery publishes it once', async () => {
    const sent: UsageAlert[] = [];
    let failing = true;
    const alertPublisher: AlertPublisher = {
      publish: async (alert) => {
        if (failing) throw new Error('Throttling');
        sent.push(alert);
      },
    };
    const report = alertingReporter([80, 100], alertPublisher);
    const { authorize } = handlers();
    for (let i = 0; i < 3; i++) await authorize(authorizerEvent());
    // The first call went to the platform (authrep); the next two are reported: 3 + 2 of 5 = 100 %.
    platform.authorizeAnswer = () => authorized([hourly('hits', 5, 3, END)]);
    const messages = published();
    // Reported, but the alert did not leave: the message comes again.
    expect(await report(sqsEvent(messages))).toEqual({
      batchItemFailures: [{ itemIdentifier: 'message-0' }],
    });
    expect(platform.reported()).toEqual({ get_word: 2 });
    expect(metrics.counts.AlertPublishFailed).toBe(1);
    failing = false;
    expect(await report(sqsEvent(messages))).toEqual({ batchItemFailures: [] });
    expect(sent.map((alert) => [alert.level, alert.current, alert.max])).toEqual([[100, 5, 5]]);
    expect(await report(sqsEvent(messages))).toEqual({ batchItemFailures: [] });
    expect(sent).toHaveLength(1);
    expect(platform.reported()).toEqual({ get_word: 2 });
  });

  it('no alert levels: no alert, however high the usage', async () => {
    const alertPublisher: AlertPublisher = { publish: () => Promise.reject(new Error('must not publish')) };
    const report = alertingReporter([], alertPublisher);
    const { authorize } = handlers();
    await authorize(authorizerEvent());
    platform.authorizeAnswer = () => authorized([hourly('hits', 1, 1, END)]);
    expect(await report(sqsEvent(published()))).toEqual({ batchItemFailures: [] });
    expect(metrics.counts.AlertPublishFailed).toBeUndefined();
  });
});

describe('resync while reporting', () => {
  it('a suspended application is denied from then on', async () => {
    const { authorize, report } = handlers();
    await authorize(authorizerEvent());
    await authorize(authorizerEvent());
    platform.authorizeAnswer = () => denied('application_not_active', [hourly('hits', 100, 2, END)]);
    await report(sqsEvent(published()));
    const callsBefore = platform.calls.length;
    expect(await effect(authorize(authorizerEvent()))).toBe('Deny:application_not_active');
    expect(await effect(authorize(authorizerEvent({ httpMethod: 'POST' })))).toBe(
      'Deny:application_not_active',
    );
    expect(platform.calls.length).toBe(callsBefore);
  });

  it('a revoked key gets 401 from then on', async () => {
    const { authorize, report } = handlers();
    await authorize(authorizerEvent());
    await authorize(authorizerEvent());
    platform.authorizeAnswer = () => invalidCredential();
    await report(sqsEvent(published()));
    await expect(authorize(authorizerEvent())).rejects.toThrow('Unauthorized');
  });

  it('a new period reported by the platform lets calls through again', async () => {
    platform.authrepAnswer = () => authorized([hourly('hits', 3, 1, END)]);
    const { authorize, report } = handlers();
    const effects: string[] = [];
    for (let i = 0; i < 4; i++) effects.push(await effect(authorize(authorizerEvent())));
    expect(effects).toEqual(['Allow', 'Allow', 'Allow', 'Deny:limits_exceeded']);
    const nextEnd = END + 3_600_000;
    platform.authorizeAnswer = () => authorized([hourly('hits', 3, 0, nextEnd)]);
    clock = END + 1;
    await report(sqsEvent(published()));
    // The two pending calls are reported with the time they were made, so the platform counts them in
    // the hour that ended, and the new hour has its whole limit.
    expect(await redis.hget(credentialKeys(SERVICE, ID).app, 'limit:hour:hits')).toBe(
      `${END} ${nextEnd} 3 0`,
    );
    for (let i = 0; i < 3; i++) expect(await effect(authorize(authorizerEvent()))).toBe('Allow');
    expect(await effect(authorize(authorizerEvent()))).toBe('Deny:limits_exceeded');
  });

  it('a limit raised at the platform applies after the resync', async () => {
    platform.authrepAnswer = () => authorized([hourly('hits', 2, 1, END)]);
    const { authorize, report } = handlers();
    await authorize(authorizerEvent());
    await authorize(authorizerEvent());
    expect(await effect(authorize(authorizerEvent()))).toBe('Deny:limits_exceeded');
    platform.authorizeAnswer = () => authorized([hourly('hits', 10, 2, END)]);
    await report(sqsEvent(published()));
    // The instance that refused keeps the refusal in memory for refusalMemoryMs (docs/architecture.md).
    clock += defaultOf('refusalMemoryMs');
    expect(await effect(authorize(authorizerEvent()))).toBe('Allow');
  });

  it('a resync answer that does not count the report yet (the platform processes it later) lowers nothing', async () => {
    platform.authrepAnswer = () => authorized([hourly('hits', 3, 1, END)]);
    const { authorize, report } = handlers();
    await authorize(authorizerEvent());
    await authorize(authorizerEvent());
    platform.authorizeAnswer = () => authorized([hourly('hits', 3, 1, END)]);
    await report(sqsEvent(published()));
    expect(await redis.hget(credentialKeys(SERVICE, ID).app, 'limit:hour:hits')).toBe(
      `${END - 3_600_000} ${END} 3 2`,
    );
    expect(await effect(authorize(authorizerEvent()))).toBe('Allow');
    expect(await effect(authorize(authorizerEvent()))).toBe('Deny:limits_exceeded');
  });

  it('a credential the platform cannot re-check is reported all the same: a failed re-check never blocks the report', async () => {
    const { authorize, report } = handlers();
    await authorize(authorizerEvent());
    await authorize(authorizerEvent());
    platform.authorizeAnswer = () => UNAVAILABLE;
    expect(await report(sqsEvent(published()))).toEqual({ batchItemFailures: [] });
    expect(platform.count('report')).toBe(1);
    expect(await redis.exists(credentialKeys(SERVICE, ID).inFlight)).toBe(0);
  });

  it('unverified usage whose report fails comes back: the record returns, the usage stays', async () => {
    const { authorize, report } = handlers();
    await authorize(authorizerEvent());
    await authorize(authorizerEvent());
    platform.authorizeAnswer = () => UNAVAILABLE;
    platform.reportAnswer = () => UNAVAILABLE;
    expect(await report(sqsEvent(published()))).toEqual({
      batchItemFailures: [{ itemIdentifier: 'message-0' }],
    });
    expect(await usageIn(redis, credentialKeys(SERVICE, ID).inFlight)).toEqual({ get_word: 1 });
    expect(await redis.exists(credentialKeys(SERVICE, ID).lease)).toBe(0);
  });

  it('a key the platform refuses is kept out of the report, so it cannot make the platform drop the others', async () => {
    platform.authrepAnswer = () => UNAVAILABLE;
    const { authorize, report } = handlers({ failureMode: 'allow', reportWindowSeconds: 0 });
    await authorize(keyEvent('forged-key'));
    await authorize(keyEvent('good-key'));
    platform.authorizeAnswer = (credential) =>
      credential.kind === 'user_key' && credential.userKey === 'forged-key'
        ? invalidCredential()
        : authorized();
    expect(await report(sqsEvent(published()))).toEqual({ batchItemFailures: [] });
    expect(platform.calls.filter((call) => call.op === 'report')).toEqual([
      {
        op: 'report',
        transactions: [
          {
            credential: { kind: 'user_key', userKey: 'good-key' },
            usage: { get_word: 1 },
            timestamp: expect.any(Number),
          },
        ],
      },
    ]);
    expect(metrics.counts.UsageDiscarded).toBe(1);
    const forged = credentialIdOf(SERVICE, { kind: 'user_key', userKey: 'forged-key' });
    expect(
      await redis.exists(credentialKeys(SERVICE, forged).inFlight, credentialKeys(SERVICE, forged).pending),
    ).toBe(0);
    platform.authrepAnswer = () => authorized();
    await expect(authorize(keyEvent('forged-key'))).rejects.toThrow('Unauthorized');
  });
});

describe('sweep', () => {
  it('flushes usage older than a few windows whose message never arrived, and only that', async () => {
    snsMock.on(PublishCommand).rejects(new Error('SNS down'));
    const { authorize, sweep } = handlers();
    await authorize(keyEvent('key-old'));
    await authorize(keyEvent('key-old'));
    clock += sweepMinAgeMs(accessConfig());
    await authorize(keyEvent('key-new'));
    await authorize(keyEvent('key-new'));
    expect(await sweep()).toEqual({ found: 1, flushed: 1, discarded: 0, failed: 0, busy: 0, unreadable: 0 });
    expect(platform.calls.filter((call) => call.op === 'report')).toEqual([
      {
        op: 'report',
        transactions: [
          {
            credential: { kind: 'user_key', userKey: 'key-old' },
            usage: { get_word: 1 },
            timestamp: expect.any(Number),
          },
        ],
      },
    ]);
    clock += sweepMinAgeMs(accessConfig());
    expect(await sweep()).toMatchObject({ found: 1, flushed: 1 });
    expect(platform.reported()).toEqual({ get_word: 2 });
    expect(await sweep()).toMatchObject({ found: 0, flushed: 0 });
  });

  it('with a minimum age of 0 flushes everything pending', async () => {
    const { authorize } = handlers();
    await authorize(authorizerEvent());
    await authorize(authorizerEvent());
    const sweepAll = createSweepHandler({
      config: accessConfig(),
      redis,
      platform,
      now: () => clock,
      logger,
      metrics,
      sweepMinAgeMs: 0,
    });
    expect(await sweepAll()).toMatchObject({ found: 1, flushed: 1 });
  });

  it('resends in-flight usage left by a failed report whose message went to the dead-letter queue', async () => {
    const { authorize, report, sweep } = handlers();
    await authorize(authorizerEvent());
    await authorize(authorizerEvent());
    platform.reportAnswer = () => UNAVAILABLE;
    await report(sqsEvent(published()));
    platform.reportAnswer = () => ({ kind: 'accepted', requests: 1 });
    clock += sweepMinAgeMs(accessConfig());
    expect(await sweep()).toMatchObject({ found: 1, flushed: 1 });
    expect(platform.reported()).toEqual({ get_word: 1 });
  });

  it('usage let through in failure mode allow is reported later, with the raw key never stored', async () => {
    platform.authrepAnswer = () => UNAVAILABLE;
    const { authorize, report } = handlers({ failureMode: 'allow' });
    await authorize(authorizerEvent());
    await authorize(authorizerEvent());
    expect(await dumpRedis(redis)).not.toContain(KEY);
    platform.authorizeAnswer = () => authorized([hourly('hits', 100, 2, END)]);
    expect(await report(sqsEvent(published()))).toEqual({ batchItemFailures: [] });
    expect(platform.calls.filter((call) => call.op === 'report')).toEqual([
      {
        op: 'report',
        transactions: [
          {
            credential: { kind: 'user_key', userKey: KEY },
            usage: { get_word: 2 },
            timestamp: expect.any(Number),
          },
        ],
      },
    ]);
  });
});

describe('every allowed call is reported (invariant 4)', () => {
  it('with lost messages and a platform failing for a while', async () => {
    const { authorize, report, sweep } = handlers({ reportWindowSeconds: 1 });
    let allowed = 0;
    let delivered = 0;
    for (let step = 0; step < 60; step++) {
      clock += 250;
      const key = `key-${step % 3}`;
      if ((await effect(authorize(keyEvent(key)))) === 'Allow') allowed += 1;
      if (step % 7 === 0) {
        platform.reportAnswer =
          step % 2 === 0 ? () => UNAVAILABLE : () => ({ kind: 'accepted', requests: 1 });
        const fresh = published().slice(delivered);
        delivered += fresh.length;
        // Every other message is lost on the way.
        await report(sqsEvent(fresh.filter((_, i) => i % 2 === 0)));
      }
    }
    platform.reportAnswer = () => ({ kind: 'accepted', requests: 1 });
    clock += sweepMinAgeMs(accessConfig({ reportWindowSeconds: 1 }));
    await sweep();
    const authreps = platform.count('authrep');
    expect(allowed).toBe(60);
    expect((platform.reported().get_word ?? 0) + authreps).toBe(allowed);
  });
});
