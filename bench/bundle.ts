/**
 * A Lambda handler as Lambda runs it (the authorizer; the portal, bench/portal.ts): the esbuild bundle
 * `npm run bundle` ships (the same options, scripts/bundle-lambdas.ts). The Node.js Lambda runtime provides the AWS SDK v3, so `@aws-sdk/*` stays
 * external in the deployed bundle; the variant with the SDK bundled is measured too, for a runtime that
 * lacks it.
 */
import { execFileSync, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { stat } from 'node:fs/promises';
import path from 'node:path';
import { build, type Metafile } from 'esbuild';
import type { CredentialMode } from '../core/settings/config';
import {
  LAMBDA_BUILD_OPTIONS,
  lazyPackageBuildOptions,
  lazyPackageFile,
  mainBuildOptions,
} from '../scripts/bundle-lambdas';
import { median } from './stats';

/** The lazily loaded packages each credential mode reads: the platform's XML in all, tokens in oauth only. */
export const MODE_LAZY_PACKAGES: Readonly<Record<CredentialMode, readonly string[]>> = {
  user_key: ['fast-xml-parser'],
  app_id: ['fast-xml-parser'],
  oauth: ['fast-xml-parser', 'jose'],
};

export interface BundleComposition {
  /** npm package name, or `(project) <path>` for the project's own modules. */
  readonly module: string;
  readonly bytes: number;
}

export interface BundleMeasurement {
  readonly outfile: string;
  readonly sdk: 'external' | 'bundled';
  /** Bytes of the main file: what module init reads. */
  readonly minifiedBytes: number;
  /** Bytes of each package kept in its own file beside the main one, loaded on first use. */
  readonly lazyBytes: Readonly<Record<string, number>>;
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

export async function bundleLambda(
  entry: string,
  outfile: string,
  sdk: 'external' | 'bundled',
): Promise<BundleMeasurement> {
  const workingDirectory = process.cwd();
  const used = new Set<string>();
  const result = await build({
    ...mainBuildOptions(used, workingDirectory),
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
  const lazyBytes: Record<string, number> = {};
  for (const packageName of used) {
    const lazyFile = path.join(path.dirname(outfile), lazyPackageFile(packageName));
    await build({
      ...lazyPackageBuildOptions(packageName),
      absWorkingDir: workingDirectory,
      outfile: lazyFile,
      logLevel: 'silent',
    });
    lazyBytes[packageName] = (await stat(lazyFile)).size;
  }
  return {
    outfile,
    sdk,
    minifiedBytes: (await stat(outfile)).size,
    lazyBytes,
    composition: bundleComposition(output[1].inputs),
  };
}

const INIT_TIMEOUT_MS = 30_000;

/**
 * The module's init as Lambda's cold start pays it: require() of the bundle in a fresh Node process,
 * timed inside that process (process start-up itself excluded). Then, in the same process, what first
 * use adds: the SNS SDK and client of the first publish, and each package kept beside the bundle.
 * Exits right after, whatever the module left open (a Redis socket, timers).
 */
const REQUIRE_TIMER = `
const path = require('node:path');
const timed = (load) => { const start = process.hrtime.bigint(); load(); return Number(process.hrtime.bigint() - start) / 1e6; };
const initMs = timed(() => require(process.argv[1]));
const firstPublishMs = timed(() => new (require('@aws-sdk/client-sns').SNSClient)({ region: 'us-east-1' }));
const lazyMs = {};
for (const [name, file] of JSON.parse(process.argv[2])) lazyMs[name] = timed(() => require(path.join(path.dirname(process.argv[1]), file)));
process.stdout.write(JSON.stringify({ initMs, firstPublishMs, lazyMs }));
process.exit(0);`;

interface InitSample {
  readonly initMs: number;
  readonly firstPublishMs: number;
  readonly lazyMs: Readonly<Record<string, number>>;
}

function timeOneRequire(
  node: string,
  file: string,
  lazyPackages: readonly string[],
  env: Readonly<Record<string, string>>,
): Promise<InitSample> {
  const lazyFiles = JSON.stringify(lazyPackages.map((name) => [name, lazyPackageFile(name)]));
  return new Promise((resolve, reject) => {
    const child = spawn(node, ['-e', REQUIRE_TIMER, file, lazyFiles], {
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
      let sample: InitSample | undefined;
      try {
        sample = JSON.parse(stdout) as InitSample;
      } catch {
        sample = undefined;
      }
      if (code === 0 && sample !== undefined && Number.isFinite(sample.initMs)) resolve(sample);
      else reject(new Error(`require(${file}) failed (exit ${code ?? signal}): ${stderr.slice(-2000)}`));
    });
  });
}

export interface InitMeasurement {
  readonly samples: readonly number[];
  readonly medianMs: number;
  /** What the first publish adds: loading the SNS SDK and building its client (median). */
  readonly firstPublishMedianMs: number;
  /** What each lazily loaded package adds on its first use (median). */
  readonly lazyMedianMs: Readonly<Record<string, number>>;
  /**
   * Everything loaded at init, as before issue 23 (the bundle, the SNS SDK and client, every lazy package),
   * median of the per-process sums: the old module init, measured in the same processes.
   */
  readonly eagerMedianMs: number;
}

export async function measureModuleInit(
  file: string,
  lazyPackages: readonly string[],
  env: Readonly<Record<string, string>>,
  runs: number,
  node: string = process.execPath,
): Promise<InitMeasurement> {
  const samples: InitSample[] = [];
  for (let i = 0; i < runs; i++) samples.push(await timeOneRequire(node, file, lazyPackages, env));
  const sum = (values: Readonly<Record<string, number>>) => Object.values(values).reduce((a, b) => a + b, 0);
  return {
    samples: samples.map((sample) => sample.initMs),
    medianMs: median(samples.map((sample) => sample.initMs)),
    firstPublishMedianMs: median(samples.map((sample) => sample.firstPublishMs)),
    lazyMedianMs: Object.fromEntries(
      lazyPackages.map((name) => [name, median(samples.map((sample) => sample.lazyMs[name] ?? 0))]),
    ),
    eagerMedianMs: median(
      samples.map((sample) => sample.initMs + sample.firstPublishMs + sum(sample.lazyMs)),
    ),
  };
}

/** A Node.js binary init is measured on. */
export interface NodeBinary {
  readonly label: string;
  readonly path: string;
}

/**
 * This machine's Node.js, and the Lambda runtime's major when the `node` package of the npm registry is
 * installed as a dev dependency (node_modules/.bin/node): module init differs between majors.
 */
export function initNodeBinaries(projectRoot: string, lambdaRuntime: string): NodeBinary[] {
  const binaries: NodeBinary[] = [{ label: `${process.version} (this machine)`, path: process.execPath }];
  const runtimeNode = path.join(projectRoot, 'node_modules', '.bin', 'node');
  if (existsSync(runtimeNode)) {
    const version = execFileSync(runtimeNode, ['--version'], {
      encoding: 'utf8',
      timeout: INIT_TIMEOUT_MS,
    }).trim();
    binaries.push({ label: `${version} (node_modules/.bin/node, for ${lambdaRuntime})`, path: runtimeNode });
  }
  return binaries;
}
