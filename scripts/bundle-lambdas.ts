/**
 * `npm run bundle`: the one way this project bundles its Lambda handlers. esbuild writes one minified
 * CommonJS bundle per handler, with its source map, for the Lambda runtime; the AWS SDK v3 stays external
 * because the Node.js runtime provides it (it keeps the authorizer bundle under 300 KB and its cold start
 * short). A file is rewritten only when its content changed, through a rename, so a synth or test reading
 * the bundles never sees half a file.
 */
import { mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { type BuildOptions, build, type Plugin } from 'esbuild';
import { ASSET_TYPES, DOCS_ASSETS_FOLDER } from '../lambdas/docs/handler';
import {
  BUNDLES_DIRECTORY,
  LAMBDA_BUNDLES,
  LAZY_PACKAGES,
  LAZY_PACKAGES_FOLDER,
  type LambdaBundleName,
  NODE_RUNTIME_NAME,
  packageRoot,
} from '../lib/lambda-bundles';
import { luaCompactionPlugin } from './lua-compaction';

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

/**
 * What a bundle loads on first use: a package of LAZY_PACKAGES by its name, or one of the project's
 * modules that the code imports dynamically, by its path from the project root (`./core/...`).
 */
const PROJECT_MODULE = /^\.\//;

/** The file, relative to a bundle's index.js, that holds one package or module it loads on first use. */
export function lazyPackageFile(packageName: string): string {
  return `${LAZY_PACKAGES_FOLDER}/${packageName.replace(PROJECT_MODULE, '').replaceAll('/', '+')}.js`;
}

/**
 * Leaves out of the bundle what is loaded on first use: LAZY_PACKAGES, and the project's modules that the
 * code imports dynamically (`await import('./x')`, for a part only some configurations use). An import of
 * one becomes a require of its own file beside the bundle (see lazyPackageFile), made when the code first
 * asks for it. Such a module's file carries its own copies of the modules it imports, so nothing it holds
 * is shared with the bundle but what the caller hands it; what it throws, it catches. What the bundle
 * asked for is added to `used`.
 */
function lazyPackagesPlugin(used: Set<string>, root: string): Plugin {
  return {
    name: 'lazy-packages',
    setup(plugin) {
      plugin.onResolve({ filter: /^[^./]/ }, (args) => {
        if (!LAZY_PACKAGES.includes(args.path)) return undefined;
        used.add(args.path);
        return { path: `./${lazyPackageFile(args.path)}`, external: true };
      });
      plugin.onResolve({ filter: /^\./ }, (args) => {
        if (args.kind !== 'dynamic-import') return undefined;
        const module = `./${path.relative(root, path.resolve(args.resolveDir, args.path)).split(path.sep).join('/')}`;
        used.add(module);
        return { path: `./${lazyPackageFile(module)}`, external: true };
      });
    },
  };
}

/** The esbuild options of a bundle's index.js; what it loads on first use is added to `used`. */
export function mainBuildOptions(used: Set<string>, root = process.cwd()): BuildOptions {
  return { ...LAMBDA_BUILD_OPTIONS, plugins: [lazyPackagesPlugin(used, root), luaCompactionPlugin()] };
}

/** The esbuild options of one lazily loaded package's or module's file (a CommonJS module of it whole). */
export function lazyPackageBuildOptions(packageName: string): BuildOptions {
  return PROJECT_MODULE.test(packageName)
    ? { ...LAMBDA_BUILD_OPTIONS, entryPoints: [`${packageName}.ts`], plugins: [luaCompactionPlugin()] }
    : { ...LAMBDA_BUILD_OPTIONS, entryPoints: [packageName] };
}

/** Files a bundle serves beside its code, copied from an installed package into a folder of the bundle. */
const BUNDLE_FILES: Partial<
  Record<LambdaBundleName, { readonly folder: string; readonly from: string; readonly files: string[] }>
> = {
  docs: { folder: DOCS_ASSETS_FOLDER, from: 'swagger-ui-dist', files: Object.keys(ASSET_TYPES) },
  // The portal serves the same Swagger UI under /portal/docs, with the developer's credentials filled in.
  portal: { folder: DOCS_ASSETS_FOLDER, from: 'swagger-ui-dist', files: Object.keys(ASSET_TYPES) },
};

export interface BuiltBundle {
  readonly name: LambdaBundleName;
  readonly directory: string;
  /** Bytes of index.js. */
  readonly bytes: number;
  /** Bytes of each package loaded on first use, by package name. */
  readonly lazyBytes: Readonly<Record<string, number>>;
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
  const used = new Set<string>();
  const result = await build({
    ...mainBuildOptions(used, root),
    absWorkingDir: root,
    entryPoints: [LAMBDA_BUNDLES[name].entry],
    outfile,
    write: false,
  });
  const lazyPackages = [...used].sort();
  const lazyResults = await Promise.all(
    lazyPackages.map((packageName) =>
      build({
        ...lazyPackageBuildOptions(packageName),
        absWorkingDir: root,
        outfile: path.join(directory, lazyPackageFile(packageName)),
        write: false,
      }),
    ),
  );
  mkdirSync(directory, { recursive: true });
  const written = new Set(result.outputFiles.map((output) => path.basename(output.path)));
  let rewritten = false;
  for (const output of result.outputFiles)
    rewritten = writeIfChanged(output.path, output.contents) || rewritten;
  const lazyBytes: Record<string, number> = {};
  if (lazyPackages.length > 0) {
    const folder = path.join(directory, LAZY_PACKAGES_FOLDER);
    mkdirSync(folder, { recursive: true });
    const lazyWritten = new Set<string>();
    lazyResults.forEach((lazy, index) => {
      for (const output of lazy.outputFiles) {
        rewritten = writeIfChanged(output.path, output.contents) || rewritten;
        lazyWritten.add(path.basename(output.path));
        if (output.path.endsWith('.js'))
          lazyBytes[lazyPackages[index] as string] = output.contents.byteLength;
      }
    });
    for (const stale of readdirSync(folder).filter((file) => !lazyWritten.has(file))) {
      rmSync(path.join(folder, stale), { force: true });
    }
    written.add(LAZY_PACKAGES_FOLDER);
  }
  const extra = BUNDLE_FILES[name];
  if (extra) {
    const source = path.dirname(require.resolve(`${extra.from}/package.json`, { paths: [root] }));
    mkdirSync(path.join(directory, extra.folder), { recursive: true });
    for (const file of extra.files) {
      const contents = readFileSync(path.join(source, file));
      rewritten = writeIfChanged(path.join(directory, extra.folder, file), contents) || rewritten;
    }
    written.add(extra.folder);
  }
  for (const stale of readdirSync(directory).filter((file) => !written.has(file))) {
    rmSync(path.join(directory, stale), { force: true });
  }
  const code = result.outputFiles.find((output) => output.path === outfile);
  return { name, directory, bytes: code?.contents.byteLength ?? 0, lazyBytes, rewritten };
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
        const lazy = Object.entries(bundle.lazyBytes).map(
          ([name, bytes]) => `, ${name} on first use ${(bytes / 1000).toFixed(1)} KB`,
        );
        process.stderr.write(
          `bundle ${bundle.name}: ${(bundle.bytes / 1000).toFixed(1)} KB${lazy.join('')} (${state})\n`,
        );
      }
    },
    (error: unknown) => {
      process.stderr.write(`bundling failed: ${error instanceof Error ? error.message : String(error)}\n`);
      process.exit(1);
    },
  );
}
