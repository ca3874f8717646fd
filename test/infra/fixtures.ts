import { App } from 'aws-cdk-lib';
import type { Template } from 'aws-cdk-lib/assertions';
import { accessStackPropsFromContext } from '../../lib/access-context';
import { AccessManagementStack } from '../../lib/access-stack';

/**
 * An App that points at the prebuilt Lambda bundles instead of copying them into each synthesis: template
 * tests look at resources, not code. synth-bundling.test.ts synthesizes with the assets staged.
 */
export function testApp(context: Record<string, unknown> = {}): App {
  return new App({ context: { 'aws:cdk:disable-asset-staging': true, ...context } });
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
