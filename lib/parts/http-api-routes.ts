import {
  type HttpApi,
  type HttpMethod,
  type HttpRoute,
  PayloadFormatVersion,
} from 'aws-cdk-lib/aws-apigatewayv2';
import { HttpLambdaIntegration } from 'aws-cdk-lib/aws-apigatewayv2-integrations';
import type { IFunction } from 'aws-cdk-lib/aws-lambda';
import { acknowledgeNagRules } from '../nag-acknowledgements';
import type { HttpApiProtection } from './http-api-protection';

/** Routes a part serves on a protected HttpApi, open to anyone because the function authenticates itself. */
export interface OpenHttpRoutes {
  /** Construct id of the integration, unique on the API. */
  readonly id: string;
  readonly function: IFunction;
  readonly routes: readonly (readonly [HttpMethod, string])[];
  /** Why the routes need no authorizer (the template's metadata and cdk-nag's suppression). */
  readonly why: string;
}

/**
 * Adds a part's routes to a protected HttpApi with a Lambda proxy integration of payload 1.0, the format
 * REST's proxy integration sends (docs/http-api.md), so the part's function serves both API types as it is.
 */
export function addOpenHttpRoutes(
  protection: HttpApiProtection,
  api: HttpApi,
  open: OpenHttpRoutes,
): HttpRoute[] {
  const integration = new HttpLambdaIntegration(open.id, open.function, {
    payloadFormatVersion: PayloadFormatVersion.VERSION_1_0,
  });
  const routes = open.routes.flatMap(([method, path]) =>
    api.addRoutes({ path, methods: [method], integration }),
  );
  for (const route of routes) {
    protection.exemptRoute(route, open.why);
    acknowledgeNagRules(route, [{ id: 'AwsSolutions-APIG4', reason: open.why }]);
  }
  return routes;
}
