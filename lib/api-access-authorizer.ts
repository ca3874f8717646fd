import { Annotations, Aspects, Duration, type IAspect, Stack } from 'aws-cdk-lib';
import type { IRestApi } from 'aws-cdk-lib/aws-apigateway';
import type { IHttpApi } from 'aws-cdk-lib/aws-apigatewayv2';
import type { Dashboard } from 'aws-cdk-lib/aws-cloudwatch';
import type { IVpc, SecurityGroup } from 'aws-cdk-lib/aws-ec2';
import { Schedule } from 'aws-cdk-lib/aws-events';
import type { Key } from 'aws-cdk-lib/aws-kms';
import type { Function as LambdaFunction } from 'aws-cdk-lib/aws-lambda';
import type { ISecret } from 'aws-cdk-lib/aws-secretsmanager';
import type { ITopic } from 'aws-cdk-lib/aws-sns';
import type { Queue } from 'aws-cdk-lib/aws-sqs';
import { Construct, type IConstruct } from 'constructs';
import { type AccessConfig, ConfigError } from '../core/settings/config';
import { DEFAULT_LOG_RETENTION } from './access-function';
import {
  type ApiAccessAuthorizerProps,
  configInputOf,
  shardReplicas,
  validatePropNames,
  validateResourceProps,
} from './api-access-authorizer-props';
import { AccessAlarms } from './parts/alarms';
import { UsageAlerts } from './parts/alerts';
import { AuthorizerFunction } from './parts/authorizer-function';
import { AccessBindings, type RedisEndpoint } from './parts/bindings';
import {
  type AccessCache,
  ExistingRedisCache,
  ReplicationGroupCache,
  ServerlessRedisCache,
  sharedEndpointOf,
} from './parts/cache';
import { UsageDashboard } from './parts/dashboard';
import { AccessDocs } from './parts/docs';
import {
  HttpApiProtection,
  type HttpProtectOptions,
  isHttpApi,
  refuseWebSocketApi,
} from './parts/http-api-protection';
import { AccessNetwork, VPC_AZS } from './parts/network';
import { OAuthPart, ProtectedApiIssuer, parseConfigWithIssuer, validateIssuerUrls } from './parts/oauth';
import type { AccessPart } from './parts/part';
import { PortalPart } from './parts/portal';
import { ApiProtection, type ProtectOptions } from './parts/protection';
import { requireSameOptions } from './parts/protection-common';
import { SoapProxyPart } from './parts/soap';
import { UsagePipeline } from './parts/usage-pipeline';
import { WebhooksPart } from './parts/webhooks';

export type { ApiAccessAuthorizerProps } from './api-access-authorizer-props';
export type { HttpProtectOptions } from './parts/http-api-protection';
export type { ProtectOptions } from './parts/protection';

/**
 * Usage-based access management for API Gateway REST APIs: a Lambda REQUEST authorizer that decides from a
 * Redis cache and asks the platform on a key's first call, an SNS topic and SQS queue that carry usage to a
 * reporter Lambda, a scheduled sweep that reports usage whose message was lost, and alarms on all of it.
 * It is composed of parts (lib/parts/), each building its resources in this construct's scope.
 *
 * Call `protect(api)` to put every method of a REST API behind the authorizer.
 */
export class ApiAccessAuthorizer extends Construct {
  /** The validated settings; secret ARNs, Redis and topic are added to each function's environment. */
  public readonly config: AccessConfig;
  public readonly authorizerFunction: LambdaFunction;
  public readonly reporterFunction: LambdaFunction;
  public readonly sweepFunction: LambdaFunction;
  /** The SOAP access proxy, when the `soap` prop is given. */
  public readonly soapProxyFunction?: LambdaFunction;
  /** The built-in OAuth 2.0 issuer's token function (oauth mode without `oidcJwksUrl`). */
  public readonly tokenFunction?: LambdaFunction;
  /** The KMS key the built-in issuer signs access tokens with; only `tokenFunction` may sign. */
  public readonly tokenSigningKey?: Key;
  /** The developer portal's function of each protected API, by the API's construct path (the `portal` prop). */
  public readonly portalFunctions: ReadonlyMap<string, LambdaFunction>;
  /** The platform's webhook receiver, when the `webhooks` prop is true. */
  public readonly webhooksFunction?: LambdaFunction;
  /** The shared token of the webhook URL, when the `webhooks` prop is true; only the receiver reads it. */
  public readonly webhookTokenSecret?: ISecret;
  public readonly vpc: IVpc;
  /** The Lambdas' security group; the only one Redis admits. */
  public readonly functionSecurityGroup: SecurityGroup;
  public readonly redisEndpoint: RedisEndpoint;
  /** The AUTH token of Redis, when it has one. */
  public readonly redisAuthSecret?: ISecret;
  public readonly topic: ITopic;
  /** Usage messages, delayed by the report window. */
  public readonly queue: Queue;
  /** Usage messages the reporter failed on 5 times, and messages SNS could not deliver. */
  public readonly deadLetterQueue: Queue;
  public readonly alarms: AccessAlarms;
  /** The topic of usage alerts; undefined when alerts are off (`alertLevels: []`). */
  public readonly alertsTopic?: ITopic;
  /** Calls allowed and denied, and usage alerts, per platform metric; undefined with `dashboard: false`. */
  public readonly dashboard?: Dashboard;
  private readonly parts: readonly AccessPart[];
  /** What an instance given this one as `shareNetworkAndCacheOf` uses. */
  private readonly networkAndCache: { readonly network: AccessNetwork; readonly cache: AccessCache };
  private readonly authorizerPart: AuthorizerFunction;
  private readonly protections = new Set<ApiProtection | HttpApiProtection>();

  constructor(scope: Construct, id: string, props: ApiAccessAuthorizerProps) {
    super(scope, id);
    if (!(Stack.of(this) instanceof Stack)) {
      throw new Error(
        `${this.node.path}: this app and ApiAccessAuthorizer load two different copies of aws-cdk-lib, so the construct could not see the app's methods. Install aws-cdk-lib once, at the app (it is a peer dependency): npm ls aws-cdk-lib`,
      );
    }
    validatePropNames(props);
    const issuer = new ProtectedApiIssuer();
    const parsed = parseConfigWithIssuer(configInputOf(props), issuer);
    this.config = {
      ...parsed,
      metricsInstance: metricsInstanceOf(parsed.serviceId, props.instanceName ?? topStackName(this)),
    };
    validateResourceProps(props, this.config);
    validateIssuerUrls(this.config);
    const multiAz = props.multiAz ?? true;
    const logRetention = props.logRetention ?? DEFAULT_LOG_RETENTION;
    const tracing = props.tracing ?? false;

    const shared = props.shareNetworkAndCacheOf?.networkAndCache;
    const network = new AccessNetwork(this, {
      vpc: shared?.network.vpc ?? props.vpc,
      functionSubnets: shared?.network.functionSubnets ?? props.functionSubnets,
      natGateways: props.natGateways ?? (multiAz ? VPC_AZS : 1),
      platformUrl: this.config.platformUrl,
      logRetention,
    });
    const cache = shared
      ? new ExistingRedisCache(network, sharedEndpointOf(shared.cache))
      : newOrExistingCache(this, network, props);
    this.networkAndCache = { network, cache };
    const bindings = new AccessBindings({
      config: this.config,
      platformCredential: props.platformCredential,
      platformCredentialKey: props.platformCredentialKey,
      redisEndpoint: cache.endpoint,
      redisAuthSecret: cache.authSecret,
    });
    const usage = new UsagePipeline(this, {
      bindings,
      network,
      topic: props.topic,
      sweepSchedule: props.sweepSchedule ?? Schedule.rate(Duration.minutes(1)),
      logRetention,
      tracing,
    });
    this.authorizerPart = new AuthorizerFunction(this, {
      bindings,
      network,
      topic: usage.topic,
      logRetention,
      tracing,
    });
    const alerts = UsageAlerts.of(this, {
      config: this.config,
      publishers: [usage.reporterFunction, usage.sweepFunction],
      topic: props.alertsTopic,
    });
    const dashboard =
      (props.dashboard ?? true) &&
      new UsageDashboard(this, { alerts: alerts !== undefined, instance: this.config.metricsInstance });
    const soap =
      props.soap &&
      new SoapProxyPart(this, {
        settings: props.soap,
        bindings,
        network,
        topic: usage.topic,
        logRetention,
        tracing,
      });
    const oauth =
      this.config.credentialMode === 'oauth' &&
      new OAuthPart(this, { bindings, network, issuer, logRetention, tracing });
    const webhooks = props.webhooks
      ? new WebhooksPart(this, { bindings, network, logRetention, tracing })
      : undefined;
    if (props.portal && this.config.adminApiUrl === undefined) {
      throw new Error(`${this.node.path}: the portal needs adminApiUrl, the platform's admin origin`);
    }
    const portal = props.portal
      ? new PortalPart(this, { settings: props.portal, bindings, network, logRetention, tracing })
      : undefined;
    this.parts = [
      network,
      cache,
      usage,
      this.authorizerPart,
      ...(props.docs ? [new AccessDocs({ config: this.config, logRetention, tracing })] : []),
      ...(soap ? [soap] : []),
      ...(oauth ? [oauth] : []),
      ...(webhooks ? [webhooks] : []),
      ...(portal ? [portal] : []),
      ...(alerts ? [alerts] : []),
      ...(dashboard ? [dashboard] : []),
    ];
    this.alarms = new AccessAlarms(this, 'Alarms', {
      specs: this.parts.flatMap((part) => part.alarms),
      topic: props.alarmTopic,
    });

    this.vpc = network.vpc;
    this.functionSecurityGroup = network.functionSecurityGroup;
    this.redisEndpoint = cache.endpoint;
    this.redisAuthSecret = cache.authSecret;
    this.topic = usage.topic;
    this.queue = usage.queue;
    this.deadLetterQueue = usage.deadLetterQueue;
    this.reporterFunction = usage.reporterFunction;
    this.sweepFunction = usage.sweepFunction;
    this.authorizerFunction = this.authorizerPart.function;
    this.soapProxyFunction = soap?.function;
    this.tokenFunction = oauth ? oauth.tokenFunction : undefined;
    this.tokenSigningKey = oauth ? oauth.signingKey : undefined;
    this.webhooksFunction = webhooks?.function;
    this.webhookTokenSecret = webhooks?.tokenSecret;
    this.portalFunctions = portal?.functions ?? new Map();
    this.alertsTopic = alerts?.topic;
    this.dashboard = dashboard ? dashboard.dashboard : undefined;
    Aspects.of(this).add(new WarnWhenProtectingNothing(this, this.protections));
  }

  /**
   * Puts every method of a REST API (RestApi, SpecRestApi, or one imported by id) behind the authorizer,
   * the `unprotectedMethods` excepted. An Aspect over the API's Stage does it at synthesis, so methods added
   * later, in other constructs or in nested stacks, are covered too; a method that uses another
   * authorization type fails synthesis, naming it. Protecting the same API again returns its protection.
   */
  public protect(api: IRestApi, options?: ProtectOptions): ApiProtection;
  /**
   * Puts every route of an HTTP API (HttpApi, or one imported) behind the authorizer, the
   * `unprotectedMethods` excepted: a Lambda REQUEST authorizer with payload 2.0, simple responses, no
   * identity source and no result cache. Routes added later are covered too; a route that uses another
   * authorization fails synthesis, naming it. A WebSocket API is refused (docs/http-api.md).
   */
  public protect(api: IHttpApi, options?: HttpProtectOptions): HttpApiProtection;
  public protect(
    api: IRestApi | IHttpApi,
    options: ProtectOptions | HttpProtectOptions = {},
  ): ApiProtection | HttpApiProtection {
    refuseWebSocketApi(api);
    if (isHttpApi(api)) return this.protectHttpApi(api, httpOptions(api, options));
    return this.protectRestApi(api, options);
  }

  private protectHttpApi(api: IHttpApi, options: HttpProtectOptions): HttpApiProtection {
    const existing = this.ownProtection(api, HttpApiProtection.of(api), options);
    if (existing) return existing;
    const protection = new HttpApiProtection({ api, authorizer: this.authorizerPart, options });
    this.protections.add(protection);
    for (const part of this.parts) part.onProtectHttpApi?.(protection);
    return protection;
  }

  private protectRestApi(api: IRestApi, options: ProtectOptions): ApiProtection {
    const existing = this.ownProtection(api, ApiProtection.of(api), options);
    if (existing) return existing;
    const protection = ApiProtection.create({
      api,
      authorizer: this.authorizerPart,
      config: this.config,
      options,
    });
    this.protections.add(protection);
    for (const part of this.parts) part.onProtect?.(protection);
    return protection;
  }

  /**
   * This construct's protection of `api`, if any, asked for with the same options; other options, or
   * another construct's protection, are an error.
   */
  private ownProtection<P extends ApiProtection | HttpApiProtection>(
    api: IRestApi | IHttpApi,
    existing: P | undefined,
    options: object,
  ): P | undefined {
    if (existing === undefined) return undefined;
    if (this.protections.has(existing)) {
      requireSameOptions(api, existing.options, options);
      return existing;
    }
    throw new Error(
      `${api.node.path} is already protected by another ApiAccessAuthorizer (${existing.node.path})`,
    );
  }
}

/** The name of the deployed stack `scope` is in (a nested stack's is a token until deployment). */
function topStackName(scope: Construct): string {
  let stack = Stack.of(scope);
  while (stack.nestedStackParent) stack = stack.nestedStackParent;
  return stack.stackName;
}

/**
 * The `instance` dimension of the instance's metrics: the service id and the provider's name for the
 * instance (or the stack's), so two services, or dev beside prod, in one account and Region never read
 * each other's counts.
 */
function metricsInstanceOf(serviceId: string, name: string): string {
  if (!/^[A-Za-z0-9._-]{1,100}$/.test(name)) {
    throw new ConfigError(
      'instanceName',
      `must be 1 to 100 letters, digits, dots, dashes or underscores (got ${JSON.stringify(name)})`,
    );
  }
  return `${serviceId}/${name}`;
}

/**
 * A construct that protects no API checks no call: every method stays open while the stack looks
 * protected. Not an error, as a stack may protect its APIs in a later release; a warning at synthesis.
 */
class WarnWhenProtectingNothing implements IAspect {
  constructor(
    private readonly access: Construct,
    private readonly protections: ReadonlySet<unknown>,
  ) {}

  public visit(node: IConstruct): void {
    if (node !== this.access || this.protections.size > 0) return;
    Annotations.of(node).addWarningV2(
      'apigw-access-management:protectsNothing',
      `${node.node.path} protects no API, so no call is checked, metered or limited: call protect(api) with each RestApi or HttpApi it guards.`,
    );
  }
}

/** The provider's own Redis, or a new cache: serverless, a sharded replication group, or one primary. */
function newOrExistingCache(
  scope: Construct,
  network: AccessNetwork,
  props: ApiAccessAuthorizerProps,
): AccessCache {
  if (props.redis) return new ExistingRedisCache(network, props.redis);
  const engine = props.cacheEngine ?? 'redis';
  const subnets = props.cacheSubnets ?? network.cacheSubnets;
  if (props.redisServerless) {
    return new ServerlessRedisCache(scope, { network, engine, subnets, limits: props.serverlessLimits });
  }
  return new ReplicationGroupCache(scope, {
    network,
    multiAz: props.multiAz ?? true,
    nodeType: props.cacheNodeType ?? 'cache.t4g.micro',
    engine,
    subnets,
    ...(props.redisShards !== undefined && {
      sharding: { shards: props.redisShards, replicasPerShard: shardReplicas(props) },
    }),
  });
}

/** The options of an HTTP API; the REST-only ones are refused, not ignored. */
function httpOptions(api: IHttpApi, options: ProtectOptions | HttpProtectOptions): HttpProtectOptions {
  const restOnly = (['gatewayResponses', 'cors', 'apiKeyRequired'] as const).filter(
    (option) => (options as ProtectOptions)[option] !== undefined,
  );
  if (restOnly.length > 0) {
    throw new Error(
      `${api.node.path} is an HTTP API, which has no gateway responses: ${restOnly.join(' and ')} apply to REST APIs only (an HTTP API's CORS is its own corsPreflight setting)`,
    );
  }
  return options;
}
