/**
 * The layouts `npm run cost` prices, each a synthesized stack: the repository's stack as `npx cdk deploy`
 * builds it by default, and the cheaper layouts docs/costs.md describes.
 */
import { App, Stack } from 'aws-cdk-lib';
import {
  InstanceType,
  NatProvider,
  NatTrafficDirection,
  Peer,
  Port,
  SubnetType,
  Vpc,
} from 'aws-cdk-lib/aws-ec2';
import { Secret } from 'aws-cdk-lib/aws-secretsmanager';
import { accessStackPropsFromContext } from '../../lib/access-context';
import { AccessManagementStack } from '../../lib/access-stack';
import { ApiAccessAuthorizer, type ApiAccessAuthorizerProps } from '../../lib/api-access-authorizer';

const SERVICE_ID = '2555417735060';

function app(context: Record<string, unknown> = {}): App {
  return new App({ context: { 'aws:cdk:disable-asset-staging': true, serviceId: SERVICE_ID, ...context } });
}

/** The repository's stack from `-c` context, as `npx cdk deploy -c ...` builds it. */
function fromContext(context: Record<string, unknown>): Stack {
  const scope = app(context);
  return new AccessManagementStack(scope, 'ApiAccessManagement', accessStackPropsFromContext(scope));
}

/** The construct in a VPC the provider built (or already has), with one development cache node. */
function inProviderVpc(vpcOf: (stack: Stack) => Vpc): Stack {
  const stack = new Stack(app(), 'ProviderStack');
  new ApiAccessAuthorizer(stack, 'Access', {
    serviceId: SERVICE_ID,
    platformCredential: new Secret(stack, 'ProviderKey'),
    vpc: vpcOf(stack),
    multiAz: false,
  });
  return stack;
}

/**
 * Two services in one stack (docs/construct-library.md), the second given what it takes of the first:
 * its VPC, or its network and cache.
 */
function twoServices(sharing: (first: ApiAccessAuthorizer) => Partial<ApiAccessAuthorizerProps>): Stack {
  const stack = new Stack(app(), 'ProviderStack');
  const first = new ApiAccessAuthorizer(stack, 'OrdersAccess', {
    serviceId: SERVICE_ID,
    platformCredential: new Secret(stack, 'OrdersKey'),
    instanceName: 'orders',
  });
  new ApiAccessAuthorizer(stack, 'BillingAccess', {
    serviceId: '2555417735071',
    platformCredential: new Secret(stack, 'BillingKey'),
    instanceName: 'billing',
    ...sharing(first),
  });
  return stack;
}

export const LAYOUTS = {
  default: {
    description: 'npx cdk deploy as it is: two NAT gateways, a Redis primary and replica, dashboard',
    stack: () => fromContext({}),
  },
  'default-with-portal': {
    description:
      'the default layout with the developer portal (-c portal={...}): the same fixed cost, the portal costs nothing at rest',
    stack: () =>
      fromContext({
        adminApiUrl: 'https://acme-admin.3scale.net',
        portal: JSON.stringify({
          adminTokenSecretArn: 'arn:aws:secretsmanager:eu-west-1:123456789012:secret:portal-token-AbC123',
          mail: { sesIdentity: 'example.com' },
        }),
      }),
  },
  'smallest-production': {
    description:
      'Valkey primary and replica in two AZs (failover kept), one NAT gateway, no dashboard (-c cacheEngine=valkey -c natGateways=1 -c dashboard=false)',
    stack: () => fromContext({ cacheEngine: 'valkey', natGateways: '1', dashboard: 'false' }),
  },
  'nat-instance': {
    description:
      'development: a VPC with one t4g.nano NAT instance (NatProvider.instanceV2) instead of NAT gateways, one cache node',
    stack: () =>
      inProviderVpc((stack) => {
        // Outbound only: the instance's default security group would admit the whole internet.
        const nat = NatProvider.instanceV2({
          instanceType: new InstanceType('t4g.nano'),
          defaultAllowedTraffic: NatTrafficDirection.OUTBOUND_ONLY,
        });
        const vpc = new Vpc(stack, 'Vpc', {
          maxAzs: 2,
          natGateways: 1,
          natGatewayProvider: nat,
          subnetConfiguration: [
            { name: 'public', subnetType: SubnetType.PUBLIC },
            { name: 'functions', subnetType: SubnetType.PRIVATE_WITH_EGRESS },
          ],
        });
        nat.connections.allowFrom(Peer.ipv4(vpc.vpcCidrBlock), Port.tcp(443), 'HTTPS from the VPC');
        return vpc;
      }),
  },
  'own-vpc': {
    description: "the provider's existing VPC (its NAT is paid already), one cache node",
    stack: () =>
      inProviderVpc(
        (stack) =>
          Vpc.fromVpcAttributes(stack, 'Vpc', {
            vpcId: 'vpc-0123456789abcdef0',
            availabilityZones: ['us-east-1a', 'us-east-1b'],
            privateSubnetIds: ['subnet-0123456789abcdef0', 'subnet-0123456789abcdef1'],
          }) as Vpc,
      ),
  },
  'two-services-shared-vpc': {
    description:
      "two services, each the default instance (Redis primary and replica, dashboard), the second in the first one's VPC: one pair of NAT gateways",
    stack: () => twoServices((first) => ({ vpc: first.vpc })),
  },
  'two-services-shared-cache': {
    description:
      "two services, the second using the first one's network and cache (shareNetworkAndCacheOf): one pair of NAT gateways and one Redis primary and replica for both, a dashboard each",
    stack: () => twoServices((first) => ({ shareNetworkAndCacheOf: first })),
  },
} as const satisfies Record<string, { description: string; stack: () => Stack }>;

export type LayoutName = keyof typeof LAYOUTS;
