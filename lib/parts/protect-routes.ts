import { Annotations, CfnResource, type IAspect } from 'aws-cdk-lib';
import { CfnRoute } from 'aws-cdk-lib/aws-apigatewayv2';
import type { IConstruct } from 'constructs';
import type { UnprotectedMethods } from '../../contract/gateway-responses';
import type { ProtectionLedger } from './protect-methods';

/** What the Aspect needs from the protection of one HTTP API. */
export interface RouteGuard {
  readonly apiId: string;
  readonly authorizerId: string;
  readonly ledger: ProtectionLedger;
  readonly open: UnprotectedMethods;
  /** Routes a part serves with their own authentication, and why. */
  readonly exempt: ReadonlyMap<CfnRoute, string>;
}

/** The catch-all route of an HTTP API: every method, every path no other route matches. */
const DEFAULT_ROUTE = '$default';

/**
 * A route's method and path from its key (`GET /orders`, `ANY /{proxy+}`); `$default` is every method on
 * no path of its own, so only a method-wide `ANY` entry of unprotectedMethods leaves it open.
 */
function routeOf(route: CfnRoute): { name: string; httpMethod: string; path?: string } {
  const key = route.routeKey;
  if (key === DEFAULT_ROUTE) return { name: key, httpMethod: 'ANY' };
  const [httpMethod = key, path] = key.split(' ');
  return { name: key, httpMethod, path };
}

/**
 * Fails closed over a whole Stage, as ProtectEveryMethod does for a REST API: every route of the protected
 * HTTP API, wherever it was created, gets the authorizer, or is left open by name, or synthesis fails
 * naming it. Works on the CloudFormation resources, so a bare CfnRoute is covered like an HttpRoute.
 */
export class ProtectEveryRoute implements IAspect {
  constructor(private readonly guard: RouteGuard) {}

  public visit(node: IConstruct): void {
    if (!CfnResource.isCfnResource(node) || node.cfnResourceType !== CfnRoute.CFN_RESOURCE_TYPE_NAME) return;
    const route = node as CfnRoute;
    if (route.apiId === this.guard.apiId) this.protectRoute(route);
  }

  private protectRoute(route: CfnRoute): void {
    const { ledger } = this.guard;
    const { name, httpMethod, path } = routeOf(route);
    const entry = this.guard.open.entryFor(httpMethod, path);
    if (entry !== undefined || this.guard.exempt.has(route)) {
      ledger.leaveOpen(name, entry);
      return;
    }
    const type = route.authorizationType;
    if (type === 'CUSTOM' && route.authorizerId === this.guard.authorizerId) {
      ledger.protect(name);
      return;
    }
    if (type !== undefined && type !== 'NONE') {
      Annotations.of(route).addError(
        `${name} already uses ${type} authorization${route.authorizerId ? ' with another authorizer' : ''}; ` +
          'ApiAccessAuthorizer cannot protect it as well: remove that authorization, or list the route in unprotectedMethods',
      );
      return;
    }
    route.authorizationType = 'CUSTOM';
    route.authorizerId = this.guard.authorizerId;
    ledger.protect(name);
  }
}
