/**
 * The paths a call can take to the same budget, for the end-to-end suites to run unchanged on each: the
 * local API Gateway with the authorizer (a REST API, an HTTP API on a named stage), and the code plugin
 * in an Express app in front of the same backend role, built from the gateway's own settings, on the
 * stack's Redis and platform, publishing its report messages to the stack's topic (so the stack's
 * flush() reports its usage as it does the authorizer's). What each path answers a refusal with differs:
 * the plugin answers as HTTP means (docs/plugin.md), API Gateway as it can (docs/http-api.md).
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { SNSClient } from '@aws-sdk/client-sns';
import express from 'express';
import { SNS_CLIENT_SETTINGS } from '../../adapters/sns/client';
import { createRedisClient } from '../../core/budget/redis-client';
import { LOCAL_AWS_CREDENTIALS, LOCAL_REGION } from '../../local/sns-endpoint';
import type { LocalStack } from '../../local/stack';
import { type AccessControl, createAccessControl } from '../../plugin';
import { CapturingMetrics } from '../unit/core/fakes';
import { API_KINDS, IN_PROCESS_COMMAND_TIMEOUT_MS } from './fixtures';

export interface AccessPath {
  readonly name: 'rest' | 'http' | 'plugin';
  /** The stack file's gateway entry fields the path needs. */
  readonly entry: object;
  /** A missing, malformed or unknown credential. */
  readonly refusedCredential: number;
  /** A limit reached. */
  readonly refusedLimit: number;
  /** Totals of every metric the path's deciders emitted (the stack's handlers, or the plugin apps). */
  counts(stack: LocalStack): Readonly<Record<string, number>>;
  /** The base URL of the stack's gateway `index` on this path; `now` is the clock the stack was given. */
  urlOf(stack: LocalStack, index?: number, now?: () => number): Promise<string>;
}

const gatewayPaths: AccessPath[] = API_KINDS.map((kind) => ({
  name: kind.apiType,
  entry: kind.entry,
  refusedCredential: kind.refusedCredential,
  refusedLimit: 403,
  counts: (stack) => stack.metrics(),
  urlOf: async (stack, index = 0) => gatewayOf(stack, index).url,
}));

function gatewayOf(stack: LocalStack, index: number) {
  const gateway = stack.gateways[index];
  if (gateway === undefined) throw new Error(`the stack has no gateway ${index}`);
  return gateway;
}

interface PluginApp {
  readonly url: string;
  readonly metrics: CapturingMetrics;
  stop(): Promise<void>;
}

const apps = new WeakMap<LocalStack, Map<number, Promise<PluginApp>>>();
/** The plugin apps' metrics per stack, summed over its gateways. */
const appMetrics = new WeakMap<LocalStack, CapturingMetrics[]>();
const running = new Set<Promise<PluginApp>>();

/** The plugin in an Express app that answers every path it lets through, as the stack's echo backend does. */
async function startPluginApp(stack: LocalStack, index: number, now?: () => number): Promise<PluginApp> {
  const { config } = gatewayOf(stack, index);
  if (config.redis === undefined) throw new Error('the plugin path needs the stack to run a real Redis');
  // The stack's own bound on one event loop (fixtures.ts): a starved loop must not pass for a slow Redis.
  const redis = createRedisClient(config.redis, { commandTimeoutMs: IN_PROCESS_COMMAND_TIMEOUT_MS });
  const snsClient = new SNSClient({
    ...SNS_CLIENT_SETTINGS,
    endpoint: stack.sns.url,
    region: LOCAL_REGION,
    credentials: LOCAL_AWS_CREDENTIALS,
  });
  const metrics = new CapturingMetrics();
  appMetrics.set(stack, [...(appMetrics.get(stack) ?? []), metrics]);
  const control: AccessControl = createAccessControl({
    ...config,
    metrics,
    redis,
    reporting: 'sns',
    snsClient,
    ...(now && { now }),
  });
  const app = express();
  app.use(control.express());
  app.use((req, res) => {
    res.json({ path: req.originalUrl });
  });
  const server = http.createServer(app);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    metrics,
    async stop() {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
      await control.close();
      snsClient.destroy();
      redis.disconnect();
    },
  };
}

export const PLUGIN_PATH: AccessPath = {
  name: 'plugin',
  entry: {},
  refusedCredential: 401,
  refusedLimit: 429,
  counts: (stack) => {
    const totals: Record<string, number> = {};
    for (const { counts } of appMetrics.get(stack) ?? []) {
      for (const [name, value] of Object.entries(counts)) totals[name] = (totals[name] ?? 0) + value;
    }
    return totals;
  },
  urlOf: async (stack, index = 0, now) => {
    let perGateway = apps.get(stack);
    if (perGateway === undefined) {
      perGateway = new Map();
      apps.set(stack, perGateway);
    }
    let app = perGateway.get(index);
    if (app === undefined) {
      app = startPluginApp(stack, index, now);
      perGateway.set(index, app);
      running.add(app);
    }
    return (await app).url;
  },
};

/** The REST API's authorizer, the HTTP API's, and the plugin. */
export const ACCESS_PATHS: readonly AccessPath[] = [...gatewayPaths, PLUGIN_PATH];

/** The REST API's authorizer and the plugin, for suites whose subject is not the gateway's format. */
export const AUTHORIZER_AND_PLUGIN: readonly AccessPath[] = [gatewayPaths[0] as AccessPath, PLUGIN_PATH];

/** Stops every plugin app started so far; call it before the stacks they run on stop. */
export async function stopPluginApps(): Promise<void> {
  const started = [...running];
  running.clear();
  await Promise.all(started.map(async (app) => (await app).stop()));
}
