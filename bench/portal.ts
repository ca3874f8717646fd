/**
 * The developer portal's Lambda (docs/portal.md): the module init of the bundle `npm run bundle` ships,
 * timed as the authorizer's is (bench/bundle.ts), and the warm latency of its main pages, each GET made
 * through the handler the Lambda runs, on the bench's Redis and local platform (the local stack's wiring,
 * local/portal.ts), after a warm-up call that pays the first reads.
 */
import path from 'node:path';
import { createRedisClient } from '../core/budget/redis-client';
import { silentLogger } from '../core/observability/observability';
import { platformClientFromConfig } from '../core/platform/client';
import { DEFAULT_PORTAL_SETTINGS } from '../core/portal/settings';
import { type AccessConfig, configToEnv } from '../core/settings/config';
import { docsHandlerFromEnv } from '../lambdas/docs/index';
import { PORTAL_ENV } from '../lambdas/portal/env';
import { NODE_RUNTIME_NAME } from '../lib/lambda-bundles';
import { startMailSink } from '../local/mail-sink';
import { localPortal } from '../local/portal';
import { proxyEvent } from '../local/proxy-event';
import { LOCAL_REGION } from '../local/sns-endpoint';
import { bundleLambda, initNodeBinaries, measureModuleInit } from './bundle';
import { percentile } from './stats';

/** swagger-ui-dist's files, served from the package as installed (as `npm start` serves them). */
const SWAGGER_UI_DIR = path.dirname(require.resolve('swagger-ui-dist/package.json'));

/** The pages a developer opens first: the plans and sign-up, and the documentation. */
export const PORTAL_PAGES = ['/portal', '/portal/docs'] as const;
export type PortalPage = (typeof PORTAL_PAGES)[number];

export interface PortalInitResult {
  /** The Node.js binary init was measured on. */
  readonly node: string;
  readonly minifiedBytes: number;
  readonly initMedianMs: number;
}

export interface PortalPageResult {
  readonly page: PortalPage;
  readonly calls: number;
  readonly p50Ms: number;
  readonly p95Ms: number;
}

export interface PortalResult {
  readonly init: readonly PortalInitResult[];
  readonly pages: readonly PortalPageResult[];
}

/** The p50 and p95 (nearest rank, an observed latency) of one page's warm calls, given in milliseconds. */
export function pageLatency(page: PortalPage, latenciesMs: readonly number[]): PortalPageResult {
  const sorted = [...latenciesMs].sort((a, b) => a - b);
  return { page, calls: sorted.length, p50Ms: percentile(sorted, 50), p95Ms: percentile(sorted, 95) };
}

async function measureInit(
  projectRoot: string,
  outDirectory: string,
  config: AccessConfig,
  runs: number,
): Promise<PortalInitResult[]> {
  const outfile = path.join(outDirectory, 'portal.sdk-external.min.js');
  const bundle = await bundleLambda(
    path.join(projectRoot, 'lambdas', 'portal', 'index.ts'),
    outfile,
    'external',
  );
  // The environment a deployed portal starts with: its secret is read at the first call, not at init.
  const env = {
    ...configToEnv(config),
    [PORTAL_ENV.settings]: JSON.stringify(DEFAULT_PORTAL_SETTINGS),
    [PORTAL_ENV.adminTokenSecretArn]: 'arn:aws:secretsmanager:us-east-1:000000000000:secret:bench-portal',
    AWS_REGION: LOCAL_REGION,
    AWS_LAMBDA_FUNCTION_NAME: 'bench-portal',
  };
  const results: PortalInitResult[] = [];
  for (const node of initNodeBinaries(projectRoot, NODE_RUNTIME_NAME)) {
    const init = await measureModuleInit(outfile, Object.keys(bundle.lazyBytes), env, runs, node.path);
    results.push({ node: node.label, minifiedBytes: bundle.minifiedBytes, initMedianMs: init.medianMs });
  }
  return results;
}

/** A page answered but not as it should (the plans unread, an error page): its latency would mislead. */
function checkAnswer(page: PortalPage, statusCode: number, body: string): void {
  if (statusCode !== 200 || (page === '/portal' && !body.includes('<table'))) {
    throw new Error(`bench portal: GET ${page} answered ${statusCode}: ${body.slice(0, 300)}`);
  }
}

async function measurePages(
  config: AccessConfig,
  providerKey: string,
  calls: number,
): Promise<PortalPageResult[]> {
  const redisSettings = config.redis as NonNullable<AccessConfig['redis']>;
  const redis = createRedisClient(redisSettings);
  const mail = await startMailSink(DEFAULT_PORTAL_SETTINGS.mailFrom);
  try {
    const { methods } = localPortal({
      config,
      settings: DEFAULT_PORTAL_SETTINGS,
      builtInIssuer: false,
      redis,
      platform: platformClientFromConfig(config, providerKey),
      mail,
      docs: docsHandlerFromEnv(configToEnv(config), SWAGGER_UI_DIR),
      logger: silentLogger,
      now: Date.now,
      mount: '',
    });
    const handler = (methods[0] as (typeof methods)[number]).integration;
    const results: PortalPageResult[] = [];
    for (const page of PORTAL_PAGES) {
      const event = proxyEvent('GET', page, null, { Host: '127.0.0.1', Accept: 'text/html' });
      const warmUp = await handler(event);
      checkAnswer(page, warmUp.statusCode, warmUp.body);
      const latenciesMs: number[] = [];
      for (let i = 0; i < calls; i++) {
        const start = process.hrtime.bigint();
        const answer = await handler(event);
        latenciesMs.push(Number(process.hrtime.bigint() - start) / 1e6);
        checkAnswer(page, answer.statusCode, answer.body);
      }
      results.push(pageLatency(page, latenciesMs));
    }
    return results;
  } finally {
    await mail.stop();
    redis.disconnect();
  }
}

export interface PortalBenchOptions {
  readonly projectRoot: string;
  /** Where the bundle is written. */
  readonly outDirectory: string;
  /** The bench's access configuration (its Redis and local platform). */
  readonly config: AccessConfig;
  readonly providerKey: string;
  readonly initRuns: number;
  readonly callsPerPage: number;
}

export async function measurePortal(options: PortalBenchOptions): Promise<PortalResult> {
  const { projectRoot, config } = options;
  return {
    init: await measureInit(projectRoot, options.outDirectory, config, options.initRuns),
    pages: await measurePages(config, options.providerKey, options.callsPerPage),
  };
}
