/**
 * How the bench makes the authorizer workloads' calls and reads their answers as the gateway in front of
 * each Lambda would: a REST authorizer's policy, an HTTP API's simple response, the SOAP proxy's status.
 * The first few errors are kept as samples for the results, so an unsound run says what went wrong.
 */
import type {
  APIGatewayAuthorizerResult,
  APIGatewayProxyEvent,
  APIGatewayProxyResult,
  APIGatewayRequestAuthorizerEvent,
  APIGatewayRequestAuthorizerEventV2,
} from 'aws-lambda';
import type { SimpleAnswer } from '../adapters/gateway/http-v2';
import type { SoapProxyHandler } from '../lambdas/soap/handler';
import { evaluateAuthorizerResult, MalformedAuthorizerResultError } from '../local/policy';
import type { Caller } from './system';

type Authorizer = (event: APIGatewayRequestAuthorizerEvent) => Promise<APIGatewayAuthorizerResult>;

/** How many errors the results keep: enough to see what went wrong, not a copy of every one. */
const ERROR_SAMPLES = 5;

const samples: string[] = [];

/** The first errors of the run's calls, in the order they were read. */
export const errorSamples: readonly string[] = samples;

function sampleError(message: string): void {
  if (samples.length < ERROR_SAMPLES) samples.push(message);
}

/** How API Gateway reads the answer: a thrown Unauthorized is 401, a policy is evaluated on the methodArn. */
function outcomeOf(settled: PromiseSettledResult<APIGatewayAuthorizerResult>, methodArn: string): string {
  if (settled.status === 'rejected') {
    const message = settled.reason instanceof Error ? settled.reason.message : String(settled.reason);
    if (message === 'Unauthorized') return 'unauthorized';
    sampleError(message);
    return 'error';
  }
  try {
    return evaluateAuthorizerResult(JSON.parse(JSON.stringify(settled.value)), methodArn).decision;
  } catch (error) {
    if (!(error instanceof MalformedAuthorizerResultError)) throw error;
    sampleError(error.message);
    return 'malformed';
  }
}

/** How API Gateway reads a REQUEST authorizer's answers to `events`. */
export function authorizerCaller(
  authorize: Authorizer,
  events: readonly APIGatewayRequestAuthorizerEvent[],
): Caller {
  return {
    send: (i) => authorize(events[i] as APIGatewayRequestAuthorizerEvent),
    outcome: (settled, i) =>
      outcomeOf(
        settled as PromiseSettledResult<APIGatewayAuthorizerResult>,
        (events[i] as APIGatewayRequestAuthorizerEvent).methodArn,
      ),
  };
}

/** How an HTTP API reads a simple response: isAuthorized, else the reason of the refusal. */
export function simpleResponseCaller(
  authorize: (event: APIGatewayRequestAuthorizerEventV2) => Promise<SimpleAnswer>,
  events: readonly APIGatewayRequestAuthorizerEventV2[],
): Caller {
  return {
    send: (i) => authorize(events[i] as APIGatewayRequestAuthorizerEventV2),
    outcome: (settled) => {
      if (settled.status === 'rejected') {
        sampleError(String(settled.reason));
        return 'error';
      }
      const answer = settled.value as SimpleAnswer;
      return answer.isAuthorized ? 'allow' : `deny ${String(answer.context.reason)}`;
    },
  };
}

const SOAP_OUTCOMES: Readonly<Record<number, string>> = { 200: 'allow', 401: 'unauthorized', 403: 'deny' };

/** The SOAP route's answers read as the REST ones: 200 allowed, 401 and 403 refused, anything else an error. */
export function soapCaller(proxy: SoapProxyHandler, events: readonly APIGatewayProxyEvent[]): Caller {
  return {
    send: (i) => proxy(events[i] as APIGatewayProxyEvent),
    outcome: (settled) => {
      if (settled.status === 'rejected') {
        sampleError(String(settled.reason));
        return 'error';
      }
      const { statusCode } = settled.value as APIGatewayProxyResult;
      return SOAP_OUTCOMES[statusCode] ?? `status ${statusCode}`;
    },
  };
}

/** A flood's answers by reason: a Deny names why (`platform_busy`, an invalid credential), so they count apart. */
export function byReason(caller: Caller): Caller {
  return {
    send: caller.send,
    outcome: (settled, i) => {
      const outcome = caller.outcome(settled, i);
      if (outcome !== 'explicit_deny' || settled.status !== 'fulfilled') return outcome;
      const reason = (settled.value as APIGatewayAuthorizerResult).context?.reason;
      return `deny ${String(reason)}`;
    },
  };
}
