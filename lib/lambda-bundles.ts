/**
 * The Lambda handlers this package ships prebuilt, and where their bundles live. `npm run bundle`
 * (scripts/bundle-lambdas.ts) writes them; the constructs deploy them with `Code.fromAsset`. One path in
 * this repository and in an installed package: a consumer's synth needs neither our sources nor our lock
 * file, only the bundles inside the package.
 */
import { existsSync, readFileSync } from 'node:fs';
import * as path from 'node:path';

export const PACKAGE_NAME = 'apigw-access-management';

/** The Lambda runtime the bundles are built for (esbuild's target follows it). */
export const NODE_RUNTIME_NAME = 'nodejs24.x';

/** Each bundle: its entry, relative to the package root. */
export const LAMBDA_BUNDLES = {
  authorizer: { entry: 'lambdas/authorizer/index.ts' },
  reporter: { entry: 'lambdas/reporter/index.ts' },
  echo: { entry: 'lambdas/echo/index.ts' },
  docs: { entry: 'lambdas/docs/index.ts' },
  soap: { entry: 'lambdas/soap/index.ts' },
  token: { entry: 'lambdas/token/index.ts' },
  webhooks: { entry: 'lambdas/webhooks/index.ts' },
  portal: { entry: 'lambdas/portal/index.ts' },
} as const;

export type LambdaBundleName = keyof typeof LAMBDA_BUNDLES;

/**
 * Packages a bundle keeps in their own files (`lazy/<package>.js` beside index.js), required when the code
 * first asks for them: the authorizer reads the platform's XML on first calls only and verifies tokens in
 * oauth mode only, so its module init, which every cold start pays, reads neither (issue 23).
 */
export const LAZY_PACKAGES: readonly string[] = ['fast-xml-parser', 'jose'];

/** The folder, beside a bundle's index.js, of its lazily loaded packages. */
export const LAZY_PACKAGES_FOLDER = 'lazy';

/** Bundles relative to the package root: `dist/bundles/<name>/index.js` and its source map. */
export const BUNDLES_DIRECTORY = path.join('dist', 'bundles');

/**
 * The folder of this package's package.json: one level above lib/ in this repository, two above
 * dist/lib/ in an installed package.
 */
export function packageRoot(from: string = __dirname): string {
  for (let dir = from; ; dir = path.dirname(dir)) {
    const manifest = path.join(dir, 'package.json');
    if (existsSync(manifest) && JSON.parse(readFileSync(manifest, 'utf8')).name === PACKAGE_NAME) return dir;
    if (path.dirname(dir) === dir) throw new Error(`no package.json of ${PACKAGE_NAME} above ${from}`);
  }
}

/** The folder of one prebuilt bundle; a clear error when it was never built. */
export function bundleDirectory(name: LambdaBundleName, root: string = packageRoot()): string {
  const directory = path.join(root, BUNDLES_DIRECTORY, name);
  if (!existsSync(path.join(directory, 'index.js'))) {
    throw new Error(
      `The ${name} Lambda bundle is missing at ${directory}: run \`npm run bundle\` in ${root} ` +
        '(the CDK app and the tests run it first; an installed package ships it)',
    );
  }
  return directory;
}
