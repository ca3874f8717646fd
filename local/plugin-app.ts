/**
 * The demo's own application behind the plugin: a small Express app serving the words API (GET and POST
 * /v1/words/{word}), protected by the plugin (plugin/) with the settings of a gateway of the stack, on
 * the stack's Redis and platform. Its calls and the gateway's share one budget: the same applications,
 * limits, throttles and pending usage. Usage is reported in-process, and stop() reports what is pending.
 */
import { createServer } from 'node:http';
import express from 'express';
import type { RedisConnection } from '../core/budget/redis-client';
import type { LogPort } from '../core/observability/observability';
import { type AccessConfig, configToEnv } from '../core/settings/config';
import { createAccessControl, settingsFromEnv } from '../plugin';
import { closeServer, listenOnLoopback } from './http-server';

export interface PluginApp {
  /** `http://127.0.0.1:PORT`, no trailing slash. */
  readonly url: string;
  /** The service whose budget it shares. */
  readonly serviceId: string;
  /** Stops taking calls, then reports every pending call of the plugin and closes its connections. */
  stop(): Promise<void>;
}

export interface PluginAppOptions {
  /** A gateway's settings (its platform, credential mode, mapping rules, throttles and Redis). */
  readonly config: AccessConfig;
  /** A client of the stack's Redis (the in-memory stand-in's too): the plugin talks through its own duplicate. */
  readonly redis: RedisConnection;
  /** 0 picks a free port. */
  readonly port: number;
  readonly logger: LogPort;
}

export async function startPluginApp({ config, redis, port, logger }: PluginAppOptions): Promise<PluginApp> {
  const access = createAccessControl({
    // The gateway's settings as its Lambdas read them, so the app decides as the gateway does.
    ...settingsFromEnv(configToEnv(config)),
    ...(config.platformCredential !== undefined && { platformCredential: config.platformCredential }),
    redis,
    reporting: 'in-process',
    logger,
  });
  const app = express();
  app.use(access.express());
  // The handler answers with what the plugin granted (plan, metrics, what is left), as the echo does.
  app.all('/v1/words/:word', (request, response) => {
    response.json({ app: 'express', method: request.method, path: request.path, access: request.access });
  });
  const server = createServer(app);
  try {
    const listening = await listenOnLoopback(server, port);
    let stopping: Promise<void> | undefined;
    return {
      url: `http://127.0.0.1:${listening}`,
      serviceId: config.serviceId,
      stop: () => {
        stopping ??= closeServer(server).finally(() => access.close());
        return stopping;
      },
    };
  } catch (error) {
    await access.close();
    throw error;
  }
}
