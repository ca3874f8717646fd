/**
 * `npm run check:node`: the Node.js running the tests, the local stack and the bench must be the Lambda
 * runtime's major, or a test could pass on a Node the functions never run on. The `node` dev dependency
 * puts that Node first on `npm run`'s PATH; CI (.ci/run) runs this before the tests.
 */
import { NODE_RUNTIME_NAME } from '../lib/lambda-bundles';

/** Why `version` (process.version) is not the major of `runtime` (`nodejs24.x`), or undefined when it is. */
export function nodeMajorProblem(runtime: string, version: string): string | undefined {
  const wanted = /^nodejs(\d+)\.x$/.exec(runtime)?.[1];
  if (wanted === undefined) return `the Lambda runtime ${runtime} names no Node.js major`;
  const running = /^v?(\d+)\./.exec(version)?.[1];
  if (running === wanted) return undefined;
  return `Node.js ${version} runs here, but the Lambdas run on ${runtime}: run through npm (npm test, npm start, npm run bench), which puts the project's node ${wanted} dev dependency first on the PATH (npm ci installs it)`;
}

if (require.main === module) {
  const problem = nodeMajorProblem(NODE_RUNTIME_NAME, process.version);
  if (problem !== undefined) {
    console.error(problem);
    process.exit(1);
  }
  console.log(`Node.js ${process.version} matches the Lambda runtime ${NODE_RUNTIME_NAME}`);
}
