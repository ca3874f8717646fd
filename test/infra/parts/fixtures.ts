import { Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { RetentionDays } from 'aws-cdk-lib/aws-logs';
import { Secret } from 'aws-cdk-lib/aws-secretsmanager';
import { Construct } from 'constructs';
import { parseConfig } from '../../../lambdas/core/config';
import { AccessBindings } from '../../../lib/parts/bindings';
import { AccessNetwork, VPC_AZS } from '../../../lib/parts/network';
import { testApp } from '../fixtures';

/** A stack and the scope a part builds into, as ApiAccessAuthorizer gives it. */
export function partScope(): { stack: Stack; scope: Construct } {
  const stack = new Stack(testApp(), 'PartStack');
  return { stack, scope: new Construct(stack, 'Access') };
}

export function networkIn(scope: Construct, natGateways = VPC_AZS): AccessNetwork {
  return new AccessNetwork(scope, {
    natGateways,
    platformUrl: 'https://su1.3scale.net',
    logRetention: RetentionDays.ONE_MONTH,
  });
}

export function bindingsIn(scope: Construct): AccessBindings {
  return new AccessBindings({
    config: parseConfig({ serviceId: '2555417735060' }),
    platformCredential: new Secret(scope, 'ProviderKey'),
    redisEndpoint: { host: 'redis.internal', port: 6379, tls: true },
  });
}

export function templateOf(stack: Stack): Template {
  return Template.fromStack(stack);
}
