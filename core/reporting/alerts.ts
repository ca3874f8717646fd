/**
 * Usage alerts (docs/alerts.md), computed by the reporter after each resync, never on the hot path.
 *
 * Per limit of the application's plan (metric, period) the usage is the platform's current value plus
 * the usage in flight and still pending in Redis that lies in the limit's period, rolled up the metric
 * hierarchy; a call refused at the limit counts as 100 %. Of the configured levels, the highest one
 * reached fires, as the platform alerts the highest level a utilization reaches, not each level it passed.
 *
 * Each alert fires once per application, metric, period instance and level, whatever the number of
 * reporters: its mark is taken with SET NX (with the alert kept in the budget's unsent-alerts hash)
 * before the publish, and a publish that fails leaves it there for the next report cycle.
 */
import { randomUUID } from 'node:crypto';
import type { LimitRefusal } from '../budget/cache-types';
import { type ServiceKeys, serviceKeys } from '../budget/keys';
import { periodWindow } from '../budget/periods';
import type { RedisConnection } from '../budget/redis-client';
import { ensureConnected, REDIS_CONNECT_TIMEOUT_MS } from '../budget/redis-client';
import { lua } from '../budget/scripts/lua';
import { bucketsOf, type UsageBucket } from '../budget/usage-buckets';
import { credentialIdPrefix } from '../credentials';
import { errorMessage, type LogPort, METRIC, type MetricsPort } from '../observability/observability';
import type { ApplicationDirectory, ApplicationIdentity } from '../platform/application-directory';
import type { MetricHierarchy, Period, UsageReport } from '../platform/types';
import type { AlertLevel } from '../settings/config';
import type { ObserverVerdict, ResyncedUsage } from './flush-types';

/** The alert as published (the JSON body subscribers get). */
export interface UsageAlert {
  readonly service: string;
  /**
   * The app id where the credential names it, else the application id the admin API found for the
   * key, else the credential id (a hash, never a key).
   */
  readonly application: string;
  /** The application's name, when the admin API named it (user_key mode with an admin token). */
  readonly applicationName?: string;
  /** The developer account the application belongs to, when the admin API said. */
  readonly account?: string;
  /** User_key mode: the key's last four characters, as consoles show keys (`…a1b2`). */
  readonly keyHint?: string;
  readonly plan: string;
  readonly metric: string;
  readonly period: Period;
  /** ISO time the period instance began (epoch for eternity). */
  readonly periodStart: string;
  /** ISO time the period instance ends; absent for eternity. */
  readonly periodEnd?: string;
  readonly level: AlertLevel;
  readonly current: number;
  readonly max: number;
  /** ISO time the reporter saw the level reached. */
  readonly time: string;
}

/** The port alerts leave through (SNS in AWS and locally). */
export interface AlertPublisher {
  publish(alert: UsageAlert): Promise<void>;
}

const PERIOD_ADJECTIVE: Record<Period, string> = {
  minute: 'per-minute',
  hour: 'hourly',
  day: 'daily',
  week: 'weekly',
  month: 'monthly',
  year: 'yearly',
  eternity: 'all-time',
};

/** Keys this short would be given away by their last four characters: they get no hint. */
const MIN_HINTED_KEY_CHARS = 12;

/** The last four characters of a user key, as consoles show keys; undefined for a key too short to hint. */
export function keyHintOf(userKey: string): string | undefined {
  return userKey.length < MIN_HINTED_KEY_CHARS ? undefined : `…${userKey.slice(-4)}`;
}

/** Who the alert is about, the most telling way the alert can say it. */
function applicationLabel(alert: UsageAlert): string {
  const account = alert.account === undefined ? '' : `, account ${alert.account}`;
  if (alert.applicationName !== undefined) {
    return `Application "${alert.applicationName}" (id ${alert.application}${account})`;
  }
  if (alert.keyHint !== undefined) {
    return `The application with key ${alert.keyHint} (credential ${credentialIdPrefix(alert.application)})`;
  }
  return `Application ${alert.application}`;
}

/** The sentence an e-mail subscriber reads: who, what, how much, until when. */
export function alertText(alert: UsageAlert): string {
  const ends =
    alert.periodEnd === undefined ? ' The limit never resets.' : ` The period ends at ${alert.periodEnd}.`;
  const plan = alert.plan === '' ? '' : ` (plan ${alert.plan})`;
  return (
    `${applicationLabel(alert)} reached ${alert.level} % of its ${PERIOD_ADJECTIVE[alert.period]} ` +
    `${alert.metric} limit (${alert.current} of ${alert.max}) on service ${alert.service}${plan}.${ends}`
  );
}

/** One console line per alert (npm start): `alert <application> <metric> <period> <level>% <current>/<max>`. */
export function alertLine(alert: UsageAlert): string {
  const who = alert.applicationName ?? alert.keyHint ?? alert.application;
  return `alert ${who} ${alert.metric} ${alert.period} ${alert.level}% ${alert.current}/${alert.max} (service ${alert.service})`;
}

/**
 * The SNS publish of an alert: the JSON body by default, the readable text for e-mail (per-protocol
 * message structure), and the attributes subscription filter policies match on.
 */
export function alertPublishInput(topicArn: string, alert: UsageAlert) {
  const body = JSON.stringify(alert);
  return {
    TopicArn: topicArn,
    MessageStructure: 'json',
    Message: JSON.stringify({ default: body, email: alertText(alert) }),
    Subject:
      `Usage alert: ${alert.level} % of the ${PERIOD_ADJECTIVE[alert.period]} ${alert.metric} limit`.slice(
        0,
        100,
      ),
    MessageAttributes: {
      level: { DataType: 'Number', StringValue: String(alert.level) },
      metric: { DataType: 'String', StringValue: alert.metric },
      period: { DataType: 'String', StringValue: alert.period },
    },
  } as const;
}

/** An alert due for one period instance, with what its mark needs. */
export interface DueAlert {
  /** `<period>:<metric>:<period start>:<level>`: the mark's name and the unsent-alerts field. */
  readonly field: string;
  /** Marks of the configured levels above this one in the same instance: any of them set supersedes it. */
  readonly higherFields: readonly string[];
  /** How long the mark lives: one period past the instance's end; undefined for eternity (for good). */
  readonly ttlMs?: number;
  readonly alert: UsageAlert;
}

/** The usage of a metric in a set of buckets, its descendants' included (as the platform adds them). */
function usageOf(metric: string, hierarchy: MetricHierarchy, buckets: readonly UsageBucket[]): number {
  const counted = [metric, ...(hierarchy[metric] ?? [])];
  let total = 0;
  for (const bucket of buckets) for (const name of counted) total += bucket.usage[name] ?? 0;
  return total;
}

function inInstance(bucket: UsageBucket, start: number, end: number | undefined): boolean {
  return bucket.start === undefined || end === undefined || (bucket.start >= start && bucket.start < end);
}

/** The highest configured level `current` of `max` reaches; undefined for none. */
export function levelReached(
  levels: readonly AlertLevel[],
  current: number,
  max: number,
): AlertLevel | undefined {
  let reached: AlertLevel | undefined;
  for (const level of levels) if (current * 100 >= level * max) reached = level;
  return reached;
}

interface Instance {
  readonly metric: string;
  readonly period: Period;
  readonly start: number;
  readonly end?: number;
  readonly current: number;
  readonly max: number;
}

/** The period instances to look at: each limit's current one, and earlier ones a refusal hit. */
function instancesOf(resynced: ResyncedUsage, pending: readonly UsageBucket[]): Instance[] {
  const { status, refusals } = resynced;
  const buckets = [...resynced.inFlightBuckets, ...pending];
  const instances: Instance[] = [];
  for (const report of status.usageReports) {
    if (report.maxValue <= 0) continue;
    const start = report.periodStart ?? 0;
    const end = report.periodEnd;
    const used =
      report.currentValue +
      usageOf(
        report.metric,
        status.hierarchy,
        buckets.filter((bucket) => inInstance(bucket, start, end)),
      );
    const refused = refusals.some((refusal) => refusedIn(refusal, report, start, end));
    instances.push({
      metric: report.metric,
      period: report.period,
      start,
      ...(end !== undefined && { end }),
      // A refusal means the limit was reached, whatever the usage shows.
      current: refused ? Math.max(used, report.maxValue) : used,
      max: report.maxValue,
    });
    for (const refusal of refusals) {
      if (refusal.metric !== report.metric || refusal.period !== report.period) continue;
      if (end === undefined || refusal.at >= start) continue;
      // A refusal of an earlier instance (the period rolled over since): that instance reached 100 %.
      const earlier = periodWindow(report.period, refusal.at);
      instances.push({
        metric: report.metric,
        period: report.period,
        start: earlier.start,
        ...(earlier.end !== undefined && { end: earlier.end }),
        current: report.maxValue,
        max: report.maxValue,
      });
    }
  }
  return instances;
}

function refusedIn(
  refusal: LimitRefusal,
  report: UsageReport,
  start: number,
  end: number | undefined,
): boolean {
  if (refusal.metric !== report.metric || refusal.period !== report.period) return false;
  return end === undefined || (refusal.at >= start && refusal.at < end);
}

/** How due alerts name the application (besides the app id an app_id credential carries). */
function namingOf(resynced: ResyncedUsage, found: ApplicationIdentity | undefined) {
  if (found !== undefined) {
    return {
      application: found.id,
      applicationName: found.name,
      ...(found.account !== undefined && { account: found.account }),
    };
  }
  const keyHint = resynced.userKey === undefined ? undefined : keyHintOf(resynced.userKey);
  return {
    application: resynced.applicationId ?? resynced.credentialId,
    ...(keyHint !== undefined && { keyHint }),
  };
}

/**
 * The alerts a resynced credential's usage makes due, one per period instance at most; `found` is the
 * application the admin API named for a user key, if any.
 */
export function dueAlerts(
  serviceId: string,
  levels: readonly AlertLevel[],
  resynced: ResyncedUsage,
  pending: readonly UsageBucket[],
  found?: ApplicationIdentity,
): DueAlert[] {
  const naming = namingOf(resynced, found);
  const due: DueAlert[] = [];
  for (const instance of instancesOf(resynced, pending)) {
    const level = levelReached(levels, instance.current, instance.max);
    if (level === undefined) continue;
    const ttlMs = instance.end === undefined ? undefined : 2 * instance.end - instance.start - resynced.now;
    if (ttlMs !== undefined && ttlMs <= 0) continue;
    const fieldOf = (at: AlertLevel) => `${instance.period}:${instance.metric}:${instance.start}:${at}`;
    due.push({
      field: fieldOf(level),
      higherFields: levels.filter((other) => other > level).map(fieldOf),
      ...(ttlMs !== undefined && { ttlMs }),
      alert: {
        service: serviceId,
        ...naming,
        plan: resynced.status.plan ?? '',
        metric: instance.metric,
        period: instance.period,
        periodStart: new Date(instance.start).toISOString(),
        ...(instance.end !== undefined && { periodEnd: new Date(instance.end).toISOString() }),
        level,
        current: instance.current,
        max: instance.max,
        time: new Date(resynced.now).toISOString(),
      },
    });
  }
  return due;
}

/** How long a reporter may take to publish an alert it claimed before another one may take it over. */
export const ALERT_SEND_LEASE_MS = 30_000;
/** Unsent alerts are kept at least this long (their retry comes with a later report cycle). */
const UNSENT_TTL_MS = 7 * 24 * 60 * 60 * 1000;

/**
 * Claims an alert. KEYS: mark, unsent hash. ARGV: token, lease ms, mark TTL ms (0: none), alert JSON,
 * field, unsent TTL ms, the marks' key prefix, then the fields of the higher levels' marks (keys of the
 * same budget, so of the same slot; their number varies with the level). Returns 'superseded' (a higher level of the instance
 * fired already), 'taken' (this level did) or 'claimed' (publish it, then settle).
 */
const CLAIM_SCRIPT = {
  name: 'accessAlertClaim',
  lua: lua`
for i = 8, #ARGV do
  if redis.call('EXISTS', ARGV[7] .. ARGV[i]) == 1 then return 'superseded' end
end
if not redis.call('SET', KEYS[1], 'sending:' .. ARGV[1], 'NX', 'PX', ARGV[2]) then return 'taken' end
redis.call('HSET', KEYS[2], ARGV[5], ARGV[4])
if redis.call('PTTL', KEYS[2]) < tonumber(ARGV[6]) then redis.call('PEXPIRE', KEYS[2], ARGV[6]) end
return 'claimed'
`,
};

/**
 * Takes an unsent alert for a retry. KEYS: mark, unsent hash. ARGV: token, lease ms, field. Returns the
 * alert JSON to publish, or false: already sent (dropped from the hash), being sent by another reporter.
 */
const TAKE_SCRIPT = {
  name: 'accessAlertTake',
  lua: lua`
local alert = redis.call('HGET', KEYS[2], ARGV[3])
if not alert then return false end
local state = redis.call('GET', KEYS[1])
if state == 'sent' then
  redis.call('HDEL', KEYS[2], ARGV[3])
  return false
end
if state and string.sub(state, 1, 8) == 'sending:' then return false end
redis.call('SET', KEYS[1], 'sending:' .. ARGV[1], 'PX', ARGV[2])
return alert
`,
};

/**
 * Settles a publish. KEYS: mark, unsent hash. ARGV: token, 'sent' | 'out', mark TTL ms (0: none), field.
 * Sent: the mark says so and the alert leaves the hash. Out (failed): the mark stays taken and the alert
 * stays in the hash for the retry, unless another reporter took it over meanwhile.
 */
const SETTLE_SCRIPT = {
  name: 'accessAlertSettle',
  lua: lua`
local function mark(value)
  if tonumber(ARGV[3]) > 0 then redis.call('SET', KEYS[1], value, 'PX', ARGV[3])
  else redis.call('SET', KEYS[1], value) end
end
if ARGV[2] == 'sent' then
  mark('sent')
  redis.call('HDEL', KEYS[2], ARGV[4])
elseif redis.call('GET', KEYS[1]) == 'sending:' .. ARGV[1] then
  mark('out')
end
return 'ok'
`,
};

/**
 * KEYS: pending usage, unsent alerts. Both read in one round trip. A script, not a pipeline: ioredis's
 * cluster pipelines resend every command after an ASK or TRYAGAIN (a slot moving), and a resent command
 * that had been answered once is never timed out again, so a reply that never comes hangs the caller.
 */
const INPUTS_SCRIPT = {
  name: 'accessAlertInputs',
  lua: lua`return {redis.call('HGETALL', KEYS[1]), redis.call('HKEYS', KEYS[2])}`,
};

/** The alert marks' scripts (exported for the bundles' Lua compaction test). */
export const ALERT_SCRIPTS = [INPUTS_SCRIPT, CLAIM_SCRIPT, TAKE_SCRIPT, SETTLE_SCRIPT] as const;
type ScriptCall = (...keysAndArgs: (string | number)[]) => Promise<unknown>;

/** The Redis side of alerts: marks, the unsent-alerts hash, pending usage; all in the budget's slot. */
export class AlertMarks {
  private readonly keys: ServiceKeys;

  constructor(
    private readonly redis: RedisConnection,
    serviceId: string,
  ) {
    this.keys = serviceKeys(serviceId);
    const commands = redis as unknown as Record<string, unknown>;
    for (const script of ALERT_SCRIPTS) {
      if (typeof commands[script.name] !== 'function') {
        redis.defineCommand(script.name, { numberOfKeys: 2, lua: script.lua });
      }
    }
  }

  /** Pending usage per bucket and the fields of unsent alerts, in one round trip. */
  async inputs(credentialId: string): Promise<{ pending: UsageBucket[]; unsent: string[] }> {
    const keys = this.keys.budget(credentialId);
    const [pendingPairs, unsent] = (await this.call(INPUTS_SCRIPT.name, [keys.pending, keys.alerts], [])) as [
      string[],
      string[],
    ];
    return { pending: bucketsOf(pendingPairs), unsent };
  }

  async claim(
    credentialId: string,
    due: DueAlert,
    token: string,
  ): Promise<'claimed' | 'taken' | 'superseded'> {
    const keys = [this.keys.alertMark(credentialId, due.field), this.keys.budget(credentialId).alerts];
    const reply = await this.call(CLAIM_SCRIPT.name, keys, [
      token,
      ALERT_SEND_LEASE_MS,
      due.ttlMs ?? 0,
      JSON.stringify(due.alert),
      due.field,
      Math.max(UNSENT_TTL_MS, due.ttlMs ?? 0),
      this.keys.alertMark(credentialId, ''),
      ...due.higherFields,
    ]);
    return String(reply) as 'claimed' | 'taken' | 'superseded';
  }

  /** An unsent alert taken for a retry, or undefined when there is nothing to send. */
  async take(credentialId: string, field: string, token: string): Promise<UsageAlert | undefined> {
    const keys = [this.keys.alertMark(credentialId, field), this.keys.budget(credentialId).alerts];
    const reply = await this.call(TAKE_SCRIPT.name, keys, [token, ALERT_SEND_LEASE_MS, field]);
    return typeof reply === 'string' ? (JSON.parse(reply) as UsageAlert) : undefined;
  }

  async settle(
    credentialId: string,
    field: string,
    token: string,
    outcome: 'sent' | 'out',
    ttlMs: number | undefined,
  ): Promise<void> {
    const keys = [this.keys.alertMark(credentialId, field), this.keys.budget(credentialId).alerts];
    await this.call(SETTLE_SCRIPT.name, keys, [token, outcome, ttlMs ?? 0, field]);
  }

  private async call(name: string, keys: readonly string[], args: readonly (string | number)[]) {
    await ensureConnected(this.redis, REDIS_CONNECT_TIMEOUT_MS);
    const call = (this.redis as unknown as Record<string, ScriptCall>)[name] as ScriptCall;
    return call.call(this.redis, ...keys, ...args);
  }
}

export interface UsageAlertsDeps {
  readonly serviceId: string;
  /** Ascending; not empty (no levels: no observer at all). */
  readonly levels: readonly AlertLevel[];
  readonly redis: RedisConnection;
  readonly publisher: AlertPublisher;
  readonly logger: LogPort;
  readonly metrics: MetricsPort;
  /** Names user_key applications through the admin API. Default: none (alerts carry the key hint). */
  readonly directory?: ApplicationDirectory;
}

/** The mark TTL of an unsent alert being retried: one period past its end, from the alert itself. */
function ttlOfAlert(alert: UsageAlert, now: number): number | undefined {
  if (alert.periodEnd === undefined) return undefined;
  const end = Date.parse(alert.periodEnd);
  return Math.max(2 * end - Date.parse(alert.periodStart) - now, 1);
}

/** The reporter's alerts stage: an observer of each resynced credential. */
export class UsageAlerts {
  private readonly marks: AlertMarks;

  constructor(private readonly deps: UsageAlertsDeps) {
    this.marks = new AlertMarks(deps.redis, deps.serviceId);
  }

  /**
   * Retries the credential's unsent alerts, then fires what its fresh usage makes due. Redis failing
   * half-way asks for the retry too: an alert may have been claimed and kept unsent.
   */
  readonly observe = async (resynced: ResyncedUsage): Promise<ObserverVerdict> => {
    try {
      return await this.alertsOf(resynced);
    } catch (error) {
      this.deps.metrics.addMetric(METRIC.alertPublishFailed, 'Count', 1);
      this.deps.logger.warn('usage alerts not settled: the next report cycle tries again', {
        credential: credentialIdPrefix(resynced.credentialId),
        error: errorMessage(error),
      });
      return 'retry';
    }
  };

  private async alertsOf(resynced: ResyncedUsage): Promise<ObserverVerdict> {
    const { credentialId } = resynced;
    const { pending, unsent } = await this.marks.inputs(credentialId);
    let owed = false;
    for (const field of unsent) {
      const token = randomUUID();
      const alert = await this.marks.take(credentialId, field, token);
      if (alert === undefined) continue;
      if (!(await this.send(credentialId, field, token, alert, ttlOfAlert(alert, resynced.now)))) owed = true;
    }
    const { serviceId, levels } = this.deps;
    const unnamed = dueAlerts(serviceId, levels, resynced, pending);
    // Looked up only when an alert is due: most resyncs fire none.
    const found = unnamed.length === 0 ? undefined : await this.applicationOf(resynced);
    const dueNow = found === undefined ? unnamed : dueAlerts(serviceId, levels, resynced, pending, found);
    for (const due of dueNow) {
      const token = randomUUID();
      if ((await this.marks.claim(credentialId, due, token)) !== 'claimed') continue;
      if (!(await this.send(credentialId, due.field, token, due.alert, due.ttlMs))) owed = true;
    }
    return owed ? 'retry' : undefined;
  }

  /** The application the admin API names for a user key; undefined without a directory or on any failure. */
  private async applicationOf(resynced: ResyncedUsage): Promise<ApplicationIdentity | undefined> {
    const { directory, logger } = this.deps;
    if (directory === undefined || resynced.userKey === undefined) return undefined;
    try {
      return await directory.find(resynced.credentialId, resynced.userKey);
    } catch (error) {
      logger.warn('application lookup failed: the alert names the key hint', {
        credential: credentialIdPrefix(resynced.credentialId),
        error: errorMessage(error),
      });
      return undefined;
    }
  }

  /** Publishes a claimed alert and settles its mark; false when it stays unsent for the retry. */
  private async send(
    credentialId: string,
    field: string,
    token: string,
    alert: UsageAlert,
    ttlMs: number | undefined,
  ): Promise<boolean> {
    const { publisher, logger, metrics } = this.deps;
    try {
      await publisher.publish(alert);
    } catch (error) {
      metrics.addMetric(METRIC.alertPublishFailed, 'Count', 1);
      logger.warn('usage alert not published: kept for the next report cycle', {
        credential: credentialIdPrefix(credentialId),
        metric: alert.metric,
        period: alert.period,
        level: alert.level,
        error: errorMessage(error),
      });
      await this.marks.settle(credentialId, field, token, 'out', ttlMs);
      return false;
    }
    metrics.addCountPerMetric(METRIC.alertPublished, alert.metric, 1);
    logger.info('usage alert published', {
      credential: credentialIdPrefix(credentialId),
      metric: alert.metric,
      period: alert.period,
      level: alert.level,
      current: alert.current,
      max: alert.max,
    });
    await this.marks.settle(credentialId, field, token, 'sent', ttlMs);
    return true;
  }
}
