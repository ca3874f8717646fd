import { CfnOutput, CfnParameter, Duration, SecretValue, Stack, type StackProps } from 'aws-cdk-lib';
import {
  AccessLogField,
  AccessLogFormat,
  EndpointType,
  LambdaIntegration,
  LogGroupLogDestination,
  MethodLoggingLevel,
  RestApi,
} from 'aws-cdk-lib/aws-apigateway';
import { HttpApi } from 'aws-cdk-lib/aws-apigatewayv2';
import { type IKey, Key } from 'aws-cdk-lib/aws-kms';
import type { Function as LambdaFunction } from 'aws-cdk-lib/aws-lambda';
import { LogGroup, type RetentionDays } from 'aws-cdk-lib/aws-logs';
import { type ISecret, Secret } from 'aws-cdk-lib/aws-secretsmanager';
import type { ITopic } from 'aws-cdk-lib/aws-sns';
import { EmailSubscription } from 'aws-cdk-lib/aws-sns-subscriptions';
import type { Construct } from 'constructs';
import { DOCS_PATH } from '../contract/docs';
import { ConfigError, ENV, emailAddress, integer, oneOf } from '../core/settings/config';
import { TOKEN_PATH } from '../lambdas/token/routes';
import { accessFunction, DEFAULT_LOG_RETENTION, TRACING_OFF_BY_DEFAULT } from './access-function';
import { ApiAccessAuthorizer, type ApiAccessAuthorizerProps } from './api-access-authorizer';
import { knownPropNames } from './api-access-authorizer-props';
import { API_TYPES, type ApiType, demoHttpApi } from './demo-http-api';
import { acknowledgeNagRules } from './nag-acknowledgements';
import { gatewayOverheadWidget } from './parts/gateway-overhead';
import { tlsOnlyTopic } from './parts/tls-only-topic';

export interface AccessManagementStackProps
  extends StackProps,
    Omit<
      ApiAccessAuthorizerProps,
      | 'platformCredential'
      | 'platformCredentialKey'
      | 'vpc'
      | 'functionSubnets'
      | 'cacheSubnets'
      | 'topic'
      | 'alertsTopic'
      | 'redis'
      | 'alarmTopic'
    > {
  /**
   * Complete ARN of an existing secret whose SecretString is the provider key (or service token).
   * @default a NoEcho `ProviderKey` parameter, stored into a new secret
   */
  readonly providerKeySecretArn?: string;
  /**
   * ARN of the customer-managed KMS key that encrypts the `providerKeySecretArn` secret.
   * @default the secret uses the AWS-managed key
   */
  readonly providerKeySecretKmsKeyArn?: string;
  /**
   * An address that gets every alarm and recovery by email (it confirms the SNS subscription first).
   * @default no notification: the alarms show in the CloudWatch console
   */
  readonly alarmEmail?: string;
  /**
   * The interactive documentation routes (`GET /docs`): on in this stack, which serves the demo API.
   * @default true
   */
  readonly docs?: boolean;
  /**
   * The demo API's type: `rest` (a RestApi) or `http` (an HttpApi on its `$default` stage; docs/http-api.md).
   * @default 'rest'
   */
  readonly apiType?: ApiType;
  /**
   * The REST API's stage; the HTTP API is served on its `$default` stage.
   * @default 'prod'
   */
  readonly stageName?: string;
  /**
   * Steady-state requests per second the stage admits.
   * @default 100
   */
  readonly throttlingRateLimit?: number;
  /**
   * Requests the stage admits in a burst.
   * @default 200
   */
  readonly throttlingBurstLimit?: number;
}

/** The construct's props among the stack's: the rest are the stack's own, and StackProps. */
function constructPropsOf(
  props: AccessManagementStackProps,
): Omit<ApiAccessAuthorizerProps, 'platformCredential'> {
  const known = new Set(knownPropNames());
  return Object.fromEntries(Object.entries(props).filter(([name]) => known.has(name))) as Omit<
    ApiAccessAuthorizerProps,
    'platformCredential'
  >;
}

/** The REST demo's stage settings, validated. */
type RestApiSettings = Pick<AccessManagementStackProps, 'stageName' | 'tracing'> & {
  readonly logRetention: RetentionDays;
  readonly throttlingRateLimit: number;
  readonly throttlingBurstLimit: number;
};

/** Partial ARNs would make IAM grants end in a wildcard; the complete ARN ends in `-` and six characters. */
const COMPLETE_SECRET_ARN = /^arn:aws[a-z-]*:secretsmanager:[a-z0-9-]+:\d{12}:secret:.+-[A-Za-z0-9]{6}$/;
/** A key, not an alias: grants name the key itself. */
const KMS_KEY_ARN = /^arn:aws[a-z-]*:kms:[a-z0-9-]+:\d{12}:key\/[A-Za-z0-9-]+$/;

/**
 * The REST access log line (exported as REST_ACCESS_LOG_FORMAT, for a provider's own stage): no headers and
 * no query string, so no credential is ever logged; `denialReason` is the authorizer's reason.
 */
export const ACCESS_LOG_FORMAT = AccessLogFormat.custom(
  JSON.stringify({
    requestId: AccessLogField.contextRequestId(),
    requestTime: AccessLogField.contextRequestTime(),
    sourceIp: AccessLogField.contextIdentitySourceIp(),
    httpMethod: AccessLogField.contextHttpMethod(),
    resourcePath: AccessLogField.contextResourcePath(),
    path: AccessLogField.contextPath(),
    status: AccessLogField.contextStatus(),
    responseLength: AccessLogField.contextResponseLength(),
    responseLatency: AccessLogField.contextResponseLatency(),
    integrationLatency: AccessLogField.contextIntegrationLatency(),
    authorizerStatus: AccessLogField.contextAuthorizerStatus(),
    authorizerLatency: AccessLogField.contextAuthorizerLatency(),
    authorizerIntegrationLatency: AccessLogField.contextAuthorizerIntegrationLatency(),
    authorizerError: AccessLogField.contextAuthorizerError(),
    principalId: AccessLogField.contextAuthorizerPrincipalId(),
    denialReason: AccessLogField.contextAuthorizer('reason'),
  }),
);

/**
 * The deployable product: an API Gateway REST API with the echo demo backend, every method behind the
 * ApiAccessAuthorizer (authorizer, Redis, usage topic and queue, reporter and sweep).
 */
export class AccessManagementStack extends Stack {
  public readonly access: ApiAccessAuthorizer;
  /** The demo API: a RestApi, or an HttpApi with `apiType: 'http'`. */
  public readonly api: RestApi | HttpApi;

  constructor(scope: Construct, id: string, props: AccessManagementStackProps) {
    super(scope, id, {
      description:
        'API access management at the edge of API Gateway: authorizer, Redis cache, usage reporting',
      ...props,
    });
    const throttlingRateLimit = integer('throttlingRateLimit', props.throttlingRateLimit ?? 100, 1, 10_000);
    const throttlingBurstLimit = integer('throttlingBurstLimit', props.throttlingBurstLimit ?? 200, 0, 5_000);
    const logRetention = props.logRetention ?? DEFAULT_LOG_RETENTION;

    const platformCredential = this.platformCredential(props.providerKeySecretArn);
    const docs = props.docs ?? true;
    this.access = new ApiAccessAuthorizer(this, 'Access', {
      ...constructPropsOf(props),
      docs,
      platformCredential,
      platformCredentialKey: this.platformCredentialKey(props),
      alarmTopic: this.alarmTopic(props.alarmEmail),
    });

    const tracing = props.tracing ?? false;
    const echo = this.echoFunction(logRetention, tracing);
    const apiType = oneOf('apiType', props.apiType ?? 'rest', API_TYPES);
    const api =
      apiType === 'http'
        ? demoHttpApi(this, {
            echo,
            logRetention,
            throttlingRateLimit,
            throttlingBurstLimit,
            stageName: props.stageName,
          })
        : this.restApi(echo, { ...props, logRetention, throttlingRateLimit, throttlingBurstLimit });
    this.api = api;
    if (api instanceof HttpApi) this.access.protect(api);
    else this.access.protect(api);
    // Both APIs log to the stack's `ApiAccessLogs` group: the dashboard reads the gateway's overhead there.
    const accessLogs = this.node.findChild('ApiAccessLogs') as LogGroup;
    this.access.dashboard?.addWidgets(gatewayOverheadWidget(apiType, accessLogs.logGroupName));
    // The $default stage serves an HttpApi at its endpoint's root.
    const urlFor = (path: string) =>
      api instanceof HttpApi ? `${api.apiEndpoint}${path}` : api.urlForPath(path);

    new CfnOutput(this, 'ApiUrl', { value: urlFor('/'), description: 'Base URL of the protected API' });
    if (docs) {
      new CfnOutput(this, 'DocsUrl', {
        value: urlFor(DOCS_PATH),
        description: 'Interactive documentation of the API (Swagger UI; the document is docs/swagger.json)',
      });
    }
    if (this.access.tokenFunction) {
      new CfnOutput(this, 'TokenUrl', {
        value: urlFor(TOKEN_PATH),
        description: 'OAuth 2.0 token endpoint (client credentials) of the built-in issuer',
      });
    }
    new CfnOutput(this, 'UsageTopicArn', {
      value: this.access.topic.topicArn,
      description: 'Topic of usage messages',
    });
    if (this.access.alertsTopic) {
      new CfnOutput(this, 'AlertsTopicArn', {
        value: this.access.alertsTopic.topicArn,
        description: 'Topic of usage alerts (subscribe with a filter policy on level, metric or period)',
      });
    }
    if (this.access.dashboard) {
      new CfnOutput(this, 'DashboardUrl', {
        value: `https://console.aws.amazon.com/cloudwatch/home?region=${this.region}#dashboards:name=${this.access.dashboard.dashboardName}`,
        description:
          "CloudWatch dashboard: calls allowed and denied, and usage alerts, per metric; the gateway's overhead per route",
      });
    }
    new CfnOutput(this, 'RedisEndpoint', {
      value: `${this.access.redisEndpoint.host}:${this.access.redisEndpoint.port}`,
      description:
        'Endpoint of the Redis cache (TLS, AUTH): the primary, or the configuration endpoint of a cluster',
    });
    new CfnOutput(this, 'PlatformCredentialSecretArn', {
      value: platformCredential.secretArn,
      description: 'Secret holding the provider key or service token',
    });
  }

  private platformCredentialKey(props: AccessManagementStackProps): IKey | undefined {
    const arn = props.providerKeySecretKmsKeyArn;
    if (arn === undefined) return undefined;
    if (props.providerKeySecretArn === undefined) {
      throw new ConfigError(
        'providerKeySecretKmsKeyArn',
        'applies to the secret given by providerKeySecretArn; the secret this stack creates uses the AWS-managed key',
      );
    }
    if (!KMS_KEY_ARN.test(arn)) {
      throw new ConfigError(
        'providerKeySecretKmsKeyArn',
        `must be a KMS key ARN (arn:aws:kms:<region>:<account>:key/<id>, not an alias; got ${arn})`,
      );
    }
    return Key.fromKeyArn(this, 'PlatformCredentialKey', arn);
  }

  /** A topic that mails every alarm and recovery to `email`, when one is given. */
  private alarmTopic(email: string | undefined): ITopic | undefined {
    if (email === undefined) return undefined;
    const topic = tlsOnlyTopic(this, 'AlarmTopic', { displayName: 'API access management alarms' });
    const subscription = topic.addSubscription(new EmailSubscription(emailAddress('alarmEmail', email)));
    acknowledgeNagRules(subscription, [
      {
        id: 'Serverless-SNSRedrivePolicy',
        reason:
          "An alarm notification has nothing to replay: the alarm's state and history stay in CloudWatch when an email cannot be delivered.",
      },
    ]);
    return topic;
  }

  /** The provider key's secret: an existing one by ARN, or one filled from a NoEcho parameter. */
  private platformCredential(providerKeySecretArn: string | undefined): ISecret {
    if (providerKeySecretArn !== undefined) {
      if (!COMPLETE_SECRET_ARN.test(providerKeySecretArn)) {
        throw new ConfigError(
          'providerKeySecretArn',
          `must be a complete Secrets Manager secret ARN, ending in the 6-character suffix (got ${providerKeySecretArn})`,
        );
      }
      return Secret.fromSecretCompleteArn(this, 'PlatformCredential', providerKeySecretArn);
    }
    const providerKey = new CfnParameter(this, 'ProviderKey', {
      type: 'String',
      noEcho: true,
      minLength: 1,
      description:
        'Platform provider key (or service token with -c platformAuthKind=service_token); stored in Secrets Manager',
    });
    const secret = new Secret(this, 'PlatformCredential', {
      description: 'Platform provider key or service token of the API access authorizer',
      secretStringValue: SecretValue.cfnParameter(providerKey),
    });
    acknowledgeNagRules(secret, [
      {
        id: 'AwsSolutions-SMG4',
        reason:
          'The platform issues and changes the provider key; the provider updates this secret when it does.',
      },
    ]);
    return secret;
  }

  /** The demo backend: answers the request as JSON (lambdas/echo). */
  private echoFunction(logRetention: RetentionDays, tracing: boolean): LambdaFunction {
    return accessFunction(this, 'EchoFunction', {
      tracing,
      bundle: 'echo',
      invokedByApiGateway: true,
      description: 'Demo backend: echoes the request as JSON',
      timeout: Duration.seconds(5),
      logRetention,
      environment: {
        [ENV.credentialHeader]: this.access.config.credentialHeader,
        [ENV.appKeyHeader]: this.access.config.appKeyHeader,
      },
    });
  }

  /**
   * The echo API as a RestApi: GET /v1/words/{word} (consumers call /v1/words/hello.json: API Gateway path
   * parameters are whole segments), ANY / and ANY /{proxy+} for every other path.
   */
  private restApi(echoFunction: LambdaFunction, settings: RestApiSettings): RestApi {
    const api = new RestApi(this, 'Api', {
      description: 'Demo echo API protected by the API access authorizer',
      endpointTypes: [EndpointType.REGIONAL],
      // Execution logging needs the account-level CloudWatch role; CDK keeps it on destroy.
      cloudWatchRole: true,
      deployOptions: {
        stageName: settings.stageName ?? 'prod',
        accessLogDestination: new LogGroupLogDestination(
          new LogGroup(this, 'ApiAccessLogs', { retention: settings.logRetention }),
        ),
        accessLogFormat: ACCESS_LOG_FORMAT,
        loggingLevel: MethodLoggingLevel.ERROR,
        dataTraceEnabled: false,
        tracingEnabled: settings.tracing ?? false,
        throttlingRateLimit: settings.throttlingRateLimit,
        throttlingBurstLimit: settings.throttlingBurstLimit,
      },
    });
    const echo = new LambdaIntegration(echoFunction);
    const requestValidator = api.addRequestValidator('RequestValidator', {
      validateRequestParameters: true,
      validateRequestBody: true,
    });
    api.root.addMethod('ANY', echo, { requestValidator });
    api.root
      .resourceForPath('/v1/words/{word}')
      .addMethod('GET', echo, { requestValidator, requestParameters: { 'method.request.path.word': true } });
    api.root
      .addResource('{proxy+}')
      .addMethod('ANY', echo, { requestValidator, requestParameters: { 'method.request.path.proxy': true } });
    if (!settings.tracing) {
      acknowledgeNagRules(api.deploymentStage, [
        { id: 'Serverless-APIGWXrayEnabled', reason: TRACING_OFF_BY_DEFAULT },
      ]);
    }
    acknowledgeNagRules(
      api,
      [
        {
          id: 'AwsSolutions-APIG3',
          reason:
            'A WAF web ACL is the provider’s choice to attach to the stage; the authorizer and stage throttling guard this API.',
        },
        {
          id: 'AwsSolutions-IAM4',
          reason:
            'The AWS-managed API Gateway logging policy is what the account-level CloudWatch role for execution logs needs.',
          appliesTo: [
            'Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AmazonAPIGatewayPushToCloudWatchLogs',
          ],
        },
      ],
      true,
    );
    return api;
  }
}
