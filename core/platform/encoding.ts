/**
 * Request encoding for the Service Management API: query strings and form bodies. Every name and
 * value is percent-encoded, so a credential or metric name can never add or change a parameter.
 */
import { platformCredentialOf } from '../credentials';
import type { Credential, ServiceAuth, Transaction, Usage } from './types';

/** The platform takes at most this many transactions in one POST /transactions.xml. */
export const MAX_TRANSACTIONS_PER_REQUEST = 1000;

type Pair = readonly [name: string, value: string];

export function formEncode(pairs: readonly Pair[]): string {
  return pairs.map(([name, value]) => `${encodeURIComponent(name)}=${encodeURIComponent(value)}`).join('&');
}

function serviceAuthPairs(serviceId: string, auth: ServiceAuth): Pair[] {
  const credential: Pair =
    auth.kind === 'provider_key' ? ['provider_key', auth.providerKey] : ['service_token', auth.serviceToken];
  return [credential, ['service_id', serviceId]];
}

function usagePairs(prefix: string, usage: Usage): Pair[] {
  return Object.entries(usage).map(([metric, value]) => [`${prefix}[${metric}]`, String(value)]);
}

/** Query string of authorize.xml and authrep.xml. */
export function authQuery(
  serviceId: string,
  auth: ServiceAuth,
  credential: Credential,
  usage: Usage,
): string {
  return formEncode([
    ...serviceAuthPairs(serviceId, auth),
    ...platformCredentialOf(credential).authParams(credential),
    ...usagePairs('usage', usage),
  ]);
}

/** Form body of one POST /transactions.xml; transactions are numbered from 0 in each request. */
export function reportBody(
  serviceId: string,
  auth: ServiceAuth,
  transactions: readonly Transaction[],
): string {
  const pairs = serviceAuthPairs(serviceId, auth);
  transactions.forEach(({ credential, usage, timestamp }, i) => {
    const prefix = `transactions[${i}]`;
    for (const [name, value] of platformCredentialOf(credential).reportParams(credential)) {
      pairs.push([`${prefix}[${name}]`, value]);
    }
    pairs.push(...usagePairs(`${prefix}[usage]`, usage));
    if (timestamp !== undefined) pairs.push([`${prefix}[timestamp]`, formatPlatformTime(timestamp)]);
  });
  return formEncode(pairs);
}

export function chunk<T>(items: readonly T[], size: number): T[][] {
  const chunks: T[][] = [];
  for (let start = 0; start < items.length; start += size) chunks.push(items.slice(start, start + size));
  return chunks;
}

const pad = (value: number, width = 2) => String(value).padStart(width, '0');

/** Epoch ms as the platform writes and reads times: `%Y-%m-%d %H:%M:%S %z`, in UTC. */
export function formatPlatformTime(epochMs: number): string {
  const t = new Date(epochMs);
  return (
    `${pad(t.getUTCFullYear(), 4)}-${pad(t.getUTCMonth() + 1)}-${pad(t.getUTCDate())} ` +
    `${pad(t.getUTCHours())}:${pad(t.getUTCMinutes())}:${pad(t.getUTCSeconds())} +0000`
  );
}

const PLATFORM_TIME = /^(\d{4})-(\d{2})-(\d{2}) (\d{2}):(\d{2}):(\d{2}) ([+-])(\d{2})(\d{2})$/;

/** Parses `%Y-%m-%d %H:%M:%S %z` into epoch ms; undefined when the text is not such a time. */
export function parsePlatformTime(text: string): number | undefined {
  const match = PLATFORM_TIME.exec(text.trim());
  if (!match) return undefined;
  const [year, month, day, hour, minute, second, , offsetHours, offsetMinutes] = match
    .slice(1)
    .map((part) => Number(part));
  const local = Date.UTC(year, month - 1, day, hour, minute, second);
  const check = new Date(local);
  // Date.UTC rolls 2010-02-30 over to March; a time the platform never writes is refused instead.
  if (
    check.getUTCFullYear() !== year ||
    check.getUTCMonth() !== month - 1 ||
    check.getUTCDate() !== day ||
    check.getUTCHours() !== hour ||
    check.getUTCMinutes() !== minute ||
    check.getUTCSeconds() !== second ||
    offsetMinutes > 59
  ) {
    return undefined;
  }
  const offsetMs = (offsetHours * 60 + offsetMinutes) * 60_000;
  return match[7] === '+' ? local - offsetMs : local + offsetMs;
}

/** Why a usage cannot be sent, or undefined when it can. Names the metric, never a credential. */
export function usageProblem(usage: Usage): string | undefined {
  for (const [metric, value] of Object.entries(usage)) {
    if (metric === '') return 'usage has an empty metric name';
    if (!Number.isSafeInteger(value) || value < 0) {
      return `usage of metric "${metric}" must be a non-negative integer (got ${String(value)})`;
    }
  }
  return undefined;
}

/** Why a report cannot be sent (with the error code to give), or undefined when it can. */
export function transactionsProblem(
  transactions: readonly Transaction[],
): { readonly code: string; readonly message: string } | undefined {
  for (const [i, { usage, timestamp }] of transactions.entries()) {
    const problem = usageProblem(usage);
    if (problem) return { code: 'usage_value_invalid', message: `transaction ${i}: ${problem}` };
    if (timestamp !== undefined && !Number.isFinite(new Date(timestamp).getTime())) {
      return {
        code: 'timestamp_invalid',
        message: `transaction ${i}: timestamp must be epoch milliseconds (got ${String(timestamp)})`,
      };
    }
  }
  return undefined;
}
