import { App, Stack } from 'aws-cdk-lib';
import type { Template } from 'aws-cdk-lib/assertions';
import { Secret } from 'aws-cdk-lib/aws-secretsmanager';
import { accessStackPropsFromContext } from '../../lib/access-context';
import { AccessManagementStack } from '../../lib/access-stack';
import { ApiAccessAuthorizer, type ApiAccessAuthorizerProps } from '../../lib/api-access-authorizer';

/**
 * An App that points at the prebuilt Lambda bundles instead of copying them into each synthesis: template
 * tests look at resources, not code. synth-bundling.test.ts synthesizes with the assets staged.
 */
export function testApp(context: Record<string, unknown> = {}): App {
  return new App({ context: { 'aws:cdk:disable-asset-staging': true, ...context } });
}

/** An ApiAccessAuthorizer of service 2555417735060 in a provider's own stack, with these props beside. */
export function accessInStack(
  props: Partial<ApiAccessAuthorizerProps> | ((stack: Stack) => Partial<ApiAccessAuthorizerProps>) = {},
) {
  const stack = new Stack(testApp(), 'ProviderStack');
  const access = new ApiAccessAuthorizer(stack, 'Access', {
    serviceId: '2555417735060',
    platformCredential: Secret.fromSecretCompleteArn(
      stack,
      'ProviderKey',
      'arn:aws:secretsmanager:eu-west-1:123456789012:secret:provider-key-AbC123',
    ),
    ...(typeof props === 'function' ? props(stack) : props),
  });
  return { stack, access };
}

/** The stack exactly as `npx cdk synth -c key=value ...` builds it from context. */
export function stackFromContext(context: Record<string, unknown>): AccessManagementStack {
  const app = testApp(context);
  return new AccessManagementStack(app, 'ApiAccessManagement', accessStackPropsFromContext(app));
}

export type Resources = Record<string, { Type: string; Properties: Record<string, unknown> }>;

export function resourcesOfType(template: Template, type: string): Resources {
  return template.findResources(type) as Resources;
}

/** The logical id of the only resource of a type whose logical id starts with `prefix`. */
export function logicalId(template: Template, type: string, prefix: string): string {
  const ids = Object.keys(resourcesOfType(template, type)).filter((id) => id.startsWith(prefix));
  if (ids.length !== 1)
    throw new Error(`expected one ${type} starting with ${prefix}, found ${ids.join(', ')}`);
  return ids[0] as string;
}

/** Logical ids of the methods a part left open on purpose (ApiProtection.exemptMethod's metadata). */
export function exemptMethodIds(template: Template): string[] {
  const resources = template.toJSON().Resources as Record<string, { Type: string; Metadata?: object }>;
  return Object.entries(resources)
    .filter(([, resource]) => resource.Type === 'AWS::ApiGateway::Method')
    .filter(([, resource]) => resource.Metadata && 'ApiAccessAuthorizerExempt' in resource.Metadata)
    .map(([id]) => id);
}

/** The environment variables of a function resource. */
export function variablesOf(
  fn: { Properties: Record<string, unknown> } | undefined,
): Record<string, unknown> {
  if (fn === undefined) throw new Error('no such function');
  return (fn.Properties.Environment as { Variables: Record<string, unknown> }).Variables;
}

/** The path of a method's resource (`/docs/{file}`), from the template's Resource chain. */
export function methodPath(template: Template, method: { Properties: Record<string, unknown> }): string {
  const resources = resourcesOfType(template, 'AWS::ApiGateway::Resource');
  const parts: string[] = [];
  let ref = method.Properties.ResourceId as { Ref?: string };
  while (ref.Ref !== undefined && resources[ref.Ref]) {
    const resource = resources[ref.Ref] as { Properties: Record<string, unknown> };
    parts.unshift(resource.Properties.PathPart as string);
    ref = resource.Properties.ParentId as { Ref?: string };
  }
  return `/${parts.join('/')}`;
}

/** A dashboard's widgets whose query is a Logs Insights query, with a `Ref` written as `<Ref id>`. */
export function logQueryWidgetsOf(template: Template): { title: string; query: string }[] {
  const dashboards = Object.values(resourcesOfType(template, 'AWS::CloudWatch::Dashboard'));
  return dashboards.flatMap((dashboard) => {
    const body = dashboard.Properties.DashboardBody as string | { 'Fn::Join': [string, unknown[]] };
    const text =
      typeof body === 'string'
        ? body
        : body['Fn::Join'][1]
            .map((part) =>
              typeof part === 'string' ? part : `<Ref ${(part as { Ref?: string }).Ref ?? 'unknown'}>`,
            )
            .join('');
    const widgets = (JSON.parse(text) as { widgets: { type: string; properties: Record<string, string> }[] })
      .widgets;
    return widgets
      .filter((widget) => widget.type === 'log')
      .map(({ properties }) => ({ title: properties.title ?? '', query: properties.query ?? '' }));
  });
}
