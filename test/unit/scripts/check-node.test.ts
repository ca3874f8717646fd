import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { NODE_RUNTIME_NAME } from '../../../lib/lambda-bundles';
import { nodeMajorProblem } from '../../../scripts/check-node';

describe('nodeMajorProblem', () => {
  it("accepts the runtime's major, whatever the minor", () => {
    expect(nodeMajorProblem('nodejs24.x', 'v24.21.0')).toBeUndefined();
  });

  it('refuses another major, saying how to run the right one', () => {
    expect(nodeMajorProblem('nodejs24.x', 'v20.20.2')).toMatch(
      /Node.js v20.20.2 runs here, but the Lambdas run on nodejs24.x: run through npm/,
    );
    expect(nodeMajorProblem('nodejs24.x', 'v2.4.0')).toBeDefined();
  });

  it('is what runs these tests: npm run puts the Lambda runtime’s major first on the PATH', () => {
    expect(nodeMajorProblem(NODE_RUNTIME_NAME, process.version)).toBeUndefined();
  });
});

describe("the package's engines", () => {
  const manifest = JSON.parse(
    readFileSync(path.join(__dirname, '..', '..', '..', 'package.json'), 'utf8'),
  ) as {
    engines: { node: string };
  };
  const floor = Number(/^>=(\d+)$/.exec(manifest.engines.node)?.[1]);

  it('ask for a Node.js still supported (22 or newer), no newer than the Lambda runtime check:node requires', () => {
    const runtimeMajor = Number(/^nodejs(\d+)\.x$/.exec(NODE_RUNTIME_NAME)?.[1]);
    expect(floor).toBeGreaterThanOrEqual(22);
    expect(floor).toBeLessThanOrEqual(runtimeMajor);
    expect(nodeMajorProblem(NODE_RUNTIME_NAME, `v${runtimeMajor}.0.0`)).toBeUndefined();
  });
});
