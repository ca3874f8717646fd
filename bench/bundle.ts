/**
 * The authorizer as Lambda runs it: the esbuild bundle `npm run bundle` ships (the same options,
 * scripts/bundle-lambdas.ts). The Node.js Lambda runtime provides the AWS SDK v3, so `@aws-sdk/*` stays
 * external in the deployed bundle; the variant with the SDK bundled is measured too, for a runtime that
 * lacks it.
 */
import { spawn } from 'node:child_process';
import { stat } from 'node:fs/promises';
import path from 'node:path';
import { build, type Metafile } from 'esbuild';
import { LAMBDA_BUILD_OPTIONS } from '../scripts/bundle-lambdas';
import { percentile } from './stats';

export interface BundleComposition {
  /** npm package name, or `(project) <path>` for the project's own modules. */
  readonly module: string;
  readonly bytes: number;
}

export interface BundleMeasurement {
  readonly outfile: string;
  readonly sdk: 'external' | 'bundled';
  readonly minifiedBytes: number;
  /** Bytes of the output by package (project modules one by one), largest first. */
  readonly composition: readonly BundleComposition[];
}

/** The last node_modules segment names the package, also for a copy nested inside another package. */
const PACKAGE_PATH = /^(?:.*\/)?node_modules\/((?:@[^/]+\/)?[^/]+)\//;

/** Groups esbuild's per-input output bytes by npm package; the project's own files stay separate. */
export function bundleComposition(
  inputs: Readonly<Record<string, { readonly bytesInOutput: number }>>,
): BundleComposition[] {
  const byModule = new Map<string, number>();
  for (const [path, { bytesInOutput }] of Object.entries(inputs)) {
    const match = PACKAGE_PATH.exec(path);
    const module = match ? (match[1] as string) : `(project) ${path}`;
    byModule.set(module, (byModule.get(module) ?? 0) + bytesInOutput);
  }
  return [...byModule]
    .map(([module, bytes]) => ({ module, bytes }))
    .sort((a, b) => b.bytes - a.bytes || a.module.localeCompare(b.module));
}

export async function bundleAuthorizer(
  entry: string,
  outfile: string,
  sdk: 'external' | 'bundled',
): Promise<BundleMeasurement> {
  const workingDirectory = process.cwd();
  const result = await build({
    ...LAMBDA_BUILD_OPTIONS,
    absWorkingDir: workingDirectory,
    entryPoints: [entry],
    outfile,
    metafile: true,
    logLevel: 'silent',
    external: sdk === 'external' ? LAMBDA_BUILD_OPTIONS.external : [],
  });
  const metafile: Metafile = result.metafile;
  // Metafile paths are relative to the working directory esbuild ran in.
  const output = Object.entries(metafile.outputs).find(
    ([relative]) => path.resolve(workingDirectory, relative) === path.resolve(outfile),
  );
  if (output === undefined) throw new Error(`esbuild metafile has no output for ${outfile}`);
  return {
    outfile,
    sdk,
    minifiedBytes: (await stat(outfile)).size,
    composition: bundleComposition(output[1].inputs),
  };
}

const INIT_TIMEOUT_MS = 30_000;

/**
 * The module's init as Lambda's cold start pays it: require() of the bundle in a fresh Node process,
 * timed inside that process (process start-up itself excluded). Exits right after, whatever the
 * module left open (a Redis socket, timers).
 */
const REQUIRE_TIMER = [
  'const start = process.hrtime.bigint();',
  'require(process.argv[1]);',
  'process.stdout.write(String(Number(process.hrtime.bigint() - start) / 1e6));',
  'process.exit(0);',
].join('');

function timeOneRequire(file: string, env: Readonly<Record<string, string>>): Promise<number> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['-e', REQUIRE_TIMER, file], {
      env: { PATH: process.env.PATH ?? '', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
      timeout: INIT_TIMEOUT_MS,
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk;
    });
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk;
    });
    child.once('error', reject);
    child.once('close', (code, signal) => {
      const ms = Number(stdout);
      if (code === 0 && stdout !== '' && Number.isFinite(ms)) resolve(ms);
      else reject(new Error(`require(${file}) failed (exit ${code ?? signal}): ${stderr.slice(-2000)}`));
    });
  });
}

export interface InitMeasurement {
  readonly samples: readonly number[];
  readonly medianMs: number;
}

export async function measureModuleInit(
  file: string,
  env: Readonly<Record<string, string>>,
  runs: number,
): Promise<InitMeasurement> {
  const samples: number[] = [];
  for (let i = 0; i < runs; i++) samples.push(await timeOneRequire(file, env));
  return {
    samples,
    medianMs: percentile(
      [...samples].sort((a, b) => a - b),
      50,
    ),
  };
}
