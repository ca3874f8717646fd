/**
 * The CORS preflights of a REST API, as aws-cdk-lib's `defaultCorsPreflightOptions` builds them: an OPTIONS
 * method with a MOCK integration on every resource (the root and each parent included), open to anyone.
 * The MOCK answers 204 with static allow headers. Its Access-Control-Allow-Origin is the first allowed
 * origin, or the caller's when it is one of the others (a response override in the integration's
 * template), and `Vary: Origin` unless every origin is allowed. Like API Gateway it answers whatever the
 * preflight asks: the browser, not the gateway, compares the answer with its request.
 */
import type { APIGatewayProxyResult } from 'aws-lambda';
import { parseRoute } from '../contract/routes';
import { ANY_ORIGIN, type CorsPreflightOptions, requestOrigin } from '../core/settings/cors';
import type { ApiMethod, BackendFunction } from './gateway';

function preflightIntegration(options: CorsPreflightOptions): BackendFunction {
  const [first, ...others] = options.allowOrigins as [string, ...string[]];
  const headers: Record<string, string> = {
    'access-control-allow-headers': options.allowHeaders.join(','),
    'access-control-allow-methods': options.allowMethods.join(','),
    ...(first !== ANY_ORIGIN && { vary: 'Origin' }),
  };
  return (event): APIGatewayProxyResult => {
    const origin = requestOrigin(event.headers);
    const allowOrigin = origin !== undefined && others.includes(origin) ? origin : first;
    return { statusCode: 204, headers: { ...headers, 'access-control-allow-origin': allowOrigin }, body: '' };
  };
}

/** Every resource of the methods and all their parents, root included. */
function resourcesOf(methods: readonly ApiMethod[]): string[] {
  const resources = new Set<string>(['/']);
  for (const { route } of methods) {
    const parts = route.resource.split('/').filter((part) => part !== '');
    for (let i = 1; i <= parts.length; i++) resources.add(`/${parts.slice(0, i).join('/')}`);
  }
  return [...resources];
}

/**
 * The OPTIONS methods to add beside `methods`. Like aws-cdk-lib, which refuses a second OPTIONS method on a
 * resource, this expects none among `methods` (the stack file refuses OPTIONS routes when CORS is on).
 */
export function corsPreflightMethods(
  methods: readonly ApiMethod[],
  options: CorsPreflightOptions,
): ApiMethod[] {
  const integration = preflightIntegration(options);
  return resourcesOf(methods).map((resource) => ({
    route: parseRoute(`OPTIONS ${resource}`, 'cors'),
    authorization: 'NONE',
    integration,
  }));
}
