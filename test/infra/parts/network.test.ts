import { Template } from 'aws-cdk-lib/assertions';
import { Vpc } from 'aws-cdk-lib/aws-ec2';
import { RetentionDays } from 'aws-cdk-lib/aws-logs';
import { describe, expect, it } from 'vitest';
import { AccessNetwork } from '../../../lib/parts/network';
import { resourcesOfType } from '../fixtures';
import { networkIn, partScope } from './fixtures';

describe('AccessNetwork', () => {
  const { stack, scope } = partScope();
  const network = networkIn(scope);
  const template = Template.fromStack(stack);

  it('creates a two-AZ VPC with one NAT gateway per AZ by default', () => {
    template.resourceCountIs('AWS::EC2::VPC', 1);
    template.resourceCountIs('AWS::EC2::NatGateway', 2);
    expect(network.vpc.isolatedSubnets).toHaveLength(2);
  });

  it('logs rejected traffic only', () => {
    template.hasResourceProperties('AWS::EC2::FlowLog', { TrafficType: 'REJECT' });
  });

  it('lets the functions out on HTTPS only', () => {
    const [group] = Object.values(resourcesOfType(template, 'AWS::EC2::SecurityGroup'));
    expect(group?.Properties.SecurityGroupEgress).toEqual([
      expect.objectContaining({ IpProtocol: 'tcp', FromPort: 443, ToPort: 443, CidrIp: '0.0.0.0/0' }),
    ]);
  });

  it('runs one NAT gateway when asked (natGateways: 1)', () => {
    const other = partScope();
    networkIn(other.scope, 1);
    Template.fromStack(other.stack).resourceCountIs('AWS::EC2::NatGateway', 1);
  });

  it("adds the platform's port when it is not 443", () => {
    const other = partScope();
    new AccessNetwork(other.scope, {
      natGateways: 1,
      platformUrl: 'https://backend.example:8443',
      logRetention: RetentionDays.ONE_MONTH,
    });
    Template.fromStack(other.stack).hasResourceProperties('AWS::EC2::SecurityGroup', {
      SecurityGroupEgress: [
        {
          IpProtocol: 'tcp',
          FromPort: 443,
          ToPort: 443,
          CidrIp: '0.0.0.0/0',
          Description: 'HTTPS: platform, SNS, Secrets Manager',
        },
        { IpProtocol: 'tcp', FromPort: 8443, ToPort: 8443, CidrIp: '0.0.0.0/0', Description: 'The platform' },
      ],
    });
  });

  it('uses a given VPC and creates none', () => {
    const other = partScope();
    const vpc = new Vpc(other.stack, 'ProviderVpc', { natGateways: 1 });
    const given = new AccessNetwork(other.scope, {
      vpc,
      natGateways: 1,
      platformUrl: 'https://x.example',
      logRetention: RetentionDays.ONE_MONTH,
    });
    expect(given.vpc).toBe(vpc);
    Template.fromStack(other.stack).resourceCountIs('AWS::EC2::FlowLog', 0);
  });
});
