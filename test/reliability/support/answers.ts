/**
 * The authorizer's answer as API Gateway reads it: 401 for `Error('Unauthorized')`, the policy's effect
 * otherwise, and anything else (another error, a malformed policy) a crash, which API Gateway turns
 * into a 500.
 */
import type { APIGatewayAuthorizerResult, APIGatewayRequestAuthorizerEvent } from 'aws-lambda';

export type Answer =
  | { readonly kind: 'unauthorized' }
  | {
      readonly kind: 'allow' | 'deny';
      readonly reason?: string;
      readonly context: Readonly<Record<string, string | number | boolean>>;
      readonly result: APIGatewayAuthorizerResult;
    }
  | { readonly kind: 'crash'; readonly detail: string };

export type Authorizer = (event: APIGatewayRequestAuthorizerEvent) => Promise<APIGatewayAuthorizerResult>;

/** Why a result is not a policy API Gateway would accept for this call; undefined when it is. */
function policyProblem(result: APIGatewayAuthorizerResult, methodArn: string): string | undefined {
  const statements = result?.policyDocument?.Statement;
  if (typeof result?.principalId !== 'string' || result.principalId === '') return 'no principalId';
  if (!Array.isArray(statements) || statements.length !== 1) return 'not exactly one statement';
  const [statement] = statements as unknown as Record<string, unknown>[];
  if (statement?.Action !== 'execute-api:Invoke') return `action ${String(statement?.Action)}`;
  if (statement.Resource !== methodArn) return `resource ${String(statement.Resource)} is not the methodArn`;
  if (statement.Effect !== 'Allow' && statement.Effect !== 'Deny')
    return `effect ${String(statement.Effect)}`;
  for (const [name, value] of Object.entries(result.context ?? {})) {
    if (!['string', 'number', 'boolean'].includes(typeof value)) return `context.${name} is not a primitive`;
  }
  return undefined;
}

export async function answerOf(
  authorizer: Authorizer,
  event: APIGatewayRequestAuthorizerEvent,
): Promise<Answer> {
  let result: APIGatewayAuthorizerResult;
  try {
    result = await authorizer(event);
  } catch (error) {
    if (error instanceof Error && error.message === 'Unauthorized') return { kind: 'unauthorized' };
    return { kind: 'crash', detail: `threw ${error instanceof Error ? error.stack : String(error)}` };
  }
  const problem = policyProblem(result, event.methodArn);
  if (problem) return { kind: 'crash', detail: `invalid policy: ${problem}: ${JSON.stringify(result)}` };
  const context = (result.context ?? {}) as Record<string, string | number | boolean>;
  const effect = result.policyDocument.Statement[0]?.Effect === 'Allow' ? 'allow' : 'deny';
  return {
    kind: effect,
    ...(typeof context.reason === 'string' && { reason: context.reason }),
    context,
    result,
  };
}
