/**
 * The cost of one call, by use (docs/http-api.md, "Cost per million calls"): API Gateway, the authorizer
 * Lambda's requests and compute, and the logs each invocation ingests. The log bytes are measured: the
 * EMF lines the authorizer's own metrics code (Powertools, as deployed) writes for a cache hit, and the
 * START, END and REPORT lines Lambda writes for every invocation in its text log format.
 */
import { randomUUID } from 'node:crypto';
import { createMetrics, METRIC } from '../../core/observability/observability';
import { AUTHORIZER_SERVICE_NAME } from '../../lambdas/authorizer/handler';
import priceList from './price-list.json';

/** The authorizer's memory (lib/parts/authorizer-function.ts) and its mean run time per call. */
export const AUTHORIZER_GB = 0.5;
export const AUTHORIZER_MEAN_MS = 10;

/** Lambda's lines around each invocation, in the text log format (Lambda developer guide, function logs). */
function lambdaPlatformLines(): string {
  const id = randomUUID();
  return [
    `START RequestId: ${id} Version: $LATEST`,
    `END RequestId: ${id}`,
    `REPORT RequestId: ${id}\tDuration: 4.52 ms\tBilled Duration: 5 ms\tMemory Size: 512 MB\tMax Memory Used: 98 MB\t`,
  ]
    .map((line) => `${line}\n`)
    .join('');
}

/** What `write` captures of process.stdout while `run` runs. */
function stdoutOf(run: () => void): string {
  const written: string[] = [];
  const write = process.stdout.write;
  process.stdout.write = ((chunk: string | Uint8Array) => {
    written.push(typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8'));
    return true;
  }) as typeof process.stdout.write;
  try {
    run();
  } finally {
    process.stdout.write = write;
  }
  return written.join('');
}

/** The repository's stack's instance dimension (service id and stack name), as its Lambdas publish it. */
const DEFAULT_STACK_INSTANCE = '2555417735060/ApiAccessManagement';

/** The EMF lines of one allowed cache hit counted on each platform metric, as the authorizer writes them. */
function authorizerEmfLines(platformMetrics: readonly string[]): string {
  const metrics = createMetrics(AUTHORIZER_SERVICE_NAME, DEFAULT_STACK_INSTANCE);
  return stdoutOf(() => {
    metrics.addMetric(METRIC.cacheHit, 'Count', 1);
    for (const metric of platformMetrics) metrics.addCountPerMetric(METRIC.allowed, metric, 1);
    metrics.publishStoredMetrics();
  });
}

/** Bytes of log one authorizer invocation ingests. */
export function authorizerLogBytesPerCall(platformMetrics: readonly string[] = ['hits']): number {
  return Buffer.byteLength(lambdaPlatformLines() + authorizerEmfLines(platformMetrics), 'utf8');
}

export interface PerCallCost {
  readonly api: number;
  readonly lambdaRequests: number;
  readonly lambdaCompute: number;
  readonly logs: number;
  readonly total: number;
}

/** Dollars per million calls on each API type, with `logBytes` ingested per call. */
export function perMillionCalls(apiType: 'rest' | 'http', logBytes: number): PerCallCost {
  const prices = priceList.perCall;
  const api = apiType === 'rest' ? prices.restApiPerMillion : prices.httpApiPerMillion;
  const lambdaRequests = prices.lambdaRequestsPerMillion;
  const lambdaCompute = 1e6 * (AUTHORIZER_MEAN_MS / 1000) * AUTHORIZER_GB * prices.lambdaArmGbSecond;
  const logs = ((1e6 * logBytes) / 2 ** 30) * prices.logsIngestedPerGb;
  return { api, lambdaRequests, lambdaCompute, logs, total: api + lambdaRequests + lambdaCompute + logs };
}
