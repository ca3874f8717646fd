/** The alerts stage's pure parts: which alerts a resynced usage makes due, and how they are published. */
import { describe, expect, it } from 'vitest';
import type { UsageBucket } from '../../../../core/budget/usage-buckets';
import type { UsageReport } from '../../../../core/platform/types';
import {
  alertLine,
  alertPublishInput,
  alertText,
  dueAlerts,
  keyHintOf,
  levelReached,
  type UsageAlert,
} from '../../../../core/reporting/alerts';
import type { ResyncedUsage } from '../../../../core/reporting/flush-types';
import type { AlertLevel } from '../../../../core/settings/config';
import { hourly } from '../fakes';

const SERVICE = '2555417735060';
const ID = 'a'.repeat(64);
const T0 = Date.UTC(2030, 0, 1, 10, 30, 0);
const HOUR = Date.UTC(2030, 0, 1, 10, 0, 0);
const END = HOUR + 3_600_000;

function resynced(reports: UsageReport[], extra: Partial<ResyncedUsage> = {}): ResyncedUsage {
  return {
    credentialId: ID,
    state: { kind: 'active' },
    status: { plan: 'Basic', usageReports: reports, hierarchy: { hits: ['get_word', 'post_word'] } },
    inFlight: {},
    inFlightBuckets: [],
    refusals: [],
    now: T0,
    ...extra,
  };
}

const bucket = (start: number, usage: Record<string, number>): UsageBucket => ({ start, usage });
const levelsOf = (due: ReturnType<typeof dueAlerts>) => due.map((d) => [d.alert.metric, d.alert.level]);

describe('levelReached', () => {
  const levels: AlertLevel[] = [50, 80, 90, 100, 120];
  it.each([
    [49, undefined],
    [50, 50],
    [79, 50],
    [80, 80],
    [95, 90],
    [100, 100],
    [119, 100],
    [300, 120],
  ])('%i of 100 reaches %s', (current, level) => {
    expect(levelReached(levels, current, 100)).toBe(level);
  });

  it('compares in integers (no rounding up): 4 of 5 is 80 %, 79 of 99 is not', () => {
    expect(levelReached([80], 4, 5)).toBe(80);
    expect(levelReached([80], 79, 99)).toBeUndefined();
  });
});

describe('dueAlerts', () => {
  const levels: AlertLevel[] = [80, 100];

  it('nothing below the lowest level', () => {
    expect(dueAlerts(SERVICE, levels, resynced([hourly('hits', 100, 79, END)]), [])).toEqual([]);
  });

  it("usage is the platform's current value plus in-flight and pending usage of the period, rolled up the hierarchy", () => {
    const usage = resynced([hourly('hits', 100, 60, END)], {
      inFlightBuckets: [bucket(HOUR, { get_word: 10 }), bucket(HOUR - 60_000, { hits: 50 })],
    });
    // 60 + 10 in flight + 10 pending = 80; the bucket of the hour before counts for nothing.
    const due = dueAlerts(SERVICE, levels, usage, [bucket(HOUR + 60_000, { post_word: 10 })]);
    expect(due).toEqual([
      {
        field: `hour:hits:${HOUR}:80`,
        higherFields: [`hour:hits:${HOUR}:100`],
        ttlMs: 2 * END - HOUR - T0,
        alert: {
          service: SERVICE,
          application: ID,
          plan: 'Basic',
          metric: 'hits',
          period: 'hour',
          periodStart: new Date(HOUR).toISOString(),
          periodEnd: new Date(END).toISOString(),
          level: 80,
          current: 80,
          max: 100,
          time: new Date(T0).toISOString(),
        },
      },
    ]);
  });

  it('a jump over several levels makes only the highest one due (as the platform alerts)', () => {
    const due = dueAlerts(SERVICE, [50, 80, 90, 100], resynced([hourly('hits', 100, 95, END)]), []);
    expect(levelsOf(due)).toEqual([['hits', 90]]);
    expect(due[0]?.higherFields).toEqual([`hour:hits:${HOUR}:100`]);
  });

  it('one alert per limit: each metric and period on its own; a limit of 0 (a disabled metric) never alerts', () => {
    const daily: UsageReport = {
      ...hourly('get_word', 1000, 900, END),
      period: 'day',
      periodStart: Date.UTC(2030, 0, 1),
      periodEnd: Date.UTC(2030, 0, 2),
    };
    const due = dueAlerts(
      SERVICE,
      levels,
      resynced([hourly('hits', 10, 10, END), daily, hourly('post_word', 0, 5, END)]),
      [],
    );
    expect(levelsOf(due)).toEqual([
      ['hits', 100],
      ['get_word', 80],
    ]);
  });

  it('a call refused at a limit counts as 100 %, whatever the usage shows', () => {
    const due = dueAlerts(
      SERVICE,
      [50, 80, 100, 120],
      resynced([hourly('hits', 100, 40, END)], {
        refusals: [{ metric: 'hits', period: 'hour', at: T0 - 5 }],
      }),
      [],
    );
    expect(due.map((d) => [d.alert.level, d.alert.current, d.alert.max])).toEqual([[100, 100, 100]]);
  });

  it('a refusal of the period before (the period rolled over since) alerts that period, not this one', () => {
    const before = HOUR - 1000;
    const due = dueAlerts(
      SERVICE,
      levels,
      resynced([hourly('hits', 100, 3, END)], { refusals: [{ metric: 'hits', period: 'hour', at: before }] }),
      [],
    );
    expect(due.map((d) => d.field)).toEqual([`hour:hits:${HOUR - 3_600_000}:100`]);
    expect(due[0]?.alert.periodEnd).toBe(new Date(HOUR).toISOString());
  });

  it('names the application by its app id where the credential has one', () => {
    const due = dueAlerts(
      SERVICE,
      levels,
      resynced([hourly('hits', 10, 9, END)], { applicationId: 'app-1' }),
      [],
    );
    expect(due[0]?.alert.application).toBe('app-1');
  });

  it('gives a user key budget the key hint, never the key, when no one named the application', () => {
    const userKey = 'f3c8d1e9b27a4c6e8d0f1a2b3c4d9e7f';
    const due = dueAlerts(SERVICE, levels, resynced([hourly('hits', 10, 9, END)], { userKey }), []);
    expect(due[0]?.alert).toMatchObject({ application: ID, keyHint: '…9e7f', plan: 'Basic' });
    expect(JSON.stringify(due)).not.toContain(userKey);
  });

  it('names the application the admin API found for the key, by its id and name', () => {
    const due = dueAlerts(
      SERVICE,
      levels,
      resynced([hourly('hits', 10, 9, END)], { userKey: 'f3c8d1e9b27a4c6e8d0f1a2b3c4d9e7f' }),
      [],
      { id: '1409618', name: 'Acme mobile', account: '2445581' },
    );
    expect(due[0]?.alert).toMatchObject({
      application: '1409618',
      applicationName: 'Acme mobile',
      account: '2445581',
    });
    expect(due[0]?.alert.keyHint).toBeUndefined();
  });
});

describe('keyHintOf', () => {
  it('shows the last four characters of a key, as consoles do', () => {
    expect(keyHintOf('0123456789abcdef')).toBe('…cdef');
  });

  it('gives no hint of a key so short the hint would give it away', () => {
    expect(keyHintOf('abcdefgh')).toBeUndefined();
  });
});

describe('the published alert', () => {
  const alert: UsageAlert = {
    service: SERVICE,
    application: 'app-1',
    plan: 'Basic',
    metric: 'hits',
    period: 'hour',
    periodStart: new Date(HOUR).toISOString(),
    periodEnd: new Date(END).toISOString(),
    level: 90,
    current: 90,
    max: 100,
    time: new Date(T0).toISOString(),
  };

  it('reads as a sentence for e-mail', () => {
    expect(alertText(alert)).toBe(
      `Application app-1 reached 90 % of its hourly hits limit (90 of 100) on service ${SERVICE} (plan Basic). The period ends at 2030-01-01T11:00:00.000Z.`,
    );
  });

  it('names the application by its name, id and account when the admin API named it', () => {
    const named = { ...alert, application: '1409618', applicationName: 'Acme mobile', account: '2445581' };
    expect(alertText(named)).toBe(
      `Application "Acme mobile" (id 1409618, account 2445581) reached 90 % of its hourly hits limit (90 of 100) on service ${SERVICE} (plan Basic). The period ends at 2030-01-01T11:00:00.000Z.`,
    );
    expect(alertLine(named)).toContain('alert Acme mobile hits hour 90% 90/100');
  });

  it('names a user key application by its key hint and credential prefix otherwise', () => {
    const hinted = { ...alert, application: ID, keyHint: '…9e7f' };
    expect(alertText(hinted)).toBe(
      `The application with key …9e7f (credential aaaaaaaaaaaa) reached 90 % of its hourly hits limit (90 of 100) on service ${SERVICE} (plan Basic). The period ends at 2030-01-01T11:00:00.000Z.`,
    );
    expect(alertLine(hinted)).toContain('alert …9e7f hits hour');
  });

  it('says an all-time limit never resets', () => {
    const { periodEnd: _, ...eternal } = { ...alert, period: 'eternity' as const };
    expect(alertText(eternal)).toMatch(/all-time hits limit .* The limit never resets\.$/);
  });

  it('is JSON by default and text for e-mail, with level, metric and period as message attributes', () => {
    const input = alertPublishInput('arn:aws:sns:us-east-1:123456789012:alerts', alert);
    expect(input.MessageStructure).toBe('json');
    const structure = JSON.parse(input.Message) as Record<string, string>;
    expect(JSON.parse(structure.default ?? '')).toEqual(alert);
    expect(structure.email).toBe(alertText(alert));
    expect(input.MessageAttributes).toEqual({
      level: { DataType: 'Number', StringValue: '90' },
      metric: { DataType: 'String', StringValue: 'hits' },
      period: { DataType: 'String', StringValue: 'hour' },
    });
    expect(input.Subject.length).toBeLessThanOrEqual(100);
  });
});
