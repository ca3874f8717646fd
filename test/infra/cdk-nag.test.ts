/**
 * cdk-nag's AwsSolutions and Serverless packs over the stack in each setting, in both majors a provider
 * may run: v2 (an Aspect reading NagSuppressions' metadata) and v3 (a policy validation plugin reading
 * aws-cdk-lib's acknowledgements). lib/nag-acknowledgements.ts writes both.
 */
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { type App, AspectPriority, Aspects, Stack, Validations } from 'aws-cdk-lib';
import { Annotations, Match } from 'aws-cdk-lib/assertions';
import { Secret } from 'aws-cdk-lib/aws-secretsmanager';
import { AwsSolutionsChecks, ServerlessChecks } from 'cdk-nag';
import {
  AwsSolutionsChecks as AwsSolutionsChecksV3,
  ServerlessChecks as ServerlessChecksV3,
} from 'cdk-nag-v3';
import { describe, expect, it } from 'vitest';
import { ApiAccessAuthorizer } from '../../lib/api-access-authorizer';
import { stackFromContext, testApp } from './fixtures';

const SECRET_ARN = 'arn:aws:secretsmanager:eu-west-1:123456789012:secret:provider-key-AbC123';
const PORTAL = JSON.stringify({
  adminTokenSecretArn: 'arn:aws:secretsmanager:eu-west-1:123456789012:secret:portal-token-AbC123',
  mail: { sesIdentity: 'example.com' },
});
const KEY_ARN = 'arn:aws:kms:eu-west-1:123456789012:key/1234abcd-12ab-34cd-56ef-1234567890ab';

const SETTINGS: [string, Record<string, string>][] = [
  ['the default stack', { serviceId: '2555417735060' }],
  [
    'every operations setting on',
    {
      serviceId: '2555417735060',
      alarmEmail: 'ops@example.com',
      alertEmails: 'ops@example.com,sales@example.com',
      tracing: 'true',
      providerKeySecretArn: SECRET_ARN,
      providerKeySecretKmsKeyArn: KEY_ARN,
      cacheEngine: 'valkey',
      natGateways: '1',
    },
  ],
  ['alerts off', { serviceId: '2555417735060', alertLevels: '[]' }],
  ['a sharded cache', { serviceId: '2555417735060', redisShards: '3', replicasPerShard: '1' }],
  [
    'a serverless cache',
    {
      serviceId: '2555417735060',
      redisServerless: 'true',
      cacheEngine: 'valkey',
      serverlessLimits: '{"maxDataStorageGb":10,"maxEcpuPerSecond":20000}',
    },
  ],
  ['the SOAP route', { serviceId: '2555417735060', soapBackendUrl: 'https://soap.example.com/quotes' }],
  ['OAuth with the built-in issuer', { serviceId: '2555417735062', credentialMode: 'oauth' }],
  [
    'OAuth with an external issuer',
    {
      serviceId: '2555417735062',
      credentialMode: 'oauth',
      oidcIssuer: 'https://idp.example.com/realms/api',
      oidcJwksUrl: 'https://idp.example.com/realms/api/protocol/openid-connect/certs',
      oidcAudience: 'words-api',
    },
  ],
  ['the webhook receiver', { serviceId: '2555417735060', webhooks: 'true' }],
  [
    'the developer portal',
    { serviceId: '2555417735060', adminApiUrl: 'https://acme-admin.3scale.net', portal: PORTAL },
  ],
  [
    'the developer portal on an HTTP API',
    {
      serviceId: '2555417735060',
      apiType: 'http',
      adminApiUrl: 'https://acme-admin.3scale.net',
      portal: PORTAL,
    },
  ],
  ['an HTTP API', { serviceId: '2555417735060', apiType: 'http' }],
  [
    'an HTTP API with every route of the parts',
    {
      serviceId: '2555417735062',
      apiType: 'http',
      credentialMode: 'oauth',
      webhooks: 'true',
      soapBackendUrl: 'https://soap.example.com/quotes',
    },
  ],
];

/** Two instances in two stacks of one app, the second using the first's network and cache. */
function sharedNetworkAndCache(): Stack[] {
  const app = testApp();
  const stacks = ['Orders', 'Billing'].map((name) => new Stack(app, `${name}Stack`));
  const [ordersStack, billingStack] = stacks as [Stack, Stack];
  const orders = new ApiAccessAuthorizer(ordersStack, 'Orders', {
    serviceId: '111',
    platformCredential: Secret.fromSecretCompleteArn(ordersStack, 'Key', SECRET_ARN),
  });
  new ApiAccessAuthorizer(billingStack, 'Billing', {
    serviceId: '222',
    platformCredential: Secret.fromSecretCompleteArn(billingStack, 'Key', SECRET_ARN),
    shareNetworkAndCacheOf: orders,
  });
  return stacks;
}

/** Each setting's stack, and the layouts no context builds. */
const CASES: [string, () => Stack[]][] = [
  ...SETTINGS.map(([name, context]): [string, () => Stack[]] => [name, () => [stackFromContext(context)]]),
  ['two instances sharing one network and cache', sharedNetworkAndCache],
];

describe.each(CASES)('cdk-nag 2 on %s', (_, build) => {
  const stacks = build();
  for (const stack of stacks) {
    Aspects.of(stack).add(new AwsSolutionsChecks({ verbose: true }), { priority: AspectPriority.READONLY });
    Aspects.of(stack).add(new ServerlessChecks({ verbose: true }), { priority: AspectPriority.READONLY });
  }
  const annotations = stacks.map((stack) => Annotations.fromStack(stack));

  function findings(kind: 'error' | 'warning', pack: string): string[] {
    const pattern = Match.stringLikeRegexp(`${pack}-.*`);
    const found = annotations.flatMap((each) =>
      kind === 'error' ? each.findError('*', pattern) : each.findWarning('*', pattern),
    );
    return found.map((finding) => `${finding.id}: ${String(finding.entry.data).split('\n')[0]}`);
  }

  it('finds no unsuppressed AwsSolutions errors', () => {
    expect(findings('error', 'AwsSolutions')).toEqual([]);
  });

  it('finds no unsuppressed AwsSolutions warnings', () => {
    expect(findings('warning', 'AwsSolutions')).toEqual([]);
  });

  it('finds no unsuppressed Serverless errors', () => {
    expect(findings('error', 'Serverless')).toEqual([]);
  });

  it('finds no unsuppressed Serverless warnings', () => {
    expect(findings('warning', 'Serverless')).toEqual([]);
  });
});

interface ValidationReport {
  readonly pluginReports: readonly {
    readonly violations: readonly {
      readonly ruleName: string;
      readonly violatingResources: { constructPath: string }[];
    }[];
  }[];
}

describe.each(CASES)('cdk-nag 3 on %s', (_, build) => {
  it('finds no unacknowledged AwsSolutions or Serverless violation', () => {
    const app = build()[0]?.node.root as App;
    Validations.of(app).addPlugins(new AwsSolutionsChecksV3(app), new ServerlessChecksV3(app));
    const directory = app.synth().directory;
    const report = JSON.parse(
      readFileSync(path.join(directory, 'validation-report.json'), 'utf8'),
    ) as ValidationReport;
    const violations = report.pluginReports.flatMap((plugin) =>
      plugin.violations.map(
        (violation) => `${violation.ruleName}: ${violation.violatingResources[0]?.constructPath}`,
      ),
    );
    expect(violations).toEqual([]);
  });
});
