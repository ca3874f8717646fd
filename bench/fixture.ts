/**
 * The benchmark's API and traffic: one service with five endpoints, an application per key, and the
 * REQUEST authorizer events API Gateway would send. Every key is used by one design and one workload
 * only, so each run starts from first calls and its reported usage can be checked key by key.
 */
import type {
  APIGatewayProxyEvent,
  APIGatewayRequestAuthorizerEvent,
  APIGatewayRequestAuthorizerEventV2,
} from 'aws-lambda';
import type { MappingRule } from '../core/settings/config';
import { SOAP_VERSIONS } from '../core/soap/namespaces';
import { SOAP_DEFAULTS } from '../core/soap/settings';
import { httpApiAuthorizerEvent, requestAuthorizerEvent } from '../local/authorizer-event';
import { textPostEvent } from '../local/proxy-event';
import { LOCAL_REGION } from '../local/sns-endpoint';
import { seededRandom } from '../test/reliability/support/seed';
import type { Design, WorkloadName } from './report';

export const BENCH_SERVICE_ID = 'bench-service';
/** The service of the app-id workload: app id authentication, applications without keys. */
export const BENCH_APP_ID_SERVICE_ID = 'bench-app-id-service';
/** The service of the oauth workload: OpenID Connect authentication, one application per client id. */
export const BENCH_OAUTH_SERVICE_ID = 'bench-oauth-service';

export type BenchServiceId =
  | typeof BENCH_SERVICE_ID
  | typeof BENCH_APP_ID_SERVICE_ID
  | typeof BENCH_OAUTH_SERVICE_ID;
/** A made-up provider key for the in-process platform; it protects nothing. */
export const BENCH_PROVIDER_KEY = 'bench-provider-key';
/**
 * The largest `unseenCredentialCallsPerSecond` the setting takes. The workloads measure what first calls
 * cost, not the bound on them (spread and cold make thousands a second): the bound is out of reach, but
 * for the set-up that measures it.
 */
export const UNSEEN_CALLS_OUT_OF_REACH = 100_000;
const API_ID = 'benchapi';
const STAGE = 'prod';
export const PLAN = 'Bench';
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

/** Warm-up and measured keys are the platform's applications; made-up keys were never issued. */
export type KeyPhase = 'warmup' | 'measured' | 'made-up';

export function keyOf(design: Design, workload: WorkloadName, phase: KeyPhase, n: number): string {
  return `${design}-${workload}-${phase}-${n}`;
}

/** The first `count` keys of a design's workload in one phase. */
export function keysOf(design: Design, workload: WorkloadName, phase: KeyPhase, count: number): string[] {
  return Array.from({ length: count }, (_, n) => keyOf(design, workload, phase, n));
}

/** The SOAP operation an endpoint stands for: its metric in PascalCase (`get_word` is `GetWord`). */
export function soapOperationOf(endpoint: Endpoint): string {
  return endpoint.metric.replace(/(?:^|_)([a-z])/g, (_, letter: string) => letter.toUpperCase());
}

/** The SOAP proxy's rules: `POST /<operation>` counts on the endpoint's metric. */
export const SOAP_MAPPING_RULES: readonly MappingRule[] = ENDPOINTS.map((endpoint) => ({
  method: 'POST',
  pattern: `/${soapOperationOf(endpoint)}$`,
  metric: endpoint.metric,
  delta: 1,
}));

/** A made-up client secret of an oauth application (an app key at the platform); it protects nothing. */
export function clientSecretOf(clientId: string): string {
  return `${clientId}-secret`;
}

const metrics = [{ name: 'hits', children: ENDPOINTS.map((endpoint) => ({ name: endpoint.metric })) }];
/** A plan that allows no call: the applications of a refused flood. */
const OVER_LIMIT_PLAN = 'BenchOverLimit';

/** The bench's plan: two limits on hits (an hour and a day, out of reach), as issue 34's hit-script target reads. */
const plans = [
  {
    name: PLAN,
    limits: [
      { metric: 'hits', period: 'hour', value: UNREACHABLE_LIMIT },
      { metric: 'hits', period: 'day', value: UNREACHABLE_LIMIT },
    ],
  },
  { name: OVER_LIMIT_PLAN, limits: [{ metric: 'hits', period: 'hour', value: 0 }] },
];

/** Each service's authentication and what an application of it is made of, from the bench's name for it. */
const SERVICES: Readonly<
  Record<
    BenchServiceId,
    { readonly authentication: string; readonly application: (name: string) => Record<string, unknown> }
  >
> = {
  [BENCH_SERVICE_ID]: { authentication: 'user_key', application: (key) => ({ userKey: key }) },
  // Without keys, as the application of a verified token is called (its client id, no key).
  [BENCH_APP_ID_SERVICE_ID]: { authentication: 'app_id', application: () => ({}) },
  // The client secret is an app key at the platform.
  [BENCH_OAUTH_SERVICE_ID]: {
    authentication: 'oidc',
    application: (id) => ({ appKeys: [clientSecretOf(id)] }),
  },
};

/**
 * The `platform` section of a local stack file: each bench service with one active application per name
 * given for it (a user key, an app id, an oauth client id), all on one plan.
 */
export function benchPlatformConfig(
  applications: Partial<Readonly<Record<BenchServiceId, readonly string[]>>>,
  /** Applications on the plan that allows no call. */
  overLimit: ReadonlySet<string> = new Set(),
) {
  return {
    services: (Object.keys(SERVICES) as BenchServiceId[]).map((id) => ({
      id,
      providerKey: BENCH_PROVIDER_KEY,
      authentication: SERVICES[id].authentication,
      metrics,
      plans,
      applications: (applications[id] ?? []).map((name) => ({
        id: name,
        plan: overLimit.has(name) ? OVER_LIMIT_PLAN : PLAN,
        ...SERVICES[id].application(name),
      })),
    })),
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

/** The same call as an HTTP API's payload 2.0 authorizer event, on the same stage. */
export function httpV2AuthorizerEvent(
  key: string,
  endpoint: Endpoint,
  requestId: number,
): APIGatewayRequestAuthorizerEventV2 {
  const host = `${API_ID}.execute-api.${LOCAL_REGION}.amazonaws.com`;
  return httpApiAuthorizerEvent({
    apiId: API_ID,
    stage: STAGE,
    method: endpoint.method,
    routeKey: `${endpoint.method} ${endpoint.resource}`,
    rawPath: `/${STAGE}${endpoint.path}`,
    rawQueryString: '',
    headerLines: [
      ['Host', host],
      ['apikey', key],
      ['Accept', '*/*'],
    ],
    pathParameters: endpoint.pathParameters,
    requestId: `bench-${requestId}`,
    requestTimeEpoch: Date.now(),
    sourceIp: '127.0.0.1',
    userAgent: 'bench',
    domainName: host,
    requestTime: '01/Jan/2030:10:00:00 +0000',
  });
}

/**
 * The event API Gateway's Lambda proxy integration hands the SOAP route: a SOAP 1.1 envelope with the key
 * and the endpoint's operation in its header, as the specification shows it (prefix `t`).
 */
export function soapProxyEvent(key: string, endpoint: Endpoint): APIGatewayProxyEvent {
  const operation = soapOperationOf(endpoint);
  const body =
    `<?xml version="1.0" encoding="UTF-8"?>` +
    `<soap:Envelope xmlns:soap="${SOAP_VERSIONS['1.1'].namespace}" xmlns:t="${SOAP_DEFAULTS.soapNamespace}">` +
    `<soap:Header><t:ApiKey>${key}</t:ApiKey><t:method>${operation}</t:method></soap:Header>` +
    `<soap:Body><q:${operation} xmlns:q="urn:example:words"><q:word>hello</q:word></q:${operation}></soap:Body>` +
    '</soap:Envelope>';
  const headers = { 'Content-Type': 'text/xml; charset=utf-8', SOAPAction: `"urn:example:${operation}"` };
  return textPostEvent('/soap', body, headers);
}

/** One call of the traffic: the key, the endpoint, and the REQUEST authorizer event of the pair. */
export interface Call {
  readonly key: string;
  readonly endpoint: Endpoint;
  readonly event: APIGatewayRequestAuthorizerEvent;
}

export interface Traffic {
  readonly keys: readonly string[];
  readonly endpoints: readonly Endpoint[];
  /** The calls in order; calls of one key and endpoint share one object. */
  readonly calls: readonly Call[];
  /** The calls' events, in the same order. */
  readonly events: readonly APIGatewayRequestAuthorizerEvent[];
}

/**
 * `calls` calls over `keys` keys and the first `endpointCount` endpoints: each key and endpoint pair
 * once in turn when calls equal pairs (first calls only), otherwise pairs drawn uniformly at random
 * from a fixed seed, so every run sends the same sequence.
 */
export function traffic(keys: readonly string[], endpointCount: number, calls: number, seed = 6): Traffic {
  const endpoints = ENDPOINTS.slice(0, endpointCount);
  const pairs: Call[] = keys.flatMap((key) =>
    endpoints.map((endpoint, e) => ({ key, endpoint, event: authorizerEvent(key, endpoint, e) })),
  );
  const random = seededRandom(seed);
  const drawn =
    calls === pairs.length
      ? pairs
      : Array.from({ length: calls }, () => pairs[Math.floor(random() * pairs.length)] as Call);
  return { keys, endpoints, calls: drawn, events: drawn.map((call) => call.event) };
}
