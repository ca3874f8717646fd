import { Duration, Lazy } from 'aws-cdk-lib';
import {
  AuthorizationType,
  type CfnStage,
  LambdaIntegration,
  type Method,
  RestApi,
} from 'aws-cdk-lib/aws-apigateway';
import { HttpApi, HttpMethod } from 'aws-cdk-lib/aws-apigatewayv2';
import type { Function as LambdaFunction } from 'aws-cdk-lib/aws-lambda';
import type { RetentionDays } from 'aws-cdk-lib/aws-logs';
import { DOCS_ENV, DOCS_PATH } from '../../contract/docs';
import { type AccessConfig, configToEnv } from '../../core/settings/config';
import { accessFunction } from '../access-function';
import { acknowledgeNagRules } from '../nag-acknowledgements';
import type { HttpApiProtection } from './http-api-protection';
import { addOpenHttpRoutes } from './http-api-routes';
import type { AccessPart, AlarmSpec } from './part';
import type { ApiProtection } from './protection';

export interface AccessDocsProps {
  /** The validated settings: the document shows the credential scheme and the metric of each operation. */
  readonly config: AccessConfig;
  readonly logRetention: RetentionDays;
  readonly tracing: boolean;
}

/** Why the documentation's methods have no authorizer (cdk-nag's APIG4 and COG4, and the template). */
const OPEN_BY_DESIGN =
  'Interactive API documentation (Swagger UI and its Swagger 2.0 document): public by design, like a developer portal; it shows routes, metrics and the credential scheme, never a credential.';

/** Where the stage serves the API's paths on its execute-api URL; '' for an API deployed elsewhere. */
export function basePathOf(api: RestApi): string {
  let stage: CfnStage;
  try {
    stage = api.deploymentStage.node.defaultChild as CfnStage;
  } catch {
    return '';
  }
  // The name as written, not the Stage's Ref: the stage depends on the methods, which depend on this function.
  return stage.stageName === undefined ? '' : `/${stage.stageName}`;
}

/**
 * The API's interactive documentation: `GET /docs` (Swagger UI from swagger-ui-dist, no CDN) and
 * `GET /docs/{file}` (its files and `swagger.json`), served by one small Lambda per protected REST or HTTP API
 * and left open (exempt from the authorizer). The function generates the Swagger 2.0 document from its
 * environment: the access settings, and the protected routes the protection found at synthesis.
 */
export class AccessDocs implements AccessPart {
  public readonly alarms: readonly AlarmSpec[] = [];
  /** The docs function of each protected API, by the API's construct path. */
  public readonly functions = new Map<string, LambdaFunction>();

  constructor(private readonly props: AccessDocsProps) {}

  public onProtect(protection: ApiProtection): void {
    const { api } = protection;
    // A SpecRestApi's methods come from its definition, and an imported API has no resources here.
    if (!(api instanceof RestApi)) return;
    if (api.root.getResource(DOCS_PATH.slice(1)) !== undefined) {
      throw new Error(
        `${api.node.path} already has a ${DOCS_PATH} resource: turn the access documentation off (docs: false) or move that resource`,
      );
    }
    const integration = new LambdaIntegration(this.docsFunction(protection, () => basePathOf(api)));
    const docs = api.root.addResource(DOCS_PATH.slice(1));
    const methods = [
      docs.addMethod('GET', integration, { authorizationType: AuthorizationType.NONE }),
      docs.addResource('{file}').addMethod('GET', integration, { authorizationType: AuthorizationType.NONE }),
    ];
    for (const method of methods) leaveOpen(protection, method, OPEN_BY_DESIGN);
  }

  /**
   * The same two routes on an HttpApi (an imported one has no routes here). The document's base path is
   * the root: the `$default` stage's, which serves the API at its endpoint's root.
   */
  public onProtectHttpApi(protection: HttpApiProtection): void {
    const { api } = protection;
    if (!(api instanceof HttpApi)) return;
    addOpenHttpRoutes(protection, api, {
      id: 'AccessDocsIntegration',
      function: this.docsFunction(protection, () => ''),
      routes: [
        [HttpMethod.GET, DOCS_PATH],
        [HttpMethod.GET, `${DOCS_PATH}/{file}`],
      ],
      why: OPEN_BY_DESIGN,
    });
  }

  /** The docs function of one protected API, with the routes the protection found at synthesis. */
  private docsFunction(
    protection: ApiProtection | HttpApiProtection,
    basePath: () => string,
  ): LambdaFunction {
    const fn = accessFunction(protection, 'DocsFunction', {
      bundle: 'docs',
      invokedByApiGateway: true,
      description: 'Interactive API documentation: Swagger UI and the Swagger 2.0 document of the API',
      memorySize: 256,
      timeout: Duration.seconds(10),
      logRetention: this.props.logRetention,
      tracing: this.props.tracing,
      environment: {
        ...configToEnv(this.props.config),
        [DOCS_ENV.routes]: Lazy.string({
          produce: () => JSON.stringify(protection.ledger.protectedRoutes()),
        }),
        [DOCS_ENV.basePath]: Lazy.string({ produce: basePath }),
      },
    });
    this.functions.set(protection.api.node.path, fn);
    return fn;
  }
}

/** A method a part serves without the authorizer, on purpose: exempt, and cdk-nag told why. */
export function leaveOpen(protection: ApiProtection, method: Method, why: string): void {
  protection.exemptMethod(method, why);
  acknowledgeNagRules(method, [
    { id: 'AwsSolutions-APIG4', reason: why },
    { id: 'AwsSolutions-COG4', reason: why },
  ]);
}
