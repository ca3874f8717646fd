/**
 * Before any test: the Lambda bundles the constructs deploy (`npm run bundle`, the same step as
 * `cdk synth` and `npm pack`). Unchanged bundles are not rewritten, so this takes about a second.
 */
import { bundleLambdas } from '../scripts/bundle-lambdas';

export async function setup(): Promise<void> {
  await bundleLambdas();
}
