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
