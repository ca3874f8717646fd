/**
 * The cost per million calls on each API type (docs/http-api.md, "Cost per million calls"): API Gateway,
 * the authorizer Lambda's invocations and compute, and the CloudWatch Logs it writes, as it logged before
 * issue 34 and as it logs now.
 */
import type { PriceList } from './price';

/** The authorizer's memory (GB) and its average duration per call: a hit takes a few ms, a first call ~100. */
const AUTHORIZER_GB = 0.5;
const AUTHORIZER_MS_PER_CALL = 10;

/** CloudWatch bills ingestion by the GB of 2^30 bytes. */
const BYTES_PER_GB = 1024 ** 3;

/**
 * CloudWatch Logs bytes per authorization on the hot key, from `npm run bench -- --quick --workloads hot`
 * (bench/log-bytes.ts, 2026-11-28): before, an EMF line pair per invocation and Lambda's text-format
 * START/END/REPORT lines; now, JSON at system level WARN and the counts written once a minute per
 * instance (a run of 2,000 calls, its held counts written as at shutdown). An instance called less than
 * once a minute writes up to its count lines (about 450 bytes) per call.
 */
export const LOG_BYTES_PER_CALL = { before: 713.0, now: 0.23 } as const;

export type ApiType = 'http' | 'rest';
export type Logging = keyof typeof LOG_BYTES_PER_CALL;

export interface PerMillion {
  readonly gateway: number;
  readonly invocations: number;
  readonly compute: number;
  readonly logs: number;
  readonly total: number;
}

export function perMillionCalls(list: PriceList, apiType: ApiType, logging: Logging): PerMillion {
  const prices = list.perUse;
  const gateway = apiType === 'http' ? prices.apiGatewayHttpPerMillion : prices.apiGatewayRestPerMillion;
  const invocations = prices.lambdaRequestsPerMillion;
  const compute = 1_000_000 * (AUTHORIZER_MS_PER_CALL / 1000) * AUTHORIZER_GB * prices.lambdaArmGbSecond;
  const logs = ((1_000_000 * LOG_BYTES_PER_CALL[logging]) / BYTES_PER_GB) * prices.logsIngestionPerGb;
  return { gateway, invocations, compute, logs, total: gateway + invocations + compute + logs };
}
