/**
 * `npm run build` (and `npm pack`, through prepack): a package as it ships, from a clean output so no stale
 * module ships.
 * - `construct-library` (the default): the Lambda bundles (dist/bundles/), then the constructs compiled to
 *   JavaScript with their declarations (dist/lib/, the gateway contract they share with the Lambdas in
 *   dist/contract/, the part of core/ they use in dist/core/, and the docs handler's asset list in
 *   dist/lambdas/).
 * - `plugin` (the workspace package packages/plugin, whose prepack runs it): plugin/ and the part of core/
 *   it uses, compiled with their declarations into packages/plugin/dist/, and the licence beside them
 *   (docs/plugin.md, Packaging).
 */
import { execFileSync } from 'node:child_process';
import { copyFileSync, rmSync } from 'node:fs';
import * as path from 'node:path';
import { packageRoot } from '../lib/lambda-bundles';
import { bundleLambdas } from './bundle-lambdas';

function compile(root: string, project: string): void {
  execFileSync(process.execPath, [require.resolve('typescript/bin/tsc'), '-p', project], {
    cwd: root,
    stdio: 'inherit',
  });
}

const TARGETS = {
  'construct-library': async (root: string) => {
    for (const compiled of ['contract', 'core', 'lib', 'lambdas']) {
      rmSync(path.join(root, 'dist', compiled), { recursive: true, force: true });
    }
    await bundleLambdas(root);
    compile(root, 'tsconfig.build.json');
  },
  plugin: async (root: string) => {
    const packageDir = path.join(root, 'packages', 'plugin');
    rmSync(path.join(packageDir, 'dist'), { recursive: true, force: true });
    compile(root, 'tsconfig.plugin.json');
    // The licence ships in every package (npm takes LICENSE from the package's own folder).
    copyFileSync(path.join(root, 'LICENSE'), path.join(packageDir, 'LICENSE'));
  },
} as const;

type Target = keyof typeof TARGETS;

function targetOf(argv: readonly string[]): Target {
  const [name = 'construct-library', ...rest] = argv;
  if (rest.length > 0 || !Object.hasOwn(TARGETS, name)) {
    throw new Error(`usage: build.ts [${Object.keys(TARGETS).join(' | ')}] (got ${argv.join(' ')})`);
  }
  return name as Target;
}

async function main(): Promise<void> {
  await TARGETS[targetOf(process.argv.slice(2))](packageRoot());
}

main().catch((error: unknown) => {
  process.stderr.write(`build failed: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});
