/**
 * The benchmark's API and traffic: one service with five endpoints, an application per key, and the
 * REQUEST authorizer events API Gateway would send. Every key is used by one design and one workload
 * only, so each run starts from first calls and its reported usage can be checked key by key.
 */
import type { APIGatewayRequestAuthorizerEvent } from 'aws-lambda';
import type { MappingRule } from '../lambdas/core/config';
import { requestAuthorizerEvent } from '../local/authorizer-event';
import { LOCAL_REGION } from '../local/sns-endpoint';
import { seededRandom } from '../test/reliability/support/seed';
import type { Design, WorkloadName } from './report';

export const BENCH_SERVICE_ID = 'bench-service';
/** A made-up provider key for the in-process platform; it protects nothing. */
export const BENCH_PROVIDER_KEY = 'bench-provider-key';
const API_ID = 'benchapi';
const STAGE = 'prod';
const PLAN = 'Bench';
/** Limits so large the run never reaches them, but which the limit checks still evaluate. */
const UNREACHABLE_LIMIT = 1_000_000_000_000;

export interface Endpoint {
  readonly method: string;
  readonly resource: string;
  readonly path: string;
  readonly pathParameters: Readonly<Record<string, string>> | null;
  readonly metric: string;
}

export const ENDPOINTS: readonly Endpoint[] = [
  {
    method: 'GET',
    resource: '/v1/words/{word}.json',
    path: '/v1/words/hello.json',
    pathParameters: { word: 'hello' },
    metric: 'get_word',
  },
  {
    method: 'POST',
    resource: '/v1/words/{word}.json',
    path: '/v1/words/hello.json',
    pathParameters: { word: 'hello' },
    metric: 'post_word',
  },
  {
    method: 'DELETE',
    resource: '/v1/words/{word}.json',
    path: '/v1/words/hello.json',
    pathParameters: { word: 'hello' },
    metric: 'delete_word',
  },
  { method: 'GET', resource: '/v1/words', path: '/v1/words', pathParameters: null, metric: 'list_words' },
  { method: 'GET', resource: '/v1/stats', path: '/v1/stats', pathParameters: null, metric: 'get_stats' },
];

/** One rule per endpoint, anchored so that no request matches two. */
export const MAPPING_RULES: readonly MappingRule[] = ENDPOINTS.map((endpoint) => ({
  method: endpoint.method,
  pattern: `${endpoint.resource}$`,
  metric: endpoint.metric,
  delta: 1,
}));

export function keyOf(
  design: Design,
  workload: WorkloadName,
  phase: 'warmup' | 'measured',
  n: number,
): string {
  return `${design}-${workload}-${phase}-${n}`;
}

/** The `platform` section of a local stack file with one active application per key. */
export function benchPlatformConfig(keys: readonly string[]) {
  return {
    services: [
      {
        id: BENCH_SERVICE_ID,
        providerKey: BENCH_PROVIDER_KEY,
        authentication: 'user_key',
        metrics: [{ name: 'hits', children: ENDPOINTS.map((endpoint) => ({ name: endpoint.metric })) }],
        plans: [
          {
            name: PLAN,
            limits: [
              { metric: 'hits', period: 'hour', value: UNREACHABLE_LIMIT },
              { metric: 'hits', period: 'eternity', value: UNREACHABLE_LIMIT },
            ],
          },
        ],
        applications: keys.map((key) => ({ id: key, userKey: key, plan: PLAN })),
      },
    ],
  };
}

/** The event API Gateway sends a REQUEST authorizer (identity source: the apikey header). */
export function authorizerEvent(
  key: string,
  endpoint: Endpoint,
  requestId: number,
): APIGatewayRequestAuthorizerEvent {
  const host = `${API_ID}.execute-api.${LOCAL_REGION}.amazonaws.com`;
  return requestAuthorizerEvent({
    apiId: API_ID,
    stage: STAGE,
    method: endpoint.method,
    resource: endpoint.resource,
    path: endpoint.path,
    headers: { Host: host, apikey: key, Accept: '*/*' },
    multiValueHeaders: { Host: [host], apikey: [key], Accept: ['*/*'] },
    pathParameters: endpoint.pathParameters,
    requestId: `bench-${requestId}`,
    requestTimeEpoch: Date.now(),
    resourceId: 'bench',
    sourceIp: '127.0.0.1',
    userAgent: 'bench',
  });
}

export interface Traffic {
  readonly keys: readonly string[];
  readonly endpoints: readonly Endpoint[];
  /** The events in call order; calls of one key and endpoint share one event object. */
  readonly events: readonly APIGatewayRequestAuthorizerEvent[];
}

/**
 * `calls` calls over `keys` keys and the first `endpointCount` endpoints: each key and endpoint pair
 * once in turn when calls equal pairs (first calls only), otherwise pairs drawn uniformly at random
 * from a fixed seed, so every run sends the same sequence.
 */
export function traffic(keys: readonly string[], endpointCount: number, calls: number, seed = 6): Traffic {
  const endpoints = ENDPOINTS.slice(0, endpointCount);
  const pairs = keys.flatMap((key) => endpoints.map((endpoint, e) => authorizerEvent(key, endpoint, e)));
  const random = seededRandom(seed);
  const events =
    calls === pairs.length
      ? pairs
      : Array.from(
          { length: calls },
          () => pairs[Math.floor(random() * pairs.length)] as APIGatewayRequestAuthorizerEvent,
        );
  return { keys, endpoints, events };
}
