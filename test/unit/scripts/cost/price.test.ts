import { Template } from 'aws-cdk-lib/assertions';
import { describe, expect, it } from 'vitest';
import { LAYOUTS, type LayoutName } from '../../../../scripts/cost/layouts';
import { priceTemplate, UnpricedResourceError } from '../../../../scripts/cost/price';

const priced = (name: LayoutName) =>
  priceTemplate(Template.fromStack(LAYOUTS[name].stack()).toJSON() as never);

describe('priceTemplate', () => {
  // One synthesis each, on a shared machine: more than the default 30 s may pass.
  it.each(Object.keys(LAYOUTS) as LayoutName[])(
    'prices every resource of the %s layout (a new billable resource type fails here)',
    (name) => {
      expect(priced(name).total).toBeGreaterThan(0);
    },
    120_000,
  );

  it('prices the default stack: two NAT gateways, a Redis primary and replica, the dashboard, alarms', () => {
    const { lines, total } = priced('default');
    const item = (name: string) => lines.find((line) => line.item === name);
    expect(item('NAT gateway')).toMatchObject({ quantity: 2 });
    expect(item('ElastiCache redis cache.t4g.micro node')).toMatchObject({ quantity: 2 });
    expect(item('CloudWatch dashboard')).toMatchObject({ quantity: 1 });
    expect(total).toBeCloseTo(
      lines.reduce((sum, line) => sum + line.monthly, 0),
      6,
    );
    expect(priced('own-vpc').total).toBeLessThan(total);
  });

  it("prices two services sharing a VPC: one pair of NAT gateways, each instance's caches and metrics", () => {
    const shared = priced('two-services-shared-vpc');
    const single = priced('default');
    const item = (name: string) => shared.lines.find((line) => line.item === name);
    expect(item('NAT gateway')).toMatchObject({ quantity: 2 });
    expect(item('ElastiCache redis cache.t4g.micro node')).toMatchObject({ quantity: 4 });
    const metrics = (lines: typeof shared.lines) =>
      lines.find((line) => line.item === 'CloudWatch custom metric')?.quantity;
    expect(metrics(shared.lines)).toBe(2 * (metrics(single.lines) ?? 0));
    expect(shared.total).toBeLessThan(2 * single.total);
  }, 120_000);

  it('prices two services sharing the network and cache: one pair of NAT gateways and of cache nodes', () => {
    const shared = priced('two-services-shared-cache');
    const single = priced('default');
    const quantity = (lines: typeof shared.lines, name: string) =>
      lines.find((line) => line.item === name)?.quantity ?? 0;
    expect(quantity(shared.lines, 'NAT gateway')).toBe(2);
    expect(quantity(shared.lines, 'ElastiCache redis cache.t4g.micro node')).toBe(2);
    // The second instance adds its own dashboard, metrics, alarms on them and provider key only.
    expect(quantity(shared.lines, 'CloudWatch dashboard')).toBe(2);
    expect(quantity(shared.lines, 'CloudWatch custom metric')).toBe(
      2 * quantity(single.lines, 'CloudWatch custom metric'),
    );
    expect(quantity(shared.lines, 'Secrets Manager secret')).toBe(
      quantity(single.lines, 'Secrets Manager secret') + 1,
    );
    expect(shared.total).toBeLessThan(priced('two-services-shared-vpc').total);
  }, 120_000);

  it('refuses a template with a resource the list neither prices nor calls free, naming its type', () => {
    const template = {
      Resources: {
        Db: { Type: 'AWS::RDS::DBInstance', Properties: {} },
        Topic: { Type: 'AWS::SNS::Topic', Properties: {} },
      },
    };
    expect(() => priceTemplate(template)).toThrow(UnpricedResourceError);
    expect(() => priceTemplate(template)).toThrow(/neither prices nor lists as free: AWS::RDS::DBInstance\./);
  });

  it('counts each metric of an alarm on a math expression, and a node type the list lacks is an error', () => {
    const alarm = {
      Type: 'AWS::CloudWatch::Alarm',
      Properties: { Metrics: [{ Expression: 'm0 + m1' }, { MetricStat: {} }, { MetricStat: {} }] },
    };
    const { lines } = priceTemplate({ Resources: { Alarm: alarm } });
    expect(lines.find((line) => line.item === 'CloudWatch alarm metric')).toMatchObject({ quantity: 2 });
    const cache = {
      Type: 'AWS::ElastiCache::ReplicationGroup',
      Properties: { Engine: 'redis', CacheNodeType: 'cache.r7g.24xlarge', NumCacheClusters: 2 },
    };
    expect(() => priceTemplate({ Resources: { Cache: cache } })).toThrow(/cache.r7g.24xlarge/);
  });
});
