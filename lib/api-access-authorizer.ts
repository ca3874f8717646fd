import { Annotations, AspectPriority, Aspects, Duration, type IAspect } from 'aws-cdk-lib';
import {
  AuthorizationType,
  type CfnMethod,
  IdentitySource,
  Method,
  RequestAuthorizer,
  ResponseType,
  type RestApi,
} from 'aws-cdk-lib/aws-apigateway';
import {
  FlowLogDestination,
  FlowLogTrafficType,
  type ISecurityGroup,
  type IVpc,
  Peer,
  Port,
  SecurityGroup,
  type SubnetSelection,
  SubnetType,
  Vpc,
} from 'aws-cdk-lib/aws-ec2';
import { CfnParameterGroup, CfnReplicationGroup, CfnSubnetGroup } from 'aws-cdk-lib/aws-elasticache';
import { Rule, Schedule } from 'aws-cdk-lib/aws-events';
import { LambdaFunction } from 'aws-cdk-lib/aws-events-targets';
import { SqsEventSource } from 'aws-cdk-lib/aws-lambda-event-sources';
import type { NodejsFunction } from 'aws-cdk-lib/aws-lambda-nodejs';
import { LogGroup, type RetentionDays } from 'aws-cdk-lib/aws-logs';
import { type ISecret, Secret } from 'aws-cdk-lib/aws-secretsmanager';
import { type ITopic, Topic } from 'aws-cdk-lib/aws-sns';
import { SqsSubscription } from 'aws-cdk-lib/aws-sns-subscriptions';
import { Queue, QueueEncryption } from 'aws-cdk-lib/aws-sqs';
import { NagSuppressions } from 'cdk-nag';
import { Construct, type IConstruct } from 'constructs';
import {
  type AccessConfig,
  ConfigError,
  type CredentialMode,
  configToEnv,
  DEFAULTS,
  type FailureMode,
  integer,
  type LimitMode,
  type MappingRule,
  nonEmpty,
  type PlatformAuthKind,
  parseConfig,
} from '../lambdas/core/config';
import { identitySourceHeaders } from '../lambdas/core/credentials';
import { accessFunction, DEFAULT_LOG_RETENTION, SYNCHRONOUSLY_INVOKED } from './access-function';
import { accessGatewayResponses, isProtectedMethod } from './access-gateway-responses';

/** A Redis the provider already runs, used instead of the replication group this construct would create. */
export interface ExistingRedisEndpoint {
  /** Primary endpoint host name. */
  readonly host: string;
  /** @default 6379 */
  readonly port?: number;
  /**
   * Whether the endpoint requires TLS.
   * @default true
   */
  readonly tls?: boolean;
  /**
   * Secret whose SecretString is the AUTH token.
   * @default no AUTH
   */
  readonly authSecret?: ISecret;
  /** The endpoint's security group: the construct admits the access Lambdas' security group on the port. */
  readonly securityGroup: ISecurityGroup;
}

export interface ApiAccessAuthorizerProps {
  /** The platform's service id. */
  readonly serviceId: string;
  /** Secret whose SecretString is the provider key (or the service token, see `platformAuthKind`). */
  readonly platformCredential: ISecret;
  /**
   * What `platformCredential` holds.
   * @default 'provider_key'
   */
  readonly platformAuthKind?: PlatformAuthKind;
  /**
   * Base URL of the platform's Service Management API.
   * @default DEFAULT_PLATFORM_URL (the hosted platform)
   */
  readonly platformUrl?: string;
  /**
   * `user_key`: consumers send the `apikey` header; `app_id`: consumers send `app_id` and `app_key` headers.
   * @default 'user_key'
   */
  readonly credentialMode?: CredentialMode;
  /**
   * Which calls count on which metric.
   * @default none: every call counts 1 hit
   */
  readonly mappingRules?: readonly MappingRule[];
  /**
   * What happens while the platform is unreachable: `strict`, `resilient` or `allow`.
   * @default 'strict'
   */
  readonly failureMode?: FailureMode;
  /**
   * `hard` refuses calls over a limit; `soft` lets them through and counts them.
   * @default 'hard'
   */
  readonly limitMode?: LimitMode;
  /**
   * At most one usage message per credential per window; also the queue's delivery delay. Zero reports every call.
   * @default Duration.seconds(10)
   */
  readonly reportWindow?: Duration;
  /**
   * How long an unknown or invalid credential stays refused from the cache.
   * @default Duration.seconds(60)
   */
  readonly negativeCacheTtl?: Duration;
  /**
   * The VPC for the Lambdas and the cache. Needs private subnets with egress to reach the platform.
   * @default a new VPC: two AZs, public subnets with NAT gateways, private subnets for the Lambdas,
   * isolated subnets for Redis
   */
  readonly vpc?: IVpc;
  /**
   * Subnets of the authorizer and reporter Lambdas.
   * @default the VPC's private subnets with egress
   */
  readonly functionSubnets?: SubnetSelection;
  /**
   * Subnets of the Redis replication group.
   * @default the VPC's isolated subnets, or the function subnets when it has none
   */
  readonly cacheSubnets?: SubnetSelection;
  /**
   * The topic usage messages go through.
   * @default a new topic that accepts only TLS publishers
   */
  readonly topic?: ITopic;
  /**
   * An existing Redis instead of a new replication group. Requires `vpc`.
   * @default a new ElastiCache Redis replication group
   */
  readonly redis?: ExistingRedisEndpoint;
  /**
   * A primary and one replica in another AZ with automatic failover, and one NAT gateway per AZ in a new VPC;
   * `false` is a single-node development setup with one NAT gateway.
   * @default true
   */
  readonly multiAz?: boolean;
  /**
   * Node type of a new Redis.
   * @default 'cache.t4g.micro'
   */
  readonly cacheNodeType?: string;
  /**
   * When the sweep flushes usage whose message was lost.
   * @default every minute
   */
  readonly sweepSchedule?: Schedule;
  /** @default DEFAULT_LOG_RETENTION (one month) */
  readonly logRetention?: RetentionDays;
}

export interface ProtectOptions {
  /**
   * Add JSON gateway responses: 401 with a fixed message, 403 with the authorizer's reason, 500 when the
   * authorizer fails. Turn off when the API already defines responses of these types.
   * @default true
   */
  readonly gatewayResponses?: boolean;
}

/** Where the Lambdas reach Redis. */
export interface RedisEndpoint {
  readonly host: string;
  readonly port: number;
  readonly tls: boolean;
}

/** What one function may use; its environment names exactly these and it is granted exactly these. */
interface FunctionBindings {
  /** The topic the function publishes usage messages to. */
  readonly publishTo?: ITopic;
}

/** The specification's cache port. */
const REDIS_PORT = DEFAULTS.redisPort;
const REPORTER_TIMEOUT = Duration.seconds(60);
const REPORTER_BATCHING_WINDOW = Duration.seconds(5);
const MAX_RECEIVE_COUNT = 5;

function wholeSeconds(setting: string, duration: Duration | undefined): number | undefined {
  if (duration === undefined) return undefined;
  try {
    return duration.toSeconds();
  } catch {
    throw new ConfigError(setting, `must be a whole number of seconds (got ${duration.toHumanString()})`);
  }
}

function validateProps(props: ApiAccessAuthorizerProps): void {
  if (props.redis) {
    if (!props.vpc) throw new ConfigError('redis', 'needs the vpc it is reachable in (set the vpc prop too)');
    nonEmpty('redis.host', props.redis.host);
    integer('redis.port', props.redis.port ?? REDIS_PORT, 1, 65535);
    if (
      props.multiAz !== undefined ||
      props.cacheNodeType !== undefined ||
      props.cacheSubnets !== undefined
    ) {
      throw new ConfigError(
        'redis',
        'is given, so multiAz, cacheNodeType and cacheSubnets (new-Redis settings) must not be',
      );
    }
  }
}

function identitySources(config: AccessConfig): string[] {
  return identitySourceHeaders(config).map((name) => IdentitySource.header(name));
}

function platformPort(platformUrl: string): number {
  const url = new URL(platformUrl);
  if (url.port !== '') return Number(url.port);
  return url.protocol === 'https:' ? 443 : 80;
}

/**
 * Usage-based access management for API Gateway REST APIs: a Lambda REQUEST authorizer that decides from a
 * Redis cache and asks the platform on a key's first call, an SNS topic and SQS queue that carry usage to a
 * reporter Lambda, and a scheduled sweep that reports usage whose message was lost.
 *
 * Call `protect(api)` to put every method of a RestApi behind the authorizer.
 */
export class ApiAccessAuthorizer extends Construct {
  /** The validated settings; secret ARNs, Redis and topic are added to each function's environment. */
  public readonly config: AccessConfig;
  /** The REQUEST authorizer (result cache TTL 0: the authorizer caches in Redis itself). */
  public readonly authorizer: RequestAuthorizer;
  public readonly authorizerFunction: NodejsFunction;
  public readonly reporterFunction: NodejsFunction;
  public readonly sweepFunction: NodejsFunction;
  public readonly vpc: IVpc;
  /** The Lambdas' security group; the only one Redis admits. */
  public readonly functionSecurityGroup: SecurityGroup;
  public readonly redisEndpoint: RedisEndpoint;
  /** The AUTH token of Redis, when it has one. */
  public readonly redisAuthSecret?: ISecret;
  public readonly topic: ITopic;
  /** Usage messages, delayed by the report window. */
  public readonly queue: Queue;
  /** Usage messages the reporter failed on `MAX_RECEIVE_COUNT` times, and messages SNS could not deliver. */
  public readonly deadLetterQueue: Queue;
  private readonly platformCredential: ISecret;
  private protectedApi?: RestApi;

  constructor(scope: Construct, id: string, props: ApiAccessAuthorizerProps) {
    super(scope, id);
    validateProps(props);
    this.config = parseConfig({
      serviceId: props.serviceId,
      platformUrl: props.platformUrl,
      platformAuthKind: props.platformAuthKind,
      credentialMode: props.credentialMode,
      mappingRules: props.mappingRules,
      failureMode: props.failureMode,
      limitMode: props.limitMode,
      reportWindowSeconds: wholeSeconds('reportWindow', props.reportWindow),
      negativeCacheTtlSeconds: wholeSeconds('negativeCacheTtl', props.negativeCacheTtl),
    });
    this.platformCredential = props.platformCredential;
    const multiAz = props.multiAz ?? true;
    const logRetention = props.logRetention ?? DEFAULT_LOG_RETENTION;

    this.vpc = props.vpc ?? this.createVpc(multiAz, logRetention);
    const functionSubnets = props.functionSubnets ?? { subnetType: SubnetType.PRIVATE_WITH_EGRESS };
    this.functionSecurityGroup = this.createFunctionSecurityGroup();

    if (props.redis) {
      this.redisEndpoint = {
        host: props.redis.host,
        port: props.redis.port ?? REDIS_PORT,
        tls: props.redis.tls ?? true,
      };
      this.redisAuthSecret = props.redis.authSecret;
      this.admitFunctionsTo(props.redis.securityGroup, this.redisEndpoint.port);
    } else {
      const cacheSubnets =
        props.cacheSubnets ??
        (this.vpc.isolatedSubnets.length > 0 ? { subnetType: SubnetType.PRIVATE_ISOLATED } : functionSubnets);
      const redis = this.createRedis(multiAz, props.cacheNodeType ?? 'cache.t4g.micro', cacheSubnets);
      this.redisEndpoint = redis.endpoint;
      this.redisAuthSecret = redis.authSecret;
    }

    this.topic =
      props.topic ?? new Topic(this, 'UsageTopic', { displayName: 'API usage to report', enforceSSL: true });
    this.deadLetterQueue = new Queue(this, 'UsageDeadLetterQueue', {
      retentionPeriod: Duration.days(14),
      encryption: QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
    });
    NagSuppressions.addResourceSuppressions(this.deadLetterQueue, [
      { id: 'Serverless-SQSRedrivePolicy', reason: 'This is the dead-letter queue; it has no further one.' },
    ]);
    this.queue = new Queue(this, 'UsageQueue', {
      deliveryDelay: Duration.seconds(this.config.reportWindowSeconds),
      visibilityTimeout: Duration.seconds(
        6 * REPORTER_TIMEOUT.toSeconds() + REPORTER_BATCHING_WINDOW.toSeconds(),
      ),
      deadLetterQueue: { queue: this.deadLetterQueue, maxReceiveCount: MAX_RECEIVE_COUNT },
      encryption: QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
    });
    // Raw delivery: the reporter parses the SQS body as the message the authorizer published.
    this.topic.addSubscription(
      new SqsSubscription(this.queue, { rawMessageDelivery: true, deadLetterQueue: this.deadLetterQueue }),
    );

    const network = {
      vpc: this.vpc,
      vpcSubnets: functionSubnets,
      securityGroups: [this.functionSecurityGroup],
    };
    this.authorizerFunction = accessFunction(this, 'AuthorizerFunction', {
      entry: 'lambdas/authorizer/index.ts',
      description: 'API access authorizer: decides from Redis, asks the platform on first calls',
      memorySize: 512,
      timeout: Duration.seconds(10),
      network,
      logRetention,
    });
    this.bindAccessConfig(this.authorizerFunction, { publishTo: this.topic });

    this.reporterFunction = accessFunction(this, 'ReporterFunction', {
      entry: 'lambdas/reporter/index.ts',
      description: 'API usage reporter: reports pending usage to the platform and resyncs the cache',
      timeout: REPORTER_TIMEOUT,
      network,
      logRetention,
    });
    this.bindAccessConfig(this.reporterFunction, {});
    this.reporterFunction.addEventSource(
      new SqsEventSource(this.queue, {
        batchSize: 100,
        maxBatchingWindow: REPORTER_BATCHING_WINDOW,
        reportBatchItemFailures: true,
      }),
    );

    this.sweepFunction = accessFunction(this, 'SweepFunction', {
      entry: 'lambdas/reporter/index.ts',
      handler: 'sweepHandler',
      description: 'API usage sweep: reports pending usage whose message was lost',
      timeout: Duration.seconds(50),
      network,
      logRetention,
    });
    this.bindAccessConfig(this.sweepFunction, {});
    const sweepSchedule = new Rule(this, 'SweepSchedule', {
      description: 'Flushes pending API usage whose report message was lost',
      schedule: props.sweepSchedule ?? Schedule.rate(Duration.minutes(1)),
      targets: [new LambdaFunction(this.sweepFunction)],
    });

    this.authorizer = new RequestAuthorizer(this, 'RequestAuthorizer', {
      handler: this.authorizerFunction,
      identitySources: identitySources(this.config),
      resultsCacheTtl: Duration.seconds(0),
    });
    this.suppressServerlessFindings(sweepSchedule);
  }

  /**
   * Puts every method of `api` behind the authorizer, OPTIONS (CORS preflight) excepted. An Aspect does the
   * attaching at synthesis, so methods added after this call are covered too. A method that already uses
   * another authorization type fails synthesis rather than being silently changed.
   */
  public protect(api: RestApi, options: ProtectOptions = {}): void {
    if (this.protectedApi === api) return;
    if (this.protectedApi) {
      throw new Error(
        `${this.node.path} already protects ${this.protectedApi.node.path}: one ApiAccessAuthorizer protects one RestApi`,
      );
    }
    this.protectedApi = api;
    // Methods get the authorizer after they were created, so the API is not attached by a method's props.
    this.authorizer._attachToApi(api);
    // API Gateway serves a changed authorizer setup only after a new deployment.
    api.latestDeployment?.addToLogicalId({ apiAccessAuthorizer: identitySources(this.config) });
    Aspects.of(api).add(new ProtectEveryMethod(this.authorizer, api), { priority: AspectPriority.MUTATING });
    if (options.gatewayResponses ?? true) {
      for (const response of accessGatewayResponses(this.config)) {
        api.addGatewayResponse(`AccessResponse${response.type}`, {
          type: ResponseType.of(response.type),
          statusCode: String(response.statusCode),
          templates: { 'application/json': response.template },
        });
      }
    }
  }

  /** Writes the function's environment from the configuration and grants exactly what it names. */
  private bindAccessConfig(fn: NodejsFunction, bindings: FunctionBindings): void {
    const environment = configToEnv({
      ...this.config,
      platformCredentialSecretArn: this.platformCredential.secretArn,
      redis: { ...this.redisEndpoint, authSecretArn: this.redisAuthSecret?.secretArn },
      topicArn: bindings.publishTo?.topicArn,
    });
    for (const [name, value] of Object.entries(environment)) fn.addEnvironment(name, value);
    this.platformCredential.grantRead(fn);
    this.redisAuthSecret?.grantRead(fn);
    bindings.publishTo?.grantPublish(fn);
  }

  private createVpc(multiAz: boolean, logRetention: RetentionDays): Vpc {
    // NAT, not interface endpoints: the platform is on the internet, so egress needs NAT anyway, and SNS and
    // Secrets Manager through it cost nothing extra, where two endpoints in two AZs would cost every hour.
    const vpc = new Vpc(this, 'Vpc', {
      maxAzs: 2,
      natGateways: multiAz ? 2 : 1,
      subnetConfiguration: [
        { name: 'public', subnetType: SubnetType.PUBLIC, cidrMask: 24 },
        { name: 'functions', subnetType: SubnetType.PRIVATE_WITH_EGRESS, cidrMask: 24 },
        { name: 'cache', subnetType: SubnetType.PRIVATE_ISOLATED, cidrMask: 24 },
      ],
    });
    // Rejected traffic only: it shows blocked connections without paying to log every accepted packet.
    vpc.addFlowLog('RejectedTraffic', {
      destination: FlowLogDestination.toCloudWatchLogs(
        new LogGroup(this, 'VpcFlowLogs', { retention: logRetention }),
      ),
      trafficType: FlowLogTrafficType.REJECT,
    });
    return vpc;
  }

  private createFunctionSecurityGroup(): SecurityGroup {
    const securityGroup = new SecurityGroup(this, 'FunctionSecurityGroup', {
      vpc: this.vpc,
      description: 'API access Lambdas: HTTPS out to the platform and AWS APIs, and Redis',
      allowAllOutbound: false,
    });
    securityGroup.addEgressRule(Peer.anyIpv4(), Port.tcp(443), 'HTTPS: platform, SNS, Secrets Manager');
    const port = platformPort(this.config.platformUrl);
    if (port !== 443) securityGroup.addEgressRule(Peer.anyIpv4(), Port.tcp(port), 'The platform');
    return securityGroup;
  }

  private admitFunctionsTo(redisSecurityGroup: ISecurityGroup, port: number): void {
    this.functionSecurityGroup.connections.allowTo(redisSecurityGroup, Port.tcp(port), 'Redis');
  }

  private createRedis(
    multiAz: boolean,
    cacheNodeType: string,
    cacheSubnets: SubnetSelection,
  ): { endpoint: RedisEndpoint; authSecret: Secret } {
    const authSecret = new Secret(this, 'RedisAuthToken', {
      description: 'AUTH token of the API access-management Redis',
      // Redis AUTH tokens are 16-128 printable characters without @, " or /: alphanumerics are always safe.
      generateSecretString: { excludePunctuation: true, passwordLength: 64 },
    });
    NagSuppressions.addResourceSuppressions(authSecret, [
      {
        id: 'AwsSolutions-SMG4',
        reason:
          'An ElastiCache AUTH token changes only through a modify call with the ROTATE strategy, which no Secrets Manager rotation function performs.',
      },
    ]);
    const securityGroup = new SecurityGroup(this, 'RedisSecurityGroup', {
      vpc: this.vpc,
      description: 'API access Redis: admits only the access Lambdas on the Redis port',
      allowAllOutbound: false,
    });
    this.admitFunctionsTo(securityGroup, REDIS_PORT);
    const subnetGroup = new CfnSubnetGroup(this, 'RedisSubnets', {
      description: 'Subnets of the API access-management Redis',
      subnetIds: this.vpc.selectSubnets(cacheSubnets).subnetIds,
    });
    // Pending and in-flight usage carry no TTL: evicting them would lose reported calls. Under memory
    // pressure only keys with a TTL (cached answers, window flags) may go, which costs a platform call.
    const parameterGroup = new CfnParameterGroup(this, 'RedisParameters', {
      cacheParameterGroupFamily: 'redis7',
      description: 'API access-management cache: never evict unreported usage',
      properties: { 'maxmemory-policy': 'volatile-lru' },
    });
    const replicationGroup = new CfnReplicationGroup(this, 'Redis', {
      replicationGroupDescription: 'API access-management cache',
      engine: 'redis',
      engineVersion: '7.1',
      cacheNodeType,
      numCacheClusters: multiAz ? 2 : 1,
      automaticFailoverEnabled: multiAz,
      multiAzEnabled: multiAz,
      port: REDIS_PORT,
      transitEncryptionEnabled: true,
      atRestEncryptionEnabled: true,
      // A dynamic reference: CloudFormation resolves the token at deploy time; the template holds only the ARN.
      authToken: authSecret.secretValue.unsafeUnwrap(),
      cacheSubnetGroupName: subnetGroup.ref,
      cacheParameterGroupName: parameterGroup.ref,
      securityGroupIds: [securityGroup.securityGroupId],
      autoMinorVersionUpgrade: true,
    });
    NagSuppressions.addResourceSuppressions(replicationGroup, [
      {
        id: 'AwsSolutions-AEC5',
        reason:
          "Port 6379 is the specification's cache port, and only the access Lambdas' security group reaches it.",
      },
    ]);
    return {
      endpoint: { host: replicationGroup.attrPrimaryEndPointAddress, port: REDIS_PORT, tls: true },
      authSecret,
    };
  }

  private suppressServerlessFindings(sweepSchedule: Rule): void {
    NagSuppressions.addResourceSuppressions(this.authorizerFunction, [
      { id: 'Serverless-LambdaDLQ', reason: SYNCHRONOUSLY_INVOKED },
    ]);
    NagSuppressions.addResourceSuppressions(
      this.reporterFunction,
      [
        {
          id: 'Serverless-LambdaDLQ',
          reason:
            "The SQS event source invokes it synchronously; the queue's redrive policy is its dead-letter queue.",
        },
        {
          id: 'Serverless-LambdaEventSourceMappingDestination',
          reason:
            "SQS event sources take no on-failure destination; the queue's redrive policy moves failures to the DLQ.",
        },
      ],
      true,
    );
    const sweepCarriesNoPayload =
      'A scheduled sweep carries no payload: the next run, a minute later, does the same work.';
    NagSuppressions.addResourceSuppressions(this.sweepFunction, [
      { id: 'Serverless-LambdaDLQ', reason: sweepCarriesNoPayload },
    ]);
    NagSuppressions.addResourceSuppressions(sweepSchedule, [
      { id: 'Serverless-EventBusDLQ', reason: sweepCarriesNoPayload },
    ]);
  }
}

/** Attaches the authorizer to every method of one RestApi, including methods added after `protect`. */
class ProtectEveryMethod implements IAspect {
  constructor(
    private readonly authorizer: RequestAuthorizer,
    private readonly api: RestApi,
  ) {}

  visit(node: IConstruct): void {
    if (!(node instanceof Method) || !isProtectedMethod(node.httpMethod)) return;
    const method = node.node.defaultChild as CfnMethod;
    if (
      method.authorizationType === AuthorizationType.CUSTOM &&
      method.authorizerId === this.authorizer.authorizerId
    ) {
      return;
    }
    if (method.authorizationType !== undefined && method.authorizationType !== AuthorizationType.NONE) {
      Annotations.of(node).addError(
        `${node.httpMethod} ${node.resource.path} already uses ${method.authorizationType} authorization; ` +
          'ApiAccessAuthorizer cannot protect it as well',
      );
      return;
    }
    method.authorizationType = AuthorizationType.CUSTOM;
    method.authorizerId = this.authorizer.authorizerId;
    this.api.latestDeployment?.addToLogicalId({
      protectedMethod: `${node.httpMethod} ${node.resource.path}`,
    });
    NagSuppressions.addResourceSuppressions(method, [
      {
        id: 'AwsSolutions-COG4',
        reason:
          'The method is protected by the ApiAccessAuthorizer Lambda REQUEST authorizer; consumers hold API keys, not Cognito users.',
      },
    ]);
  }
}
