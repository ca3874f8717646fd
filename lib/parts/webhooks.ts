import { Aws, CfnOutput, Duration, Fn } from 'aws-cdk-lib';
import { LambdaIntegration, RestApi } from 'aws-cdk-lib/aws-apigateway';
import { HttpApi, HttpMethod } from 'aws-cdk-lib/aws-apigatewayv2';
import type { Function as LambdaFunction } from 'aws-cdk-lib/aws-lambda';
import { Secret } from 'aws-cdk-lib/aws-secretsmanager';
import type { Construct } from 'constructs';
import { METRIC } from '../../core/observability/metric-names';
import { WEBHOOK_ENV, WEBHOOK_PATH } from '../../lambdas/webhooks/route';
import { acknowledgeNagRules } from '../nag-acknowledgements';
import { accessMetric, functionErrorsOf } from './alarms';
import type { HttpApiProtection } from './http-api-protection';
import { addOpenHttpRoutes } from './http-api-routes';
import type { AccessPart, AlarmSpec } from './part';
import { type FunctionPartProps, partFunction } from './part-function';
import type { ApiProtection } from './protection';

export type WebhooksPartProps = FunctionPartProps;

/** Why the receiver's route has no authorizer (the template's metadata, cdk-nag's APIG4 and COG4). */
const OPEN_BY_DESIGN =
  "Platform webhook receiver: the platform, not a consumer, calls it, with the shared token in the URL's query (3scale's webhook setting is a URL only); the receiver compares it in constant time.";

/**
 * The command that prints the URL to paste into the platform: the route's URL with the token read from
 * Secrets Manager by whoever runs it, so the token is in neither the template nor an output.
 */
function urlCommand(url: string, secretArn: string): string {
  return Fn.join('', [
    `echo "${url}?token=$(aws secretsmanager get-secret-value --region `,
    Aws.REGION,
    ' --secret-id ',
    secretArn,
    ' --query SecretString --output text)"',
  ]);
}

/**
 * The platform's webhooks: `POST /webhooks/platform?token=<shared token>` on each protected RestApi,
 * served by a receiver that refreshes the named application's budget in Redis at once (so a suspension,
 * a deleted key or a plan change applies within a second, not a report window). The function runs in the
 * VPC with the authorizer's settings and grants (Redis, the platform credential); the token is generated
 * into Secrets Manager, which only this function may read.
 */
export class WebhooksPart implements AccessPart {
  public readonly alarms: readonly AlarmSpec[];
  public readonly function: LambdaFunction;
  /** The shared token the platform's webhook URL carries. */
  public readonly tokenSecret: Secret;

  constructor(scope: Construct, props: WebhooksPartProps) {
    this.tokenSecret = new Secret(scope, 'WebhookToken', {
      description: 'Shared token of the platform webhook URL of the API access authorizer',
      // It travels in a URL's query: alphanumerics need no escaping. 48 of them are 285 bits.
      generateSecretString: { excludePunctuation: true, passwordLength: 48 },
    });
    acknowledgeNagRules(this.tokenSecret, [
      {
        id: 'AwsSolutions-SMG4',
        reason:
          "A new token only works once it is pasted into the platform's webhook URL, which no rotation function can do; docs/platform-changes.md says how to change it by hand.",
      },
    ]);
    this.function = partFunction(scope, 'WebhooksFunction', props, {
      bundle: 'webhooks',
      invokedByApiGateway: true,
      description: "Platform webhook receiver: refreshes the changed application's budget in Redis",
      // More memory is more CPU: webhooks are rare, so most of them meet a cold start.
      memorySize: 512,
      timeout: Duration.seconds(10),
      environment: { [WEBHOOK_ENV.tokenSecretArn]: this.tokenSecret.secretArn },
    });
    this.tokenSecret.grantRead(this.function);
    this.alarms = [
      {
        id: 'WebhookErrors',
        description:
          'The webhook receiver failed (a crash, a timeout, a start-up failure, or a refresh the platform or Redis did not take): the platform sends the webhook again, and the change applies within a report window anyway. Read its logs.',
        metric: functionErrorsOf(
          'Webhook errors',
          this.function,
          accessMetric('webhooks', METRIC.webhookFailed, props.bindings.config.metricsInstance),
        ),
        threshold: 1,
      },
    ];
  }

  /** Adds `POST /webhooks/platform` to a RestApi, left open by the authorizer, and outputs its URL. */
  public onProtect(protection: ApiProtection): void {
    const { api } = protection;
    if (!(api instanceof RestApi)) {
      throw new Error(
        `${api.node.path}: the webhook route is added to a RestApi only; add POST ${WEBHOOK_PATH} with a LambdaIntegration of the webhooks function to this API yourself`,
      );
    }
    const method = api.root
      .resourceForPath(WEBHOOK_PATH)
      .addMethod('POST', new LambdaIntegration(this.function));
    protection.exemptMethod(method, OPEN_BY_DESIGN);
    acknowledgeNagRules(method, [
      { id: 'AwsSolutions-APIG4', reason: OPEN_BY_DESIGN },
      { id: 'AwsSolutions-COG4', reason: `${OPEN_BY_DESIGN} The platform holds no Cognito user.` },
    ]);
    // An API deployed by its own stages has no URL here; its webhook URL is the path on the stage.
    if (api.latestDeployment === undefined) return;
    this.outputUrl(protection, api.urlForPath(WEBHOOK_PATH));
  }

  /** Adds `POST /webhooks/platform` to an HttpApi, left open by the authorizer, and outputs its URL. */
  public onProtectHttpApi(protection: HttpApiProtection): void {
    const { api } = protection;
    if (!(api instanceof HttpApi)) {
      throw new Error(
        `${api.node.path}: the webhook route is added to an HttpApi only; add POST ${WEBHOOK_PATH} with an HttpLambdaIntegration (payload 1.0) of the webhooks function to this API yourself`,
      );
    }
    addOpenHttpRoutes(protection, api, {
      id: 'WebhooksIntegration',
      function: this.function,
      routes: [[HttpMethod.POST, WEBHOOK_PATH]],
      why: OPEN_BY_DESIGN,
    });
    // Only the $default stage serves the API at its endpoint's root; another stage's URL is the provider's.
    if (api.defaultStage !== undefined) this.outputUrl(protection, `${api.apiEndpoint}${WEBHOOK_PATH}`);
  }

  /** The route's URL, and the command that prints it with the token, as outputs of the protection. */
  private outputUrl(protection: Construct, url: string): void {
    new CfnOutput(protection, 'WebhookUrl', {
      value: url,
      description: `Paste into the platform's webhook URL with ?token=<the SecretString of ${this.tokenSecret.node.path}>; WebhookUrlCommand prints it whole`,
    });
    new CfnOutput(protection, 'WebhookUrlCommand', {
      value: urlCommand(url, this.tokenSecret.secretArn),
      description:
        "Prints the whole webhook URL, token included, for the platform's webhook setting (needs secretsmanager:GetSecretValue on the token)",
    });
  }
}
