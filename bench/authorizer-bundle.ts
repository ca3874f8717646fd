/**
 * The authorizer's bundle as `npm run bundle` ships it, with `@aws-sdk/*` external and bundled, and its
 * module init on every Node.js at hand (bundle.ts), in the environment a deployed authorizer starts with.
 */
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { type AccessConfig, configToEnv, LOCAL_SECRET_ENV } from '../core/settings/config';
import { NODE_RUNTIME_NAME } from '../lib/lambda-bundles';
import { LOCAL_REGION } from '../local/sns-endpoint';
import { bundleLambda, initNodeBinaries, measureModuleInit } from './bundle';
import { BENCH_PROVIDER_KEY } from './fixture';
import type { BundleResult } from './report';

export interface AuthorizerBundleOptions {
  readonly projectRoot: string;
  /** Where the bundles are written. */
  readonly outDirectory: string;
  /** The bench's access configuration: the deployed environment's. */
  readonly config: AccessConfig;
  readonly initRuns: number;
}

export async function measureAuthorizerBundles({
  projectRoot,
  outDirectory,
  config,
  initRuns,
}: AuthorizerBundleOptions): Promise<BundleResult[]> {
  await mkdir(outDirectory, { recursive: true });
  // The environment a deployed authorizer starts with (configuration only: nothing connects at init).
  const env = {
    ...configToEnv(config),
    [LOCAL_SECRET_ENV.providerKey]: BENCH_PROVIDER_KEY,
    AWS_REGION: LOCAL_REGION,
    AWS_LAMBDA_FUNCTION_NAME: 'bench-authorizer',
  };
  const entry = path.join(projectRoot, 'lambdas', 'authorizer', 'index.ts');
  const results: BundleResult[] = [];
  for (const sdk of ['external', 'bundled'] as const) {
    const outfile = path.join(outDirectory, `authorizer.sdk-${sdk}.min.js`);
    const bundle = await bundleLambda(entry, outfile, sdk);
    const lazyPackages = Object.keys(bundle.lazyBytes);
    // The deployed variant on every Node.js at hand (the Lambda runtime's major when installed).
    const nodes = initNodeBinaries(projectRoot, NODE_RUNTIME_NAME).slice(
      0,
      sdk === 'external' ? undefined : 1,
    );
    for (const node of nodes) {
      const init = await measureModuleInit(outfile, lazyPackages, env, initRuns, node.path);
      results.push({
        sdk,
        node: node.label,
        minifiedBytes: bundle.minifiedBytes,
        lazyBytes: bundle.lazyBytes,
        initMedianMs: init.medianMs,
        initSamplesMs: init.samples,
        eagerInitMedianMs: init.eagerMedianMs,
        firstPublishMedianMs: init.firstPublishMedianMs,
        lazyMedianMs: init.lazyMedianMs,
        largestModules: bundle.composition.slice(0, 15),
      });
    }
  }
  return results;
}
