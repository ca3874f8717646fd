/**
 * `npm run build` (and `npm pack`, through prepack): the package as it ships. The Lambda bundles
 * (dist/bundles/), then the constructs compiled to JavaScript with their declarations (dist/lib/, the
 * gateway contract they share with the Lambdas in dist/contract/, and the
 * part of core/ they use, in dist/core/, and the docs handler's asset list in dist/lambdas/), from a clean output so no stale module ships.
 */
import { execFileSync } from 'node:child_process';
import { rmSync } from 'node:fs';
import * as path from 'node:path';
import { packageRoot } from '../lib/lambda-bundles';
import { bundleLambdas } from './bundle-lambdas';

async function main(): Promise<void> {
  const root = packageRoot();
  for (const compiled of ['contract', 'core', 'lib', 'lambdas']) {
    rmSync(path.join(root, 'dist', compiled), { recursive: true, force: true });
  }
  await bundleLambdas(root);
  execFileSync(process.execPath, [require.resolve('typescript/bin/tsc'), '-p', 'tsconfig.build.json'], {
    cwd: root,
    stdio: 'inherit',
  });
}

main().catch((error: unknown) => {
  process.stderr.write(`build failed: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});
