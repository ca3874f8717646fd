import { Stack } from 'aws-cdk-lib';
import { PolicyStatement } from 'aws-cdk-lib/aws-iam';
import type { IKey } from 'aws-cdk-lib/aws-kms';
import type { Function as LambdaFunction } from 'aws-cdk-lib/aws-lambda';
import type { ISecret } from 'aws-cdk-lib/aws-secretsmanager';
import type { ITopic } from 'aws-cdk-lib/aws-sns';
import { type AccessConfig, configToEnv, type RedisMode } from '../../core/settings/config';

/** Where the Lambdas reach Redis. */
export interface RedisEndpoint {
  /** The primary endpoint, or in cluster mode the configuration endpoint (the seed). */
  readonly host: string;
  readonly port: number;
  readonly tls: boolean;
  /** @default 'standalone' */
  readonly mode?: RedisMode;
}

export interface AccessBindingsProps {
  /** The validated settings. */
  readonly config: AccessConfig;
  /** Secret whose SecretString is the provider key or service token. */
  readonly platformCredential: ISecret;
  /**
   * The customer-managed KMS key the credential's secret is encrypted with.
   * @default the secret uses the AWS-managed key, which needs no grant
   */
  readonly platformCredentialKey?: IKey;
  readonly redisEndpoint: RedisEndpoint;
  /** @default Redis without AUTH */
  readonly redisAuthSecret?: ISecret;
}

/** What one function may use beyond the shared settings. */
export interface FunctionBindings {
  /** The topic the function publishes usage messages to. */
  readonly publishTo?: ITopic;
  /**
   * The function maps calls to metrics: with mappingRulesSource platform it reads the rules with the
   * admin token, and may read that secret.
   */
  readonly mapsCalls?: boolean;
}

/**
 * The configuration and secrets every access function shares. `bind` writes a function's environment
 * (secret ARNs, never secret values) and grants it exactly what that environment names.
 */
export class AccessBindings {
  constructor(public readonly props: AccessBindingsProps) {}

  public get config(): AccessConfig {
    return this.props.config;
  }

  public bind(fn: LambdaFunction, bindings: FunctionBindings = {}): void {
    const { config, platformCredential, platformCredentialKey, redisEndpoint, redisAuthSecret } = this.props;
    const environment = configToEnv({
      ...config,
      platformCredentialSecretArn: platformCredential.secretArn,
      redis: { ...redisEndpoint, authSecretArn: redisAuthSecret?.secretArn },
      topicArn: bindings.publishTo?.topicArn,
    });
    for (const [name, value] of Object.entries(environment)) fn.addEnvironment(name, value);
    platformCredential.grantRead(fn);
    if (platformCredentialKey) {
      // Decrypt only, on that key only, and only when Secrets Manager asks on the function's behalf.
      fn.addToRolePolicy(
        new PolicyStatement({
          actions: ['kms:Decrypt'],
          resources: [platformCredentialKey.keyArn],
          conditions: {
            StringEquals: { 'kms:ViaService': `secretsmanager.${Stack.of(fn).region}.amazonaws.com` },
          },
        }),
      );
    }
    redisAuthSecret?.grantRead(fn);
    bindings.publishTo?.grantPublish(fn);
    if (bindings.mapsCalls && config.mappingRulesSource === 'platform' && config.adminTokenSecretArn) {
      // What ISecret.grantRead grants, on the one secret the environment names.
      fn.addToRolePolicy(
        new PolicyStatement({
          actions: ['secretsmanager:GetSecretValue', 'secretsmanager:DescribeSecret'],
          resources: [config.adminTokenSecretArn],
        }),
      );
    }
  }
}
