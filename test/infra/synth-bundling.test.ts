import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { App } from 'aws-cdk-lib';
import type { APIGatewayProxyEvent, APIGatewayProxyResult, Context } from 'aws-lambda';
import { afterAll, describe, expect, it } from 'vitest';
import { accessStackPropsFromContext } from '../../lib/access-context';
import { AccessManagementStack } from '../../lib/access-stack';

/**
 * One real synthesis, as `npx cdk synth -c serviceId=<id>` runs it after `npm run bundle`: every function's
 * prebuilt bundle is staged as an asset.
 */
const outdir = mkdtempSync(path.join(tmpdir(), 'access-synth-'));
const app = new App({ outdir, context: { serviceId: '2555417735060' } });
const stack = new AccessManagementStack(app, 'ApiAccessManagement', accessStackPropsFromContext(app));
const template = app.synth().getStackArtifact(stack.artifactId).template as {
  Resources: Record<string, { Type: string; Properties: { Handler: string; Code: { S3Key: string } } }>;
};
const functions = Object.entries(template.Resources).filter(
  ([, resource]) => resource.Type === 'AWS::Lambda::Function',
);

function bundleDirectory(s3Key: string): string {
  return path.join(outdir, `asset.${s3Key.replace(/\.zip$/, '')}`);
}

afterAll(() => rmSync(outdir, { recursive: true, force: true }));

describe('synthesis with the prebuilt bundles', () => {
  it('bundles every function into an index.js with its source map', () => {
    expect(functions.map(([id]) => id.replace(/[0-9A-F]{8}$/, '')).sort()).toEqual([
      'AccessAuthorizerFunction',
      'AccessReporterFunction',
      'AccessSweepFunction',
      'ApiAccessProtectionDocsFunction',
      'EchoFunction',
    ]);
    for (const [, fn] of functions) {
      const directory = bundleDirectory(fn.Properties.Code.S3Key);
      expect(statSync(path.join(directory, 'index.js')).size).toBeGreaterThan(0);
      expect(existsSync(path.join(directory, 'index.js.map'))).toBe(true);
    }
  });

  it("leaves the AWS SDK to the Node.js runtime in the authorizer's bundle", () => {
    const [, authorizer] = functions.find(([id]) => id.startsWith('AccessAuthorizerFunction')) ?? [];
    if (!authorizer) throw new Error('no authorizer function in the template');
    const code = readFileSync(
      path.join(bundleDirectory(authorizer.Properties.Code.S3Key), 'index.js'),
      'utf8',
    );
    expect(code).toMatch(/import\("@aws-sdk\/client-sns"\)/);
    expect(code).toMatch(/import\("@aws-sdk\/client-secrets-manager"\)/);
    expect(code).not.toMatch(/require\("@aws-sdk\//);
  });

  it("keeps fast-xml-parser and jose out of the authorizer's module init, in files of their own", async () => {
    const [, authorizer] = functions.find(([id]) => id.startsWith('AccessAuthorizerFunction')) ?? [];
    if (!authorizer) throw new Error('no authorizer function in the template');
    const directory = bundleDirectory(authorizer.Properties.Code.S3Key);
    const code = readFileSync(path.join(directory, 'index.js'), 'utf8');
    // Error codes of each library's own code: in its file, not in index.js.
    expect(code).not.toMatch(/ERR_JWKS_TIMEOUT|InvalidAttr/);
    expect(code).toMatch(/require\("\.\/lazy\/fast-xml-parser\.js"\)/);
    expect(code).toMatch(/import\("\.\/lazy\/jose\.js"\)/);
    const xml = require(
      path.join(directory, 'lazy', 'fast-xml-parser.js'),
    ) as typeof import('fast-xml-parser');
    expect(xml.XMLValidator.validate('<status><authorized>true</authorized></status>')).toBe(true);
    const jose = (await import(path.join(directory, 'lazy', 'jose.js'))) as typeof import('jose');
    expect(typeof jose.jwtVerify).toBe('function');
    expect(typeof jose.errors.JWKSTimeout).toBe('function');
  });

  it('produces an echo bundle that answers a request', async () => {
    const [, echoFunction] = functions.find(([id]) => id.startsWith('EchoFunction')) ?? [];
    if (!echoFunction) throw new Error('no echo function in the template');
    const bundle = require(path.join(bundleDirectory(echoFunction.Properties.Code.S3Key), 'index.js')) as {
      handler: (event: APIGatewayProxyEvent, context: Context) => Promise<APIGatewayProxyResult>;
    };
    const result = await bundle.handler(
      {
        httpMethod: 'GET',
        path: '/v1/words/hello.json',
        resource: '/v1/words/{word}',
        pathParameters: { word: 'hello.json' },
        queryStringParameters: null,
        headers: { apikey: 'consumer-key', Accept: '*/*' },
        requestContext: { authorizer: { principalId: 'app-1' } },
      } as unknown as APIGatewayProxyEvent,
      {} as Context,
    );
    expect(result.statusCode).toBe(200);
    expect(JSON.parse(result.body)).toMatchObject({
      path: '/v1/words/hello.json',
      pathParameters: { word: 'hello.json' },
      headers: { Accept: '*/*' },
      authorizer: { principalId: 'app-1' },
    });
  });
});
