import * as path from 'node:path';
import type { Duration } from 'aws-cdk-lib';
import type { ISecurityGroup, IVpc, SubnetSelection } from 'aws-cdk-lib/aws-ec2';
import { Architecture, Runtime, Tracing } from 'aws-cdk-lib/aws-lambda';
import { NodejsFunction, OutputFormat } from 'aws-cdk-lib/aws-lambda-nodejs';
import { LogGroup, RetentionDays } from 'aws-cdk-lib/aws-logs';
import { NagSuppressions } from 'cdk-nag';
import type { Construct } from 'constructs';

/** The project root: entries, the lock file and tsconfig.json are found from here, whatever the cwd. */
export const PROJECT_ROOT = path.resolve(__dirname, '..');

/** The newest Node.js runtime of the installed aws-cdk-lib; a test fails when a newer one appears. */
export const NODE_RUNTIME = Runtime.NODEJS_24_X;

/** How long the project's log groups keep their logs unless a prop says otherwise. */
export const DEFAULT_LOG_RETENTION = RetentionDays.ONE_MONTH;

/** Why a Lambda that API Gateway invokes synchronously needs no dead-letter queue (Serverless-LambdaDLQ). */
export const SYNCHRONOUSLY_INVOKED =
  'API Gateway invokes it synchronously, so a failure returns to the caller, not to a queue.';

/** Where a function runs inside a VPC. */
export interface FunctionNetwork {
  readonly vpc: IVpc;
  readonly vpcSubnets: SubnetSelection;
  readonly securityGroups: ISecurityGroup[];
}

export interface AccessFunctionProps {
  /** Handler source file, relative to the project root (for example `lambdas/echo/index.ts`). */
  readonly entry: string;
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
}

/**
 * The one place that sets this project's Lambda defaults: newest Node.js runtime, ARM64, active tracing,
 * a log group with retention, a minified esbuild bundle with source maps that Node applies to stack traces.
 * The AWS SDK v3 comes from the Node.js runtime rather than the bundle: it keeps the authorizer's bundle
 * under 300 KB and its cold start short (see the README's Performance section).
 */
export function accessFunction(scope: Construct, id: string, props: AccessFunctionProps): NodejsFunction {
  const logGroup = new LogGroup(scope, `${id}Logs`, {
    retention: props.logRetention ?? DEFAULT_LOG_RETENTION,
  });
  const fn = new NodejsFunction(scope, id, {
    entry: path.join(PROJECT_ROOT, props.entry),
    handler: props.handler ?? 'handler',
    description: props.description,
    runtime: NODE_RUNTIME,
    architecture: Architecture.ARM_64,
    memorySize: props.memorySize ?? 256,
    timeout: props.timeout,
    tracing: Tracing.ACTIVE,
    logGroup,
    projectRoot: PROJECT_ROOT,
    depsLockFilePath: path.join(PROJECT_ROOT, 'package-lock.json'),
    environment: { NODE_OPTIONS: '--enable-source-maps', ...props.environment },
    bundling: {
      format: OutputFormat.CJS,
      minify: true,
      sourceMap: true,
      sourcesContent: false,
      externalModules: ['@aws-sdk/*'],
    },
    ...props.network,
  });
  suppressFunctionRoleFindings(fn, props.network !== undefined);
  return fn;
}

function suppressFunctionRoleFindings(fn: NodejsFunction, inVpc: boolean): void {
  if (!fn.role) return;
  const managedPolicy = (name: string) => `Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/${name}`;
  NagSuppressions.addResourceSuppressions(
    fn.role,
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
      {
        id: 'AwsSolutions-IAM5',
        reason: 'X-Ray PutTraceSegments and PutTelemetryRecords support no resource-level permissions.',
        appliesTo: ['Resource::*'],
      },
    ],
    true,
  );
}
