/**
 * The authorizer as an OpenAPI security scheme, for APIs defined by an OpenAPI document (SpecRestApi):
 * API Gateway creates the authorizer from `x-amazon-apigateway-authorizer` and applies it to every
 * operation whose `security` names the scheme. Plain data in, plain data out: the input is never changed.
 */
import type { UnprotectedMethods } from '../../contract/gateway-responses';

/** Path item keys that are operations, and the HTTP method API Gateway serves for each. */
const OPERATIONS: Readonly<Record<string, string>> = {
  get: 'GET',
  put: 'PUT',
  post: 'POST',
  delete: 'DELETE',
  options: 'OPTIONS',
  head: 'HEAD',
  patch: 'PATCH',
  'x-amazon-apigateway-any-method': 'ANY',
};

export interface AccessSecurityScheme {
  /** The scheme's name in the document. */
  readonly name: string;
  /** Request parameters API Gateway requires, as `method.request.header.<name>` or `.querystring.<name>`. */
  readonly identitySources: readonly string[];
  /** The Lambda invocation URI of the authorizer. */
  readonly authorizerUri: string;
}

export interface SecuredDefinition {
  readonly definition: Record<string, unknown>;
  /** `METHOD /path` of every operation behind the authorizer. */
  readonly protectedOperations: readonly string[];
  /** `METHOD /path` of every operation left open, with the unprotectedMethods entry that opened it. */
  readonly openOperations: ReadonlyArray<{ readonly operation: string; readonly entry: string }>;
}

type Json = Record<string, unknown>;

function isObject(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The OpenAPI object declaring the scheme (type apiKey, with API Gateway's custom-authorizer extensions). */
export function securitySchemeObject(scheme: AccessSecurityScheme): Json {
  // The first identity source names the parameter; a token scheme has none and travels as Authorization.
  const first = /^method\.request\.(header|querystring)\.(.+)$/.exec(scheme.identitySources[0] ?? '');
  return {
    type: 'apiKey',
    name: first?.[2] ?? 'Authorization',
    in: first?.[1] === 'querystring' ? 'query' : 'header',
    'x-amazon-apigateway-authtype': 'custom',
    'x-amazon-apigateway-authorizer': {
      type: 'request',
      ...(scheme.identitySources.length > 0 && { identitySource: scheme.identitySources.join(', ') }),
      authorizerUri: scheme.authorizerUri,
      // The authorizer caches in Redis itself; a gateway cache would skip its usage counting.
      authorizerResultTtlInSeconds: 0,
    },
  };
}

function usesOnly(security: unknown, schemeName: string): boolean {
  return (
    Array.isArray(security) &&
    security.length === 1 &&
    isObject(security[0]) &&
    Object.keys(security[0]).length === 1 &&
    schemeName in security[0]
  );
}

/** Where the document keeps its security schemes: OpenAPI 3 components, or Swagger 2 securityDefinitions. */
function withScheme(document: Json, name: string, scheme: Json): Json {
  if (typeof document.openapi === 'string') {
    const components = isObject(document.components) ? document.components : {};
    const schemes = isObject(components.securitySchemes) ? components.securitySchemes : {};
    return { ...document, components: { ...components, securitySchemes: { ...schemes, [name]: scheme } } };
  }
  const definitions = isObject(document.securityDefinitions) ? document.securityDefinitions : {};
  return { ...document, securityDefinitions: { ...definitions, [name]: scheme } };
}

/**
 * The document with the scheme declared and required by every operation but the open ones. An operation
 * that already requires something else (another scheme, or `security: []`, which means none) is an error
 * naming it: it must be listed in unprotectedMethods to stay as it is.
 */
export function withAccessSecurity(
  document: unknown,
  scheme: AccessSecurityScheme,
  open: UnprotectedMethods,
): SecuredDefinition {
  if (!isObject(document) || (typeof document.openapi !== 'string' && document.swagger !== '2.0')) {
    throw new Error(
      'the API definition is neither an OpenAPI 3 (openapi) nor a Swagger 2.0 (swagger) document',
    );
  }
  const protectedOperations: string[] = [];
  const openOperations: Array<{ operation: string; entry: string }> = [];
  const conflicts: string[] = [];
  const requirement = [{ [scheme.name]: [] }];
  const paths: Json = {};
  for (const [path, item] of Object.entries(isObject(document.paths) ? document.paths : {})) {
    if (!isObject(item)) {
      paths[path] = item;
      continue;
    }
    const securedItem: Json = { ...item };
    for (const [key, operation] of Object.entries(item)) {
      const httpMethod = OPERATIONS[key.toLowerCase()];
      if (httpMethod === undefined || !isObject(operation)) continue;
      const name = `${httpMethod} ${path}`;
      const entry = open.entryFor(httpMethod, path);
      if (entry !== undefined) {
        openOperations.push({ operation: name, entry });
        continue;
      }
      const security = operation.security ?? document.security;
      if (security === undefined || usesOnly(security, scheme.name)) {
        securedItem[key] = { ...operation, security: requirement };
        protectedOperations.push(name);
      } else {
        conflicts.push(`${name} already requires security ${JSON.stringify(security)}`);
      }
    }
    paths[path] = securedItem;
  }
  if (conflicts.length > 0) {
    throw new Error(
      `${conflicts.join('; ')}. ApiAccessAuthorizer puts every operation behind its authorizer: remove that security, or list the method in unprotectedMethods to leave it as it is`,
    );
  }
  return {
    definition: withScheme({ ...document, paths }, scheme.name, securitySchemeObject(scheme)),
    protectedOperations,
    openOperations,
  };
}

/**
 * The document with API Gateway's gateway responses added for the types it does not define yet (a
 * response the document defines is the provider's and stays).
 */
export function withGatewayResponses(document: Json, responses: Json): Json {
  const key = 'x-amazon-apigateway-gateway-responses';
  const defined = isObject(document[key]) ? document[key] : {};
  if (Object.keys(responses).length === 0) return document;
  return { ...document, [key]: { ...responses, ...defined } };
}
