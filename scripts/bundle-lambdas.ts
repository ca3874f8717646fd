/**
 * `npm run bundle`: the one way this project bundles its Lambda handlers. esbuild writes one minified
 * CommonJS bundle per handler, with its source map, for the Lambda runtime; the AWS SDK v3 stays external
 * because the Node.js runtime provides it (it keeps the authorizer bundle under 300 KB and its cold start
 * short). A file is rewritten only when its content changed, through a rename, so a synth or test reading
 * the bundles never sees half a file.
 */
import { mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { type BuildOptions, build } from 'esbuild';
import {
  BUNDLES_DIRECTORY,
  LAMBDA_BUNDLES,
  type LambdaBundleName,
  NODE_RUNTIME_NAME,
  packageRoot,
} from '../lib/lambda-bundles';

/** esbuild's target for the runtime, `nodejs24.x` -> `node24`. */
export const LAMBDA_TARGET = NODE_RUNTIME_NAME.replace(/^nodejs(\d+)\.x$/, 'node$1');

/** The options every handler bundle is built with (the benchmark measures with the same ones). */
export const LAMBDA_BUILD_OPTIONS = {
  bundle: true,
  platform: 'node',
  target: LAMBDA_TARGET,
  format: 'cjs',
  minify: true,
  sourcemap: true,
  sourcesContent: false,
  external: ['@aws-sdk/*'],
  logLevel: 'warning',
} as const satisfies BuildOptions;

export interface BuiltBundle {
  readonly name: LambdaBundleName;
  readonly directory: string;
  /** Bytes of index.js. */
  readonly bytes: number;
  readonly rewritten: boolean;
}

function writeIfChanged(file: string, contents: Uint8Array): boolean {
  try {
    if (Buffer.from(contents).equals(readFileSync(file))) return false;
  } catch {
    // Not there yet.
  }
  const temporary = `${file}.${process.pid}.tmp`;
  writeFileSync(temporary, contents);
  renameSync(temporary, file);
  return true;
}

async function bundleOne(root: string, name: LambdaBundleName): Promise<BuiltBundle> {
  const directory = path.join(root, BUNDLES_DIRECTORY, name);
  const outfile = path.join(directory, 'index.js');
  const result = await build({
    ...LAMBDA_BUILD_OPTIONS,
    absWorkingDir: root,
    entryPoints: [LAMBDA_BUNDLES[name].entry],
    outfile,
    write: false,
  });
  mkdirSync(directory, { recursive: true });
  const written = new Set(result.outputFiles.map((output) => path.basename(output.path)));
  let rewritten = false;
  for (const output of result.outputFiles)
    rewritten = writeIfChanged(output.path, output.contents) || rewritten;
  for (const stale of readdirSync(directory).filter((file) => !written.has(file))) {
    rmSync(path.join(directory, stale), { force: true });
  }
  const code = result.outputFiles.find((output) => output.path === outfile);
  return { name, directory, bytes: code?.contents.byteLength ?? 0, rewritten };
}

/** Builds every bundle under `root`; the ones whose output did not change are left untouched. */
export async function bundleLambdas(root: string = packageRoot()): Promise<BuiltBundle[]> {
  const names = Object.keys(LAMBDA_BUNDLES) as LambdaBundleName[];
  return Promise.all(names.map((name) => bundleOne(root, name)));
}

if (require.main === module) {
  bundleLambdas().then(
    (bundles) => {
      for (const bundle of bundles) {
        const state = bundle.rewritten ? 'written' : 'unchanged';
        process.stderr.write(`bundle ${bundle.name}: ${(bundle.bytes / 1000).toFixed(1)} KB (${state})\n`);
      }
    },
    (error: unknown) => {
      process.stderr.write(`bundling failed: ${error instanceof Error ? error.message : String(error)}\n`);
      process.exit(1);
    },
  );
}
