/**
 * A Lambda Function URL handler (payload format 2.0) wrapped: the event becomes the plugin's request, a
 * refusal is the function's answer, and an allowed call reaches the handler with its grant where an HTTP
 * API's Lambda authorizer puts its context (`event.requestContext.authorizer.lambda`). A structured
 * answer gets the RateLimit headers; when its end matters, the call is settled with its status, or as
 * failed when the handler throws (the throw goes on to Lambda). Types only: the plugin imports nothing
 * from aws-lambda.
 */
import type { AccessControl } from '../access-control';
import type { AccessGrant } from '../outcome';

/** The parts of a Function URL event (payload 2.0) the wrapper reads and writes. */
export interface FunctionUrlEvent {
  readonly rawPath: string;
  readonly rawQueryString?: string;
  readonly headers?: Readonly<Record<string, string | undefined>>;
  readonly requestContext: {
    readonly http: { readonly method: string; readonly sourceIp?: string };
    authorizer?: { lambda?: AccessGrant } & Record<string, unknown>;
  };
}

/** A structured answer; any other value is a 200 whose body Lambda makes of it. */
export interface FunctionUrlResult {
  readonly statusCode?: number;
  readonly headers?: Readonly<Record<string, string | number | boolean>>;
  readonly body?: string;
  readonly isBase64Encoded?: boolean;
  readonly cookies?: readonly string[];
}

export type FunctionUrlHandler<R, E extends FunctionUrlEvent = FunctionUrlEvent, C = unknown> = (
  event: E,
  context: C,
) => Promise<R>;

function isStructured(result: unknown): result is FunctionUrlResult {
  return typeof result === 'object' && result !== null && 'statusCode' in result;
}

/** The status Lambda answers with: a structured answer's, else 200. */
function statusOf(result: unknown): number {
  return isStructured(result) ? (result.statusCode ?? 200) : 200;
}

export function wrapFunctionUrl<R, E extends FunctionUrlEvent, C>(
  control: Pick<AccessControl, 'check'>,
  handler: FunctionUrlHandler<R, E, C>,
): FunctionUrlHandler<R | FunctionUrlResult, E, C> {
  return async (event, context) => {
    const query = event.rawQueryString ? `?${event.rawQueryString}` : '';
    const sourceIp = event.requestContext.http.sourceIp;
    const outcome = await control.check({
      method: event.requestContext.http.method,
      url: `${event.rawPath}${query}`,
      headers: event.headers ?? {},
      ...(sourceIp !== undefined && { clientAddress: sourceIp }),
    });
    if (!outcome.allowed) {
      const { status, headers, body } = outcome.answer;
      return { statusCode: status, headers, body };
    }
    event.requestContext.authorizer = { ...event.requestContext.authorizer, lambda: outcome.grant };
    const { settle } = outcome;
    let result: R;
    try {
      result = await handler(event, context);
    } catch (error) {
      if (settle !== undefined) await settle('threw');
      throw error;
    }
    if (settle !== undefined) await settle(statusOf(result));
    if (!isStructured(result)) return result;
    return { ...result, headers: { ...outcome.headers, ...result.headers } };
  };
}
