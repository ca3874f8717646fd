import { Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { RetentionDays } from 'aws-cdk-lib/aws-logs';
import { Secret } from 'aws-cdk-lib/aws-secretsmanager';
import { Construct } from 'constructs';
import { parseConfig } from '../../../core/settings/config';
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

interface Widget {
  readonly type: string;
  readonly properties: { readonly title?: string; readonly metrics?: readonly unknown[][] };
}

/** The dashboard's body as CloudFormation will write it (region and other tokens left as `<token>`). */
export function dashboardBody(template: Template): { widgets: Widget[] } {
  const [dashboard] = Object.values(template.findResources('AWS::CloudWatch::Dashboard'));
  const body = dashboard?.Properties.DashboardBody as string | { 'Fn::Join': [string, unknown[]] };
  const text =
    typeof body === 'string'
      ? body
      : body['Fn::Join'][1].map((part) => (typeof part === 'string' ? part : '<token>')).join('');
  return JSON.parse(text);
}

/** The SEARCH expression of each graph, by title. */
export function searchesOf(template: Template): Record<string, string> {
  const graphs = dashboardBody(template).widgets.filter((widget) => widget.type === 'metric');
  return Object.fromEntries(
    graphs.map((widget) => {
      const [series] = widget.properties.metrics ?? [];
      const last = series?.at(-1) as { expression: string } | undefined;
      if (!last) throw new Error(`the graph ${widget.properties.title} has no series`);
      return [widget.properties.title, last.expression];
    }),
  );
}

/** The addresses subscribed by e-mail to a topic, in template order. */
export function emailSubscribers(template: Template, topicId: string): unknown[] {
  const subscriptions = template.findResources('AWS::SNS::Subscription', {
    Properties: { Protocol: 'email', TopicArn: { Ref: topicId } },
  });
  return Object.values(subscriptions).map((subscription) => subscription.Properties.Endpoint);
}
