/**
 * The package as a provider installs it: `npm pack` (which builds it), then a fresh TypeScript CDK app laid
 * out as `cdk init app --language typescript` lays it out, with the tarball installed from the file next to
 * aws-cdk-lib, constructs, typescript and ts-node, synthesized with the CDK CLI. The app's stack is the
 * README's example, so the README stays true. One app runs the aws-cdk-lib this project develops with, one
 * the oldest it supports (the floor of its peer dependency range).
 */
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { developedWith, installInto, pack, ROOT, run } from './npm';

const MANIFEST = JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as {
  name: string;
  dependencies: Record<string, string>;
  peerDependencies: Record<string, string>;
  devDependencies: Record<string, string>;
};
/** The oldest aws-cdk-lib the package declares it works with. */
const OLDEST_AWS_CDK_LIB = (MANIFEST.peerDependencies['aws-cdk-lib'] ?? '').replace(/^\^/, '');
const DEVELOPED_WITH = developedWith;
const STACK_NAME = 'OrdersStack';
const HTTP_STACK_NAME = 'HttpOrdersStack';
const MINUTES = 60_000;

/** A `consumer-example` block of a document: one file of the consumer's app, kept true by this test. */
function documentedExample(document: string, file: string): string {
  const text = readFileSync(path.join(ROOT, document), 'utf8');
  const marker = text.indexOf(`<!-- consumer-example: ${file} -->`);
  const block = /```ts\n([\s\S]*?)```/.exec(text.slice(marker));
  if (marker < 0 || !block) throw new Error(`${document} has no consumer example of ${file}`);
  return block[1] as string;
}

const CDK_ENV = { CDK_DISABLE_VERSION_CHECK: 'true', CDK_DISABLE_CLI_TELEMETRY: 'true' };

/** A new app as `cdk init app --language typescript` writes it, with the stack from the README. */
function createConsumerApp(directory: string): void {
  mkdirSync(path.join(directory, 'bin'), { recursive: true });
  mkdirSync(path.join(directory, 'lib'), { recursive: true });
  writeFileSync(
    path.join(directory, 'package.json'),
    JSON.stringify(
      { name: 'orders-app', version: '0.1.0', bin: { 'orders-app': 'bin/orders-app.js' } },
      null,
      2,
    ),
  );
  writeFileSync(
    path.join(directory, 'tsconfig.json'),
    JSON.stringify(
      {
        compilerOptions: {
          target: 'ES2022',
          module: 'NodeNext',
          moduleResolution: 'NodeNext',
          lib: ['es2022'],
          declaration: true,
          strict: true,
          noImplicitAny: true,
          strictNullChecks: true,
          noImplicitThis: true,
          alwaysStrict: true,
          noImplicitReturns: true,
          inlineSourceMap: true,
          inlineSources: true,
          experimentalDecorators: true,
          strictPropertyInitialization: false,
          // Not cdk init's default: the package's declarations must type-check on their own.
          skipLibCheck: false,
          typeRoots: ['./node_modules/@types'],
          types: ['node'],
        },
        exclude: ['node_modules', 'cdk.out'],
      },
      null,
      2,
    ),
  );
  writeFileSync(
    path.join(directory, 'cdk.json'),
    JSON.stringify({ app: 'npx ts-node --prefer-ts-exts bin/orders-app.ts' }, null, 2),
  );
  writeFileSync(
    path.join(directory, 'bin', 'orders-app.ts'),
    [
      '#!/usr/bin/env node',
      "import * as cdk from 'aws-cdk-lib';",
      "import { OrdersStack } from '../lib/orders-stack';",
      "import { HttpOrdersStack } from '../lib/http-orders-stack';",
      '',
      'const app = new cdk.App();',
      `new OrdersStack(app, '${STACK_NAME}');`,
      `new HttpOrdersStack(app, '${HTTP_STACK_NAME}');`,
      '',
    ].join('\n'),
  );
  writeFileSync(
    path.join(directory, 'lib', 'orders-stack.ts'),
    documentedExample('README.md', 'lib/orders-stack.ts'),
  );
  writeFileSync(
    path.join(directory, 'lib', 'http-orders-stack.ts'),
    documentedExample('docs/http-api.md', 'lib/http-orders-stack.ts'),
  );
}

type TemplateJson = { Resources: Record<string, { Type: string; Properties: Record<string, unknown> }> };

interface Synthesized {
  readonly directory: string;
  readonly template: TemplateJson;
  /** The stack that protects an HttpApi. */
  readonly httpTemplate: TemplateJson;
}

/** Installs the tarball with the given aws-cdk-lib (the npm cache first), then `cdk synth`. */
async function synthesizeConsumer(
  workspace: string,
  tarball: string,
  awsCdkLib: string,
): Promise<Synthesized> {
  const directory = path.join(workspace, `app-${awsCdkLib}`);
  createConsumerApp(directory);
  await installInto(directory, [
    tarball,
    `aws-cdk-lib@${awsCdkLib}`,
    `constructs@${DEVELOPED_WITH('constructs')}`,
    `typescript@${DEVELOPED_WITH('typescript')}`,
    'ts-node@^10.9.2',
    `@types/node@${MANIFEST.devDependencies['@types/node']}`,
  ]);
  const output = await run(
    process.execPath,
    [path.join(ROOT, 'node_modules', 'aws-cdk', 'bin', 'cdk'), 'synth', '--quiet', '--no-notices'],
    directory,
    CDK_ENV,
  );
  const templateOf = (stack: string): TemplateJson => {
    const templateFile = path.join(directory, 'cdk.out', `${stack}.template.json`);
    if (!existsSync(templateFile)) throw new Error(`cdk synth in ${directory} wrote no ${stack}:\n${output}`);
    return JSON.parse(readFileSync(templateFile, 'utf8')) as TemplateJson;
  };
  return { directory, template: templateOf(STACK_NAME), httpTemplate: templateOf(HTTP_STACK_NAME) };
}

function resourcesOf(template: TemplateJson, type: string) {
  return Object.entries(template.Resources).filter(([, resource]) => resource.Type === type);
}

const CONSUMERS = [
  ['the aws-cdk-lib it is developed with', DEVELOPED_WITH('aws-cdk-lib')],
  ['the oldest aws-cdk-lib it supports', OLDEST_AWS_CDK_LIB],
] as const;

let workspace: string;
let packedFiles: string[];
const consumers = new Map<string, Synthesized>();

beforeAll(async () => {
  workspace = mkdtempSync(path.join(tmpdir(), 'consumer-app-'));
  const packed = await pack(workspace);
  packedFiles = [...packed.files];
  const { tarball } = packed;
  // Both apps at once: one installs while the other type-checks and synthesizes.
  const synthesized = await Promise.all(
    CONSUMERS.map(([, awsCdkLib]) => synthesizeConsumer(workspace, tarball, awsCdkLib)),
  );
  for (const [i, [, awsCdkLib]] of CONSUMERS.entries())
    consumers.set(awsCdkLib, synthesized[i] as Synthesized);
}, 15 * MINUTES);

afterAll(() => rmSync(workspace, { recursive: true, force: true }));

describe('the packed tarball', () => {
  it('ships compiled JavaScript with declarations and the Lambda bundles, and no sources or lock file', () => {
    expect(packedFiles).toEqual(
      expect.arrayContaining([
        'package.json',
        'LICENSE',
        'CHANGELOG.md',
        'dist/lib/index.js',
        'dist/lib/index.d.ts',
        'dist/bundles/authorizer/index.js',
        'dist/bundles/reporter/index.js',
      ]),
    );
    const sources = packedFiles.filter((file) => file.endsWith('.ts') && !file.endsWith('.d.ts'));
    expect(sources).toEqual([]);
    expect(packedFiles.filter((file) => /package-lock|^lambdas\/|^lib\/|^test\//.test(file))).toEqual([]);
  });
});

/** The package a bare import specifier names (`aws-cdk-lib/aws-sns` is aws-cdk-lib, `@scope/name/x` is @scope/name). */
function packageOf(specifier: string): string {
  const parts = specifier.split('/');
  return (specifier.startsWith('@') ? parts.slice(0, 2) : parts.slice(0, 1)).join('/');
}

/** Every package the installed package's declarations import or reference. */
function packagesTheTypesImport(packageDirectory: string): Set<string> {
  const imported = new Set<string>();
  const files = readdirSync(path.join(packageDirectory, 'dist'), { recursive: true, encoding: 'utf8' });
  for (const file of files.filter((name) => name.endsWith('.d.ts'))) {
    const text = readFileSync(path.join(packageDirectory, 'dist', file), 'utf8');
    for (const [, specifier] of text.matchAll(/(?:from |import\(|types=)['"]([^'"]+)['"]/g)) {
      if (specifier !== undefined && !specifier.startsWith('.')) imported.add(packageOf(specifier));
    }
  }
  return imported;
}

describe("the packed README's links", () => {
  it('each lead to a file the tarball ships, so they work from the installed package', () => {
    const readme = readFileSync(path.join(ROOT, 'README.md'), 'utf8');
    const targets = [...readme.matchAll(/\]\(([^)#\s]+)(?:#[^)]*)?\)/g)]
      .map(([, target]) => target as string)
      .filter((target) => !/^[a-z]+:/.test(target));
    expect(targets.length).toBeGreaterThan(0);
    expect(targets.filter((target) => !packedFiles.includes(target))).toEqual([]);
  });
});

describe.each(CONSUMERS)('a new CDK app on %s (%s)', (_, awsCdkLib) => {
  const consumer = () => consumers.get(awsCdkLib) as Synthesized;

  it("type-checks the package's declarations (skipLibCheck: false): they import only its dependencies and peers", () => {
    const installed = path.join(consumer().directory, 'node_modules', MANIFEST.name);
    const declared = [...Object.keys(MANIFEST.dependencies), ...Object.keys(MANIFEST.peerDependencies)];
    const undeclared = [...packagesTheTypesImport(installed)].filter(
      (name) => !declared.includes(name) && !name.startsWith('node:'),
    );
    expect(undeclared).toEqual([]);
  });

  it('installed that aws-cdk-lib once, at the app (a peer, not a nested copy)', () => {
    const installed = JSON.parse(
      readFileSync(path.join(consumer().directory, 'node_modules', 'aws-cdk-lib', 'package.json'), 'utf8'),
    ) as { version: string };
    expect(installed.version).toBe(awsCdkLib);
    const nested = path.join(
      consumer().directory,
      'node_modules',
      MANIFEST.name,
      'node_modules',
      'aws-cdk-lib',
    );
    expect(() => readFileSync(path.join(nested, 'package.json'))).toThrow();
  });

  it('puts every method of the app behind the authorizer, and adds no open documentation route', () => {
    const [authorizer] = resourcesOf(consumer().template, 'AWS::ApiGateway::Authorizer');
    expect(authorizer?.[1].Properties).toMatchObject({ Type: 'REQUEST', AuthorizerResultTtlInSeconds: 0 });
    const methods = resourcesOf(consumer().template, 'AWS::ApiGateway::Method');
    expect(methods.length).toBeGreaterThan(0);
    for (const [, method] of methods) {
      expect(method.Properties).toMatchObject({
        AuthorizationType: 'CUSTOM',
        AuthorizerId: { Ref: authorizer?.[0] },
      });
    }
  });

  it('puts every route of the HttpApi behind one payload 2.0 authorizer with simple responses', () => {
    const authorizers = resourcesOf(consumer().httpTemplate, 'AWS::ApiGatewayV2::Authorizer');
    expect(authorizers).toHaveLength(1);
    const [id, authorizer] = authorizers[0] ?? [];
    expect(authorizer?.Properties).toMatchObject({
      AuthorizerType: 'REQUEST',
      AuthorizerPayloadFormatVersion: '2.0',
      EnableSimpleResponses: true,
      AuthorizerResultTtlInSeconds: 0,
    });
    expect(authorizer?.Properties).not.toHaveProperty('IdentitySource');
    const routes = Object.fromEntries(
      resourcesOf(consumer().httpTemplate, 'AWS::ApiGatewayV2::Route').map(([, route]) => [
        route.Properties.RouteKey,
        route.Properties.AuthorizationType === 'CUSTOM' ? route.Properties.AuthorizerId : 'NONE',
      ]),
    );
    // Every route, and no open documentation route (docs are opt-in for a library user).
    expect(routes).toEqual({
      'GET /orders': { Ref: id },
      'POST /orders': { Ref: id },
    });
  });

  it('makes every topic TLS-only with a policy of its own', () => {
    const topics = resourcesOf(consumer().template, 'AWS::SNS::Topic');
    const policies = resourcesOf(consumer().template, 'AWS::SNS::TopicPolicy').map(([, policy]) => policy);
    expect(topics.length).toBeGreaterThan(0);
    for (const [id] of topics) {
      const policy = policies.find((candidate) =>
        JSON.stringify(candidate.Properties.Topics).includes(`"${id}"`),
      );
      expect(policy?.Properties.PolicyDocument).toMatchObject({
        Statement: expect.arrayContaining([
          expect.objectContaining({
            Effect: 'Deny',
            Action: 'sns:Publish',
            Condition: { Bool: { 'aws:SecureTransport': 'false' } },
          }),
        ]),
      });
    }
  });

  it('alarms on a platform that refuses the configuration and on usage it rejects', () => {
    const metrics = resourcesOf(consumer().template, 'AWS::CloudWatch::Alarm').map(
      ([, alarm]) => alarm.Properties.MetricName,
    );
    expect(metrics).toEqual(expect.arrayContaining(['PlatformMisconfigured', 'UsageRejected']));
  });

  it("deploys the package's prebuilt bundles as the functions' code", () => {
    const functions = resourcesOf(consumer().template, 'AWS::Lambda::Function');
    const bundled = readFileSync(
      path.join(
        consumer().directory,
        'node_modules',
        MANIFEST.name,
        'dist',
        'bundles',
        'authorizer',
        'index.js',
      ),
    );
    const staged = functions.map(([, fn]) => {
      const key = (fn.Properties.Code as { S3Key: string }).S3Key.replace(/\.zip$/, '');
      return readFileSync(path.join(consumer().directory, 'cdk.out', `asset.${key}`, 'index.js'));
    });
    // The authorizer, the reporter and the sweep (documentation is opt-in).
    expect(functions).toHaveLength(3);
    expect(staged.some((code) => code.equals(bundled))).toBe(true);
  });
});
