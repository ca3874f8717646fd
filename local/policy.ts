/**
 * What API Gateway does with a Lambda authorizer's answer: validate it, then evaluate its IAM policy
 * against the request's methodArn (explicit Deny wins; without a matching Allow the call is denied).
 */

export type PolicyDecision = 'allow' | 'explicit_deny' | 'implicit_deny';

export type AuthorizerContext = Readonly<Record<string, string | number | boolean>>;

export interface AuthorizerVerdict {
  readonly decision: PolicyDecision;
  readonly principalId: string;
  readonly context: AuthorizerContext;
}

/** An answer API Gateway cannot use: it responds 500 AuthorizerConfigurationException. */
export class MalformedAuthorizerResultError extends Error {
  constructor(problem: string) {
    super(`authorizer result is malformed: ${problem}`);
    this.name = 'MalformedAuthorizerResultError';
  }
}

const INVOKE_ACTION = 'execute-api:Invoke';

interface Statement {
  readonly effect: 'Allow' | 'Deny';
  readonly actions: readonly string[];
  readonly actionsNegated: boolean;
  readonly resources: readonly string[];
  readonly resourcesNegated: boolean;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** IAM wildcards: `*` any run of characters (also across `/` and `:`), `?` one character. */
function globMatches(pattern: string, value: string, ignoreCase: boolean): boolean {
  const source = pattern
    .split('')
    .map((char) => (char === '*' ? '.*' : char === '?' ? '.' : char.replace(/[.*+?^${}()|[\]\\/-]/g, '\\$&')))
    .join('');
  return new RegExp(`^${source}$`, ignoreCase ? 'is' : 's').test(value);
}

function stringList(value: unknown, at: string): string[] {
  const list = typeof value === 'string' ? [value] : value;
  if (!Array.isArray(list) || list.length === 0 || !list.every((item) => typeof item === 'string')) {
    throw new MalformedAuthorizerResultError(`${at} must be a string or a non-empty array of strings`);
  }
  return list;
}

function statementOf(raw: unknown, at: string): Statement {
  if (!isObject(raw)) throw new MalformedAuthorizerResultError(`${at} must be an object`);
  if (raw.Effect !== 'Allow' && raw.Effect !== 'Deny') {
    throw new MalformedAuthorizerResultError(`${at}.Effect must be Allow or Deny`);
  }
  if (raw.Condition !== undefined) {
    throw new MalformedAuthorizerResultError(`${at}.Condition is not supported in authorizer policies`);
  }
  const pick = (positive: string, negative: string) => {
    if ((raw[positive] === undefined) === (raw[negative] === undefined)) {
      throw new MalformedAuthorizerResultError(`${at} needs exactly one of ${positive} and ${negative}`);
    }
    const negated = raw[positive] === undefined;
    const name = negated ? negative : positive;
    return { list: stringList(raw[name], `${at}.${name}`), negated };
  };
  const actions = pick('Action', 'NotAction');
  const resources = pick('Resource', 'NotResource');
  return {
    effect: raw.Effect,
    actions: actions.list,
    actionsNegated: actions.negated,
    resources: resources.list,
    resourcesNegated: resources.negated,
  };
}

function applies(statement: Statement, methodArn: string): boolean {
  const actionListed = statement.actions.some((action) => globMatches(action, INVOKE_ACTION, true));
  const resourceListed = statement.resources.some((resource) => globMatches(resource, methodArn, false));
  return actionListed !== statement.actionsNegated && resourceListed !== statement.resourcesNegated;
}

function contextOf(raw: unknown): AuthorizerContext {
  if (raw === undefined || raw === null) return {};
  if (!isObject(raw)) throw new MalformedAuthorizerResultError('context must be an object');
  for (const [key, value] of Object.entries(raw)) {
    if (typeof value !== 'string' && typeof value !== 'number' && typeof value !== 'boolean') {
      throw new MalformedAuthorizerResultError(
        `context.${key} must be a string, number or boolean (API Gateway supports no other values)`,
      );
    }
  }
  return raw as AuthorizerContext;
}

/**
 * Validates an authorizer's result as API Gateway does (after the Lambda runtime's JSON serialization) and
 * evaluates its policy for `methodArn`. Throws MalformedAuthorizerResultError when API Gateway would
 * answer 500.
 */
export function evaluateAuthorizerResult(result: unknown, methodArn: string): AuthorizerVerdict {
  if (!isObject(result)) throw new MalformedAuthorizerResultError('the result must be an object');
  if (typeof result.principalId !== 'string' || result.principalId === '') {
    throw new MalformedAuthorizerResultError('principalId must be a non-empty string');
  }
  const document = result.policyDocument;
  if (!isObject(document)) throw new MalformedAuthorizerResultError('policyDocument must be an object');
  const rawStatements = Array.isArray(document.Statement) ? document.Statement : [document.Statement];
  if (document.Statement === undefined || rawStatements.length === 0) {
    throw new MalformedAuthorizerResultError('policyDocument.Statement must hold at least one statement');
  }
  const statements = rawStatements.map((raw, i) => statementOf(raw, `policyDocument.Statement[${i}]`));
  const context = contextOf(result.context);
  const matching = statements.filter((statement) => applies(statement, methodArn));
  const decision: PolicyDecision = matching.some((statement) => statement.effect === 'Deny')
    ? 'explicit_deny'
    : matching.some((statement) => statement.effect === 'Allow')
      ? 'allow'
      : 'implicit_deny';
  return { decision, principalId: result.principalId, context };
}
