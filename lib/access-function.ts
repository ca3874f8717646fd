import type { Duration } from 'aws-cdk-lib';
import type { ISecurityGroup, IVpc, SubnetSelection } from 'aws-cdk-lib/aws-ec2';
import {
  Architecture,
  Code,
  Function as LambdaFunction,
  LoggingFormat,
  Runtime,
  RuntimeFamily,
  SystemLogLevel,
  Tracing,
} from 'aws-cdk-lib/aws-lambda';
import { LogGroup, RetentionDays } from 'aws-cdk-lib/aws-logs';
import type { Construct } from 'constructs';
import { bundleDirectory, type LambdaBundleName, NODE_RUNTIME_NAME } from './lambda-bundles';
import { acknowledgeNagRules } from './nag-acknowledgements';

/**
 * The runtime the bundles are built for. Named rather than taken from `Runtime.NODEJS_*`, so an app on an
 * older aws-cdk-lib, which may not know the constant yet, deploys the runtime the bundles were built for.
 */
export const NODE_RUNTIME = new Runtime(NODE_RUNTIME_NAME, RuntimeFamily.NODEJS, {
  supportsInlineCode: true,
});

/** How long the project's log groups keep their logs unless a prop says otherwise. */
export const DEFAULT_LOG_RETENTION = RetentionDays.ONE_MONTH;

/** Why a Lambda that API Gateway invokes synchronously needs no dead-letter queue (Serverless-LambdaDLQ). */
const SYNCHRONOUSLY_INVOKED =
  'API Gateway invokes it synchronously, so a failure returns to the caller, not to a queue.';

/** Why X-Ray is off by default (Serverless-LambdaTracing, Serverless-APIGWXrayEnabled). */
export const TRACING_OFF_BY_DEFAULT =
  'X-Ray is off unless the tracing setting turns it on: at low traffic, tracing every call costs more than API Gateway itself.';

/** Where a function runs inside a VPC. */
export interface FunctionNetwork {
  readonly vpc: IVpc;
  readonly vpcSubnets: SubnetSelection;
  readonly securityGroups: ISecurityGroup[];
}

export interface AccessFunctionProps {
  /** The prebuilt bundle the function runs (see lib/lambda-bundles.ts). */
  readonly bundle: LambdaBundleName;
  /**
   * Exported handler name.
   * @default 'handler'
   */
  readonly handler?: string;
  readonly description: string;
  readonly timeout: Duration;
  /** @default 256 */
  readonly memorySize?: number;
  /** @default DEFAULT_LOG_RETENTION */
  readonly logRetention?: RetentionDays;
  /** @default outside any VPC */
  readonly network?: FunctionNetwork;
  /** @default no variables but NODE_OPTIONS */
  readonly environment?: Readonly<Record<string, string>>;
  /**
   * X-Ray active tracing.
   * @default false
   */
  readonly tracing?: boolean;
  /**
   * API Gateway invokes the function synchronously (an authorizer or an integration): a failure goes
   * back to the caller, so the function has no dead-letter queue.
   * @default false
   */
  readonly invokedByApiGateway?: boolean;
}

/**
 * The one place that sets this project's Lambda defaults: the runtime the bundles are built for, ARM64,
 * a log group with retention, the prebuilt minified bundle with source maps that Node applies to stack
 * traces, and X-Ray only when asked for (at low traffic, tracing every call costs more than API Gateway).
 * Logs are JSON with Lambda's system log level at WARN (its advanced logging controls): Lambda then writes
 * no START, END and REPORT lines, about 350 bytes of CloudWatch Logs an invocation, while its own metrics
 * (duration, errors, throttles) do not come from those lines and stay. The application's level is left to
 * its default (INFO): the EMF lines carry no level and read as INFO (docs/operations.md).
 */
export function accessFunction(scope: Construct, id: string, props: AccessFunctionProps): LambdaFunction {
  const logGroup = new LogGroup(scope, `${id}Logs`, {
    retention: props.logRetention ?? DEFAULT_LOG_RETENTION,
  });
  const tracing = props.tracing ?? false;
  const fn = new LambdaFunction(scope, id, {
    code: Code.fromAsset(bundleDirectory(props.bundle)),
    handler: `index.${props.handler ?? 'handler'}`,
    description: props.description,
    runtime: NODE_RUNTIME,
    architecture: Architecture.ARM_64,
    memorySize: props.memorySize ?? 256,
    timeout: props.timeout,
    ...(tracing && { tracing: Tracing.ACTIVE }),
    logGroup,
    loggingFormat: LoggingFormat.JSON,
    systemLogLevelV2: SystemLogLevel.WARN,
    environment: { NODE_OPTIONS: '--enable-source-maps', ...props.environment },
    ...props.network,
  });
  suppressFunctionRoleFindings(fn, props.network !== undefined, tracing);
  if (!tracing) {
    acknowledgeNagRules(fn, [{ id: 'Serverless-LambdaTracing', reason: TRACING_OFF_BY_DEFAULT }]);
  }
  if (props.invokedByApiGateway) {
    acknowledgeNagRules(fn, [{ id: 'Serverless-LambdaDLQ', reason: SYNCHRONOUSLY_INVOKED }]);
  }
  return fn;
}

function suppressFunctionRoleFindings(fn: LambdaFunction, inVpc: boolean, tracing: boolean): void {
  const managedPolicy = (name: string) => `Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/${name}`;
  acknowledgeNagRules(
    fn.role ?? fn,
    [
      {
        id: 'AwsSolutions-IAM4',
        reason:
          'The AWS-managed Lambda execution policies (logs, and network interfaces in a VPC) are the documented minimum for a Lambda role.',
        appliesTo: [
          managedPolicy('AWSLambdaBasicExecutionRole'),
          ...(inVpc ? [managedPolicy('AWSLambdaVPCAccessExecutionRole')] : []),
        ],
      },
      ...(tracing
        ? [
            {
              id: 'AwsSolutions-IAM5',
              reason: 'X-Ray PutTraceSegments and PutTelemetryRecords support no resource-level permissions.',
              appliesTo: ['Resource::*'],
            },
          ]
        : []),
    ],
    true,
  );
}
