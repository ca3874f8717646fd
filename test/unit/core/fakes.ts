/**
 * Test doubles of the ports: a scripted platform that records its calls, loggers and metrics that
 * capture, and a Redis proxy that counts commands.
 */
import type { Cluster, default as Redis } from 'ioredis';
import { onEveryPrimary, type RedisConnection } from '../../../core/budget/redis-client';
import type {
  LogAttributes,
  LogPort,
  MetricsPort,
  MetricUnitName,
} from '../../../core/observability/observability';
import type {
  AuthOutcome,
  Credential,
  DenialReason,
  InvalidCredentialCode,
  PlatformPort,
  ReportOutcome,
  Transaction,
  Usage,
  UsageReport,
} from '../../../core/platform/types';

export type PlatformCall =
  | { readonly op: 'authorize' | 'authrep'; readonly credential: Credential; readonly usage: Usage }
  | { readonly op: 'report'; readonly transactions: readonly Transaction[] };

export function authorized(usageReports: UsageReport[] = [], plan = 'Basic'): AuthOutcome {
  return { kind: 'authorized', plan, usageReports, hierarchy: { hits: ['get_word', 'post_word'] } };
}

export function denied(reason: DenialReason, usageReports: UsageReport[] = [], plan = 'Basic'): AuthOutcome {
  return {
    kind: 'denied',
    reason,
    reasonText: reason.replace(/_/g, ' '),
    plan,
    usageReports,
    hierarchy: { hits: ['get_word', 'post_word'] },
  };
}

export function invalidCredential(code: InvalidCredentialCode = 'user_key_invalid'): AuthOutcome {
  return { kind: 'invalid_credential', code, message: 'user key "[redacted]" is invalid' };
}

export const UNAVAILABLE = { kind: 'unavailable', cause: 'refused', message: 'connection refused' } as const;

export const MISCONFIGURED = {
  kind: 'misconfigured',
  code: 'provider_key_invalid',
  status: 403,
  message: 'provider key "[redacted]" is invalid',
} as const;

export function hourly(
  metric: string,
  maxValue: number,
  currentValue: number,
  periodEnd: number,
): UsageReport {
  return {
    metric,
    period: 'hour',
    periodStart: periodEnd - 3_600_000,
    periodEnd,
    maxValue,
    currentValue,
    exceeded: currentValue > maxValue,
  };
}

/** A platform whose answers the test sets; every call is recorded. */
export class FakePlatform implements PlatformPort {
  readonly calls: PlatformCall[] = [];
  authrepAnswer: (credential: Credential, usage: Usage) => AuthOutcome | Promise<AuthOutcome> = () =>
    authorized();
  authorizeAnswer: (credential: Credential, usage: Usage) => AuthOutcome | Promise<AuthOutcome> = () =>
    authorized();
  reportAnswer: (transactions: readonly Transaction[]) => ReportOutcome = (transactions) => ({
    kind: 'accepted',
    requests: Math.ceil(transactions.length / 1000),
  });

  async authorize(credential: Credential, usage: Usage = {}): Promise<AuthOutcome> {
    this.calls.push({ op: 'authorize', credential, usage });
    return this.authorizeAnswer(credential, usage);
  }

  async authrep(credential: Credential, usage: Usage): Promise<AuthOutcome> {
    this.calls.push({ op: 'authrep', credential, usage });
    return this.authrepAnswer(credential, usage);
  }

  /** Transactions the platform accepted (all of an accepted report, the accepted part of a split one). */
  readonly accepted: Transaction[] = [];

  async report(transactions: readonly Transaction[]): Promise<ReportOutcome> {
    this.calls.push({ op: 'report', transactions });
    const outcome = this.reportAnswer(transactions);
    const acceptedCount =
      outcome.kind === 'accepted' ? transactions.length : (outcome.acceptedTransactions ?? 0);
    this.accepted.push(...transactions.slice(0, acceptedCount));
    return outcome;
  }

  count(op: PlatformCall['op']): number {
    return this.calls.filter((call) => call.op === op).length;
  }

  /** Usage the platform accepted in reports, summed per metric. */
  reported(): Record<string, number> {
    const sum: Record<string, number> = {};
    for (const transaction of this.accepted) {
      for (const [metric, value] of Object.entries(transaction.usage))
        sum[metric] = (sum[metric] ?? 0) + value;
    }
    return sum;
  }
}

export interface LogLine {
  readonly level: 'debug' | 'info' | 'warn' | 'error';
  readonly message: string;
  readonly attributes: LogAttributes;
}

export class CapturingLogger implements LogPort {
  readonly lines: LogLine[] = [];
  debug(message: string, ...attributes: LogAttributes[]) {
    this.push('debug', message, attributes);
  }
  info(message: string, ...attributes: LogAttributes[]) {
    this.push('info', message, attributes);
  }
  warn(message: string, ...attributes: LogAttributes[]) {
    this.push('warn', message, attributes);
  }
  error(message: string, ...attributes: LogAttributes[]) {
    this.push('error', message, attributes);
  }
  private push(level: LogLine['level'], message: string, attributes: LogAttributes[]) {
    this.lines.push({ level, message, attributes: Object.assign({}, ...attributes) });
  }
}

export class CapturingMetrics implements MetricsPort {
  /** Totals by name, the counts per platform metric included. */
  readonly counts: Record<string, number> = {};
  /** Counts per platform metric, by `<name>/<platform metric>`. */
  readonly perMetric: Record<string, number> = {};
  published = 0;
  addMetric(name: string, _unit: MetricUnitName, value: number) {
    this.counts[name] = (this.counts[name] ?? 0) + value;
  }
  addCountPerMetric(name: string, platformMetric: string, value: number) {
    this.addMetric(name, 'Count', value);
    const key = `${name}/${platformMetric}`;
    this.perMetric[key] = (this.perMetric[key] ?? 0) + value;
  }
  publishStoredMetrics() {
    this.published += 1;
  }
}

/** The client with every method call counted by name (properties such as `status` are not calls). */
export function countingRedis<Client extends Redis | Cluster>(
  redis: Client,
): { redis: Client; calls: string[] } {
  const calls: string[] = [];
  const proxy = new Proxy(redis, {
    get(target, property, receiver) {
      const value = Reflect.get(target, property, receiver);
      if (typeof value !== 'function') return value;
      return (...args: unknown[]) => {
        calls.push(String(property));
        return value.apply(target, args);
      };
    },
  });
  return { redis: proxy, calls };
}

/** Every key and every value (hash fields too) of the data set (every primary's), for scanning for secrets. */
export async function dumpRedis(redis: RedisConnection): Promise<string> {
  const perPrimary = await onEveryPrimary(redis, async (primary) => {
    const parts: string[] = [];
    for (const key of await primary.keys('*')) {
      parts.push(key);
      const type = await primary.type(key);
      if (type === 'string') parts.push(String(await primary.get(key)));
      if (type === 'hash') parts.push(JSON.stringify(await primary.hgetall(key)));
    }
    return parts;
  });
  return perPrimary.flat().join('\n');
}

/** A usage hash (pending or in flight) summed per metric over its period buckets (`<start>:<metric>`). */
export async function usageIn(redis: Redis, key: string): Promise<Record<string, number>> {
  const usage: Record<string, number> = {};
  for (const [field, value] of Object.entries(await redis.hgetall(key))) {
    const metric = /^\d+:(.+)$/.exec(field)?.[1];
    if (metric !== undefined) usage[metric] = (usage[metric] ?? 0) + Number(value);
  }
  return usage;
}

/** A client whose lease releases fail (a failover under the reporter) until `heal()`; the rest passes. */
export function releaseRefusing<Client extends Redis>(redis: Client): { client: Client; heal(): void } {
  let healed = false;
  const client = new Proxy(redis, {
    get: (target, property, receiver) =>
      property === 'accessRelease' && !healed
        ? () => Promise.reject(new Error('Connection is closed.'))
        : Reflect.get(target, property, receiver),
  });
  return {
    client,
    heal: () => {
      healed = true;
    },
  };
}
