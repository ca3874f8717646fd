/**
 * Usage alerts on one real redis-server: exactly once per application, metric, period instance and
 * level with several reporters observing at once, again after a period rollover, the highest level of
 * a jump only, and a publish that fails kept until a later cycle publishes it.
 */
import type Redis from 'ioredis';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { credentialKeys, serviceKeys } from '../../core/budget/keys';
import { createRedisClient, ensureConnected } from '../../core/budget/redis-client';
import type { UsageReport } from '../../core/platform/types';
import { type AlertPublisher, type UsageAlert, UsageAlerts } from '../../core/reporting/alerts';
import type { ResyncedUsage } from '../../core/reporting/flush-types';
import type { AlertLevel } from '../../core/settings/config';
import { type LocalRedis, startRedisServer } from '../../local/redis';
import { CapturingLogger, CapturingMetrics, hourly } from '../unit/core/fakes';

const SERVICE = 's1';
const ID = 'b'.repeat(64);
const HOUR = Date.UTC(2030, 0, 1, 10, 0, 0);
const END = HOUR + 3_600_000;
const REPORTERS = 6;

let server: LocalRedis;
const clients: Redis[] = [];

beforeAll(async () => {
  server = await startRedisServer('/usr/bin/redis-server');
  for (let i = 0; i < REPORTERS; i++) {
    const client = createRedisClient({ host: server.host, port: server.port, tls: false });
    await ensureConnected(client);
    clients.push(client);
  }
});

afterAll(async () => {
  await Promise.all(clients.map((client) => client.quit()));
  await server?.stop();
});

/** SNS as a list; `failing` makes every publish throw, as SNS throttling or an outage does. */
class ListPublisher implements AlertPublisher {
  readonly sent: UsageAlert[] = [];
  failing = false;
  async publish(alert: UsageAlert): Promise<void> {
    // A publish takes a while, so concurrent reporters overlap.
    await new Promise((resolve) => setTimeout(resolve, 5));
    if (this.failing) throw new Error('Throttling: Rate exceeded');
    this.sent.push(alert);
  }
}

let publisher: ListPublisher;
let logger: CapturingLogger;
/** Shared by the reporters of a test: their counts together. */
let metrics: CapturingMetrics;

function reporters(levels: AlertLevel[] = [80, 90, 100]): UsageAlerts[] {
  return clients.map(
    (redis) =>
      new UsageAlerts({
        serviceId: SERVICE,
        levels,
        redis,
        publisher,
        logger,
        metrics,
      }),
  );
}

function usage(report: UsageReport, now = HOUR + 60_000, extra: Partial<ResyncedUsage> = {}): ResyncedUsage {
  return {
    credentialId: ID,
    applicationId: 'app-1',
    state: { kind: 'active' },
    status: { plan: 'Basic', usageReports: [report], hierarchy: {} },
    inFlight: {},
    inFlightBuckets: [],
    refusals: [],
    now,
    ...extra,
  };
}

const fired = () => publisher.sent.map((alert) => `${alert.periodStart} ${alert.metric} ${alert.level}`);

beforeEach(async () => {
  await clients[0]?.flushall();
  publisher = new ListPublisher();
  logger = new CapturingLogger();
  metrics = new CapturingMetrics();
});

describe('usage alerts on redis-server', () => {
  it('fire exactly once with several reporters observing the same usage at once, and again and again after', async () => {
    const all = reporters();
    const seen = usage(hourly('hits', 100, 85, END));
    await Promise.all(all.map((alerts) => alerts.observe(seen)));
    await Promise.all(all.map((alerts) => alerts.observe(seen)));
    expect(fired()).toEqual([`${new Date(HOUR).toISOString()} hits 80`]);
    expect(publisher.sent[0]).toMatchObject({ application: 'app-1', current: 85, max: 100, level: 80 });
    // The dashboard's count per platform metric: the alert once, whichever reporter published it.
    expect(metrics.perMetric).toEqual({ 'AlertPublished/hits': 1 });
  });

  it('counts pending usage in Redis: crossing a level with usage not yet reported fires it', async () => {
    const [alerts] = reporters();
    await clients[0]?.hset(
      credentialKeys(SERVICE, ID).pending,
      `${HOUR}:hits`,
      '10',
      `t:${HOUR}`,
      String(HOUR),
    );
    await alerts?.observe(usage(hourly('hits', 100, 75, END)));
    expect(publisher.sent.map((alert) => [alert.level, alert.current])).toEqual([[80, 85]]);
  });

  it('a jump fires the highest level reached only; a lower level seen late by another reporter is superseded', async () => {
    const [first, second] = reporters();
    await first?.observe(usage(hourly('hits', 100, 95, END)));
    await second?.observe(usage(hourly('hits', 100, 85, END)));
    await first?.observe(usage(hourly('hits', 100, 100, END)));
    expect(publisher.sent.map((alert) => alert.level)).toEqual([90, 100]);
  });

  it('a new period instance fires its levels again (the injected clock rolls the hour over)', async () => {
    const all = reporters();
    await Promise.all(all.map((alerts) => alerts.observe(usage(hourly('hits', 100, 100, END)))));
    const next = { ...hourly('hits', 100, 100, END + 3_600_000) };
    await Promise.all(all.map((alerts) => alerts.observe(usage(next, END + 60_000))));
    expect(fired()).toEqual([
      `${new Date(HOUR).toISOString()} hits 100`,
      `${new Date(END).toISOString()} hits 100`,
    ]);
    // Marks expire one period after their instance ended.
    const ttl = await clients[0]?.pttl(serviceKeys(SERVICE).alertMark(ID, `hour:hits:${HOUR}:100`));
    expect(ttl).toBeGreaterThan(3_600_000);
    expect(ttl).toBeLessThanOrEqual(2 * 3_600_000);
  });

  it('a publish that fails is kept, asks for a retry, and the next cycle publishes it once', async () => {
    const all = reporters();
    publisher.failing = true;
    const verdicts = await Promise.all(
      all.map((alerts) => alerts.observe(usage(hourly('hits', 100, 100, END)))),
    );
    expect(verdicts.filter((verdict) => verdict === 'retry')).toHaveLength(1);
    expect(publisher.sent).toEqual([]);
    expect(logger.lines).toContainEqual(
      expect.objectContaining({ level: 'warn', message: expect.stringMatching(/not published: kept/) }),
    );
    expect(await clients[0]?.hlen(credentialKeys(SERVICE, ID).alerts)).toBe(1);
    // Still failing: still kept.
    expect(await all[1]?.observe(usage(hourly('hits', 100, 100, END)))).toBe('retry');
    publisher.failing = false;
    // The next cycles, several reporters at once, with usage that no longer crosses anything new.
    const retried = await Promise.all(
      all.map((alerts) => alerts.observe(usage(hourly('hits', 100, 100, END)))),
    );
    expect(retried.every((verdict) => verdict === undefined)).toBe(true);
    expect(fired()).toEqual([`${new Date(HOUR).toISOString()} hits 100`]);
    expect(await clients[0]?.hlen(credentialKeys(SERVICE, ID).alerts)).toBe(0);
    await all[2]?.observe(usage(hourly('hits', 100, 100, END)));
    expect(publisher.sent).toHaveLength(1);
    expect(metrics.perMetric).toEqual({ 'AlertPublished/hits': 1 });
    expect(metrics.counts.AlertPublishFailed).toBeGreaterThanOrEqual(2);
  });

  it('a reporter that died between its claim and its publish: the alert goes out once its lease is over', async () => {
    const [alerts] = reporters();
    publisher.failing = true;
    await alerts?.observe(usage(hourly('hits', 100, 100, END)));
    // As if the claim's owner had died: the mark is still "sending" under its lease.
    const mark = serviceKeys(SERVICE).alertMark(ID, `hour:hits:${HOUR}:100`);
    await clients[0]?.set(mark, 'sending:dead-reporter', 'PX', 50);
    publisher.failing = false;
    await alerts?.observe(usage(hourly('hits', 100, 100, END)));
    expect(publisher.sent).toEqual([]);
    await new Promise((resolve) => setTimeout(resolve, 80));
    await alerts?.observe(usage(hourly('hits', 100, 100, END)));
    expect(publisher.sent.map((alert) => alert.level)).toEqual([100]);
  });
});
