/**
 * What one kind of API (REST, HTTP) does around the local gateway's shared router: the authorizer event it
 * builds and the answers it accepts from the authorizer, and the answers it gives itself when it refuses a
 * call. The router finds the API and route, reads the body and runs the integration for every kind.
 */
import type { RouteMatch } from '../contract/routes';

/** The refusals every kind of API gives itself, each in its own words. */
export type GatewayRefusal = 'NO_ROUTE' | 'REQUEST_TOO_LARGE' | 'INTEGRATION_FAILURE' | 'INTEGRATION_TIMEOUT';

/** An answer the gateway gives itself. */
export interface GatewayAnswer {
  readonly status: number;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: string;
  /** `x-amzn-ErrorType` of a REST API's answer, for the access log. */
  readonly errorType?: string;
}

/** One call as the router has it once its route is found. */
export interface GatewayCall {
  readonly requestId: string;
  readonly receivedAt: number;
  readonly method: string;
  /** The path the API's routes see: without the base path and the stage. */
  readonly path: string;
  /** The path after the base path, the stage's prefix included (an HTTP API's rawPath). */
  readonly stagePath: string;
  readonly rawQueryString: string;
  readonly match: RouteMatch;
  /** Header lines in the order received, with the forwarding headers API Gateway adds. */
  readonly headerLines: readonly (readonly [name: string, value: string])[];
  readonly sourceIp: string;
  readonly userAgent: string | null;
  readonly protocol: string;
  readonly domainName: string;
  readonly extendedRequestId: string;
  /** CLF time, like 21/Nov/2026:05:01:02 +0000. */
  readonly requestTime: string;
}

/** Invokes an authorizer as Lambda does: counted, its event and answer through JSON, within its timeout. */
export type InvokeAuthorizer = <Event, Answer>(
  authorizer: (event: Event) => Promise<Answer>,
  event: Event,
) => Promise<Answer>;

export type Authorization =
  | { readonly ok: true; readonly context: Record<string, unknown> }
  | { readonly ok: false; readonly answer: GatewayAnswer };

export interface ApiKind {
  /** Runs the API's authorizer on a call to a method behind it. */
  authorize(call: GatewayCall, invoke: InvokeAuthorizer): Promise<Authorization>;
  refusal(refusal: GatewayRefusal, requestId: string): GatewayAnswer;
}

/** The authorizer exceeded its timeout. */
export class AuthorizerTimeoutError extends Error {
  constructor(timeoutMs: number) {
    super(`the authorizer timed out after ${timeoutMs} ms`);
    this.name = 'AuthorizerTimeoutError';
  }
}

/** The context values an authorizer returned, as strings, as API Gateway hands them to integrations. */
export function integrationContext(context: Readonly<Record<string, unknown>>): Record<string, string> {
  return Object.fromEntries(Object.entries(context).map(([key, value]) => [key, String(value)]));
}
