/**
 * The answers the plugin gives, as HTTP means them (it is not bound to API Gateway's 401/403):
 * - 401 with WWW-Authenticate: a missing, malformed or unknown credential;
 * - 403: refused by the platform (suspended, disabled metric, limit 0, no mapping rule);
 * - 429 with Retry-After: a limit or a throttle (when waiting mends it: core/decision/retry-after.ts);
 * - 503 with Retry-After: the platform cannot be asked (platform_unavailable, platform_busy);
 * - 500: the access check itself failed (our configuration, or an unexpected error);
 * - 4xx for a request the plugin cannot read (bad_request: too long, unreadable path).
 * Bodies are application/problem+json (RFC 9457) carrying the reason; the RateLimit-Policy and
 * RateLimit fields go on allowed answers and on refusals alike.
 */
import { INVALID_CREDENTIAL } from '../contract/authorizer-context';
import { credentialPromptOf } from '../core/credentials';
import type { AccessDecision, DenyReason } from '../core/decision/decision';
import {
  type DecisionLimitValues,
  type FlatLimit,
  limitValues,
  rateLimitFields,
  throttleValues,
} from '../core/decision/rate-limit-fields';
import type { AccessConfig } from '../core/settings/config';

/** An HTTP answer the adapters send as it is. */
export interface AccessAnswer {
  readonly status: number;
  readonly headers: Readonly<Record<string, string>>;
  /** JSON text (application/problem+json). */
  readonly body: string;
}

/** Why the plugin refused a call: the core's reasons, and the plugin's own. */
export type RefusalReason =
  | DenyReason
  | typeof INVALID_CREDENTIAL
  | 'access_check_unavailable'
  /** limits_exceeded on a limit of 0: the plan disables the metric, and no wait lets the call through. */
  | 'metric_disabled'
  | RequestProblem;

/** A request the plugin does not read, refused before any Redis or platform call. */
export type RequestProblem = 'path_too_long' | 'query_too_long' | 'headers_too_large' | 'unreadable_path';

/** A refusal, as the refusal callback sees it. */
export interface Refusal {
  readonly reason: RefusalReason;
  /** The plugin's own answer, which the callback may send, change, or replace. */
  readonly answer: AccessAnswer;
  /** The application when a platform answer named it (app_id mode). */
  readonly applicationId?: string;
  /** The plan when a platform answer named it; '' otherwise. */
  readonly plan?: string;
}

/** Replaces the refusal answer; return the plugin's own (`refusal.answer`) to keep it. */
export type RefusalHandler = (refusal: Refusal) => AccessAnswer | Promise<AccessAnswer>;

export const PROBLEM_JSON = 'application/problem+json';

interface ReasonAnswer {
  readonly status: number;
  readonly title: string;
}

const REQUEST_PROBLEMS: Readonly<Record<RequestProblem, ReasonAnswer>> = {
  path_too_long: { status: 414, title: 'The request path is too long' },
  query_too_long: { status: 414, title: 'The query string is too long' },
  headers_too_large: { status: 431, title: 'The request headers are too large' },
  unreadable_path: { status: 400, title: 'The request path cannot be read' },
};

/** The status and title of each reason: a new reason is one entry, and the compiler asks for it. */
const REASON_ANSWERS: Readonly<Record<RefusalReason, ReasonAnswer>> = {
  [INVALID_CREDENTIAL]: { status: 401, title: 'Missing or invalid credential' },
  application_key_invalid: { status: 401, title: 'Missing or invalid credential' },
  application_not_active: { status: 403, title: 'The application is not active' },
  service_not_active: { status: 403, title: 'The service is not active' },
  referrer_not_allowed: { status: 403, title: 'The referrer is not allowed' },
  limits_exceeded: { status: 429, title: 'A usage limit is reached' },
  metric_disabled: { status: 403, title: 'The plan does not include this call' },
  rate_limited: { status: 429, title: 'Too many calls in a short time' },
  no_mapping_rule: { status: 403, title: 'No mapping rule matches the call' },
  platform_unavailable: { status: 503, title: 'The access check cannot reach the platform' },
  platform_busy: { status: 503, title: 'Too many new credentials at once' },
  platform_misconfigured: { status: 500, title: 'The access check is misconfigured' },
  access_check_unavailable: { status: 500, title: 'Access check unavailable' },
  ...REQUEST_PROBLEMS,
};

/** The `WWW-Authenticate` challenge: the scheme's standard one (Bearer), else one naming where the key goes. */
export function challengeOf(config: AccessConfig): string {
  const prompt = credentialPromptOf(config);
  return prompt.challenge ?? `ApiKey realm="api", error_description="${prompt.hint}"`;
}

/** No header: a call to which neither a limit nor a throttle applies. */
const NO_HEADERS: Readonly<Record<string, string>> = Object.freeze({});

/** RateLimit-Policy and RateLimit of a decision's limit and throttle, or none. */
export function rateLimitHeaders(values: DecisionLimitValues): Readonly<Record<string, string>> {
  return rateLimitFields(values) ?? NO_HEADERS;
}

/** A decision's limit as flat values, once per call: the grant, the headers and a refusal's body read it. */
export function flatLimitOf(
  decision: Extract<AccessDecision, { effect: 'allow' | 'deny' }>,
  now: number,
): FlatLimit | undefined {
  return decision.limit && limitValues(decision.limit, now);
}

/** The limit and throttle values of a decision, as the refusal's body and the headers carry them. */
export function decisionLimits(
  decision: Extract<AccessDecision, { effect: 'allow' | 'deny' }>,
  limit: FlatLimit | undefined,
): DecisionLimitValues {
  if (decision.throttle === undefined) return limit ?? {};
  return { ...limit, ...throttleValues(decision.throttle) };
}

/**
 * The problem+json answer of a refusal, with its reason and, when it has them, its limit's values and when
 * it will pass (the core's `retryAfterSeconds`, core/decision/retry-after.ts).
 */
export function refusalAnswer(
  reason: RefusalReason,
  limits: DecisionLimitValues = {},
  extraHeaders: Readonly<Record<string, string>> = {},
  retryAfter?: number,
): AccessAnswer {
  const { status, title } = REASON_ANSWERS[reason];
  const { throttleLimit, throttleRemaining, throttleReset, ...limit } = limits;
  return {
    status,
    headers: {
      'content-type': PROBLEM_JSON,
      'cache-control': 'no-store',
      ...(retryAfter !== undefined && { 'retry-after': String(retryAfter) }),
      ...rateLimitHeaders(limits),
      ...extraHeaders,
    },
    body: JSON.stringify({ type: 'about:blank', title, status, reason, ...limit }),
  };
}

/** The reason a refusal answers with: the core's, with a limit of 0 told apart from a limit reached. */
export function refusalReasonOf(decision: Exclude<AccessDecision, { effect: 'allow' }>): RefusalReason {
  if (decision.effect === 'unauthorized') return INVALID_CREDENTIAL;
  if (decision.reason === 'limits_exceeded' && decision.limit?.max === 0) return 'metric_disabled';
  return decision.reason ?? 'access_check_unavailable';
}

/** The plugin's answer to a refused decision (unauthorized or deny). */
export function answerOfRefusal(
  decision: Exclude<AccessDecision, { effect: 'allow' }>,
  config: AccessConfig,
  now: number,
): AccessAnswer {
  if (decision.effect === 'unauthorized') {
    return refusalAnswer(INVALID_CREDENTIAL, {}, { 'www-authenticate': challengeOf(config) });
  }
  const reason = refusalReasonOf(decision);
  const answer = refusalAnswer(
    reason,
    decisionLimits(decision, flatLimitOf(decision, now)),
    {},
    decision.retryAfterSeconds,
  );
  if (REASON_ANSWERS[reason].status !== 401) return answer;
  return { ...answer, headers: { ...answer.headers, 'www-authenticate': challengeOf(config) } };
}
