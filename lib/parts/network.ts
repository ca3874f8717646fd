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
import { LogGroup, type RetentionDays } from 'aws-cdk-lib/aws-logs';
import type { Construct } from 'constructs';
import { ConfigError } from '../../core/settings/validation';
import type { FunctionNetwork } from '../access-function';
import type { AccessPart, AlarmSpec } from './part';

/** Availability zones of a VPC this construct creates. */
export const VPC_AZS = 2;

export interface AccessNetworkProps {
  /** @default a new VPC (see `natGateways`) */
  readonly vpc?: IVpc;
  /** @default the VPC's private subnets with egress */
  readonly functionSubnets?: SubnetSelection;
  /** NAT gateways of a new VPC (1 to VPC_AZS). */
  readonly natGateways: number;
  /** Base URL of the platform the functions call. */
  readonly platformUrl: string;
  readonly logRetention: RetentionDays;
}

function platformPort(platformUrl: string): number {
  const url = new URL(platformUrl);
  if (url.port !== '') return Number(url.port);
  return url.protocol === 'https:' ? 443 : 80;
}

/**
 * Where the access functions run: the VPC (new or given), their subnets, and the one security group they
 * share, which may reach HTTPS (the platform, AWS APIs) and whatever it is admitted to (Redis).
 */
export class AccessNetwork implements AccessPart {
  public readonly alarms: readonly AlarmSpec[] = [];
  public readonly vpc: IVpc;
  public readonly functionSubnets: SubnetSelection;
  /** The functions' security group; the only one Redis admits. */
  public readonly functionSecurityGroup: SecurityGroup;

  constructor(
    private readonly scope: Construct,
    props: AccessNetworkProps,
  ) {
    if (props.vpc && !props.functionSubnets && props.vpc.privateSubnets.length === 0) {
      throw new ConfigError(
        'vpc',
        `has no private subnets with egress (a route to a NAT gateway or instance): the functions run there and must reach the platform (${props.platformUrl}), SNS and Secrets Manager. Add such subnets, or name subnets with a route out in functionSubnets`,
      );
    }
    this.vpc = props.vpc ?? this.createVpc(props.natGateways, props.logRetention);
    this.functionSubnets = props.functionSubnets ?? { subnetType: SubnetType.PRIVATE_WITH_EGRESS };
    this.functionSecurityGroup = new SecurityGroup(scope, 'FunctionSecurityGroup', {
      vpc: this.vpc,
      description: 'API access Lambdas: HTTPS out to the platform and AWS APIs, and Redis',
      allowAllOutbound: false,
    });
    this.functionSecurityGroup.addEgressRule(
      Peer.anyIpv4(),
      Port.tcp(443),
      'HTTPS: platform, SNS, Secrets Manager',
    );
    const port = platformPort(props.platformUrl);
    if (port !== 443)
      this.functionSecurityGroup.addEgressRule(Peer.anyIpv4(), Port.tcp(port), 'The platform');
  }

  /** Where a function of this construct runs. */
  public get functionPlacement(): FunctionNetwork {
    return {
      vpc: this.vpc,
      vpcSubnets: this.functionSubnets,
      securityGroups: [this.functionSecurityGroup],
    };
  }

  /** Subnets for a cache: the VPC's isolated subnets, or the functions' when it has none. */
  public get cacheSubnets(): SubnetSelection {
    return this.vpc.isolatedSubnets.length > 0
      ? { subnetType: SubnetType.PRIVATE_ISOLATED }
      : this.functionSubnets;
  }

  /** Lets the functions reach `securityGroup` on `port`. */
  public admitFunctionsTo(securityGroup: ISecurityGroup, port: number, description: string): void {
    this.functionSecurityGroup.connections.allowTo(securityGroup, Port.tcp(port), description);
  }

  private createVpc(natGateways: number, logRetention: RetentionDays): Vpc {
    // NAT, not interface endpoints: the platform is on the internet, so egress needs NAT anyway, and SNS and
    // Secrets Manager through it cost nothing extra, where two endpoints in two AZs would cost every hour.
    const vpc = new Vpc(this.scope, 'Vpc', {
      maxAzs: VPC_AZS,
      natGateways,
      subnetConfiguration: [
        { name: 'public', subnetType: SubnetType.PUBLIC, cidrMask: 24 },
        { name: 'functions', subnetType: SubnetType.PRIVATE_WITH_EGRESS, cidrMask: 24 },
        { name: 'cache', subnetType: SubnetType.PRIVATE_ISOLATED, cidrMask: 24 },
      ],
    });
    // Rejected traffic only: it shows blocked connections without paying to log every accepted packet.
    vpc.addFlowLog('RejectedTraffic', {
      destination: FlowLogDestination.toCloudWatchLogs(
        new LogGroup(this.scope, 'VpcFlowLogs', { retention: logRetention }),
      ),
      trafficType: FlowLogTrafficType.REJECT,
    });
    return vpc;
  }
}
