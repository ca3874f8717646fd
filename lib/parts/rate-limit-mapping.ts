import { CfnResource, type IAspect } from 'aws-cdk-lib';
import { CfnIntegration, type CfnRoute } from 'aws-cdk-lib/aws-apigatewayv2';
import type { IConstruct } from 'constructs';
import { RATE_LIMIT_CONTEXT } from '../../contract/authorizer-context';

/**
 * The statuses of an allowed call's answer that carry the RateLimit fields. An HTTP API maps response
 * parameters per status code of the integration's answer (200-599), so each one is listed.
 */
export const RATE_LIMIT_STATUS_CODES = ['200', '201', '202', '203', '204', '205', '206'] as const;

/**
 * `RateLimit-Policy` and `RateLimit` on every answer of the API's backends, copied by API Gateway from the
 * authorizer's context (it computes nothing: core/decision/rate-limit-fields.ts formats them). A call with
 * no limit gets them empty: an empty List of structured fields, which says nothing.
 */
export const RATE_LIMIT_MAPPING: Readonly<Record<string, string>> = Object.fromEntries(
  Object.entries(RATE_LIMIT_CONTEXT).map(([field, key]) => [
    `overwrite:header.${field}`,
    `$context.authorizer.${key}`,
  ]),
);

/** What the Aspect needs from the protection of one HTTP API. */
export interface RateLimitGuard {
  readonly apiId: string;
  /** Routes the authorizer leaves open: their integrations get no fields. */
  readonly exempt: ReadonlyMap<CfnRoute, string>;
}

/**
 * The response parameters of an integration, as CloudFormation takes them: a ResponseParameterMap per
 * status code (the API's own map-of-maps form is refused, aws/aws-cdk#20993; the L1 property is untyped).
 */
function rateLimitResponseParameters(): Record<string, unknown> {
  const mapping = Object.entries(RATE_LIMIT_MAPPING).map(([Destination, Source]) => ({
    Destination,
    Source,
  }));
  return Object.fromEntries(RATE_LIMIT_STATUS_CODES.map((code) => [code, { ResponseParameters: mapping }]));
}

/**
 * Adds the RateLimit fields' response mapping to every integration of the protected HTTP API that no open
 * route targets. An integration with response parameters of its own is the provider's, and left as it is.
 */
export class SendRateLimitFields implements IAspect {
  constructor(private readonly guard: RateLimitGuard) {}

  public visit(node: IConstruct): void {
    if (!CfnResource.isCfnResource(node) || node.cfnResourceType !== CfnIntegration.CFN_RESOURCE_TYPE_NAME) {
      return;
    }
    const integration = node as CfnIntegration;
    if (integration.apiId !== this.guard.apiId || integration.responseParameters !== undefined) return;
    if (this.targetedByOpenRoute(integration)) return;
    integration.responseParameters = rateLimitResponseParameters();
  }

  private targetedByOpenRoute(integration: CfnIntegration): boolean {
    const target = `integrations/${integration.ref}`;
    return [...this.guard.exempt.keys()].some((route) => route.target === target);
  }
}
