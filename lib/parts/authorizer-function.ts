import { Duration, Stack } from 'aws-cdk-lib';
import { IdentitySource } from 'aws-cdk-lib/aws-apigateway';
import type { Function as LambdaFunction } from 'aws-cdk-lib/aws-lambda';
import type { ITopic } from 'aws-cdk-lib/aws-sns';
import type { Construct } from 'constructs';
import { identitySourcesOf } from '../../core/credentials';
import { METRIC } from '../../core/observability/metric-names';
import { accessMetric, functionErrorsOf } from './alarms';
import type { AccessPart, AlarmSpec } from './part';
import { type FunctionPartProps, partFunction } from './part-function';

export interface AuthorizerFunctionProps extends FunctionPartProps {
  /** The topic the authorizer publishes usage messages to. */
  readonly topic: ITopic;
}

/** The Lambda behind every protected method: decides from Redis, asks the platform on a key's first call. */
export class AuthorizerFunction implements AccessPart {
  public readonly alarms: readonly AlarmSpec[];
  public readonly function: LambdaFunction;
  /** The request headers API Gateway requires before it calls the authorizer (`method.request.header.*`). */
  public readonly identitySources: readonly string[];

  constructor(scope: Construct, props: AuthorizerFunctionProps) {
    this.function = partFunction(
      scope,
      'AuthorizerFunction',
      props,
      {
        bundle: 'authorizer',
        invokedByApiGateway: true,
        description: 'API access authorizer: decides from Redis, asks the platform on first calls',
        memorySize: 512,
        timeout: Duration.seconds(10),
      },
      { publishTo: props.topic, mapsCalls: true },
    );
    this.identitySources = identitySourcesOf(props.bindings.config).map((source) =>
      source.location === 'header'
        ? IdentitySource.header(source.name)
        : IdentitySource.queryString(source.name),
    );
    this.alarms = this.authorizerAlarms(props.bindings.config.metricsInstance);
  }

  /** The URI API Gateway invokes the function through, as an authorizer of an API in `scope`'s stack. */
  public invocationUri(scope: Construct): string {
    const stack = Stack.of(scope);
    return `arn:${stack.partition}:apigateway:${stack.region}:lambda:path/2015-03-31/functions/${this.function.functionArn}/invocations`;
  }

  private authorizerAlarms(instance: string | undefined): AlarmSpec[] {
    return [
      {
        id: 'AuthorizerErrors',
        description:
          'The authorizer failed (a crash, a timeout, or a start-up failure answered with a Deny): callers get 500 or 403 authorizer_error. Read its logs.',
        metric: functionErrorsOf(
          'Authorizer errors',
          this.function,
          accessMetric('authorizer', METRIC.authorizerError, instance),
        ),
        threshold: 1,
      },
      {
        id: 'PlatformUnavailable',
        description:
          'The platform did not answer a first call in time. In strict mode (the default) each one is a 403 platform_unavailable; in resilient and allow modes keys seen before are still decided from the cache. Check the platform and the NAT route to it.',
        metric: accessMetric('authorizer', METRIC.platformUnavailable, instance),
        threshold: 1,
      },
      {
        id: 'PlatformMisconfigured',
        description:
          "The platform refused our configuration on a first call (a wrong provider key or service token, service id, or a mapping rule's metric it does not have), or, with mappingRulesSource platform, no mapping rules could ever be read from the platform (no proxy configuration in the environment, a wrong admin token): every such call is a 403 platform_misconfigured. The authorizer's log names the platform's error code or the read's failure; fix the setting it names.",
        metric: accessMetric('authorizer', METRIC.platformMisconfigured, instance),
        threshold: 1,
      },
      {
        id: 'UsageNotRecorded',
        description:
          'Calls were allowed while neither Redis nor the platform could record their usage: that usage is lost to billing and limits. Check Redis and the platform.',
        metric: accessMetric('authorizer', METRIC.usageNotRecorded, instance),
        threshold: 1,
      },
    ];
  }
}
