/**
 * What the plugin decides with, built once per process: the platform credential read (from the
 * environment or a secret), the platform clients, the report channel and the core's authorizer. A build
 * that fails (a secret not readable yet) is tried again on the next call.
 */
import type { RedisConnection } from '../core/budget/redis-client';
import { type AccessAuthorizer, createAccessAuthorizer } from '../core/decision/access';
import type { LogPort, MetricsPort } from '../core/observability/observability';
import { type PlatformClient, platformClientFromConfig } from '../core/platform/client';
import type { PlatformPort } from '../core/platform/types';
import type { AccessConfig } from '../core/settings/config';
import { REPORTING_MODES, type ReportChannel } from './reporting';
import { platformCredentialOf } from './secrets';
import type { PluginConfig } from './settings';
import { tracedPlatform } from './tracing';

export interface Parts {
  readonly access: AccessAuthorizer;
  readonly config: AccessConfig;
  /** The decision's client, and the in-process reporter's (longer deadlines), closed with the plugin. */
  readonly platforms: readonly PlatformClient[];
  readonly reporting: ReportChannel | undefined;
}

export interface Ports {
  readonly redis: RedisConnection | undefined;
  readonly logger: LogPort;
  readonly metrics: MetricsPort;
  readonly now: () => number;
}

async function buildParts(plugin: PluginConfig, ports: Ports): Promise<Parts> {
  const credential = await platformCredentialOf(plugin.access);
  const config: AccessConfig = { ...plugin.access, platformCredential: credential };
  const platform = platformClientFromConfig(config, credential, { caller: 'authorizer' });
  const reporter = platformClientFromConfig(config, credential, { caller: 'reporter' });
  const traced = (client: PlatformClient): PlatformPort => (plugin.tracing ? tracedPlatform(client) : client);
  const port = traced(platform);
  const { redis, logger, metrics, now } = ports;
  const reporting =
    redis &&
    REPORTING_MODES[plugin.reporting].start({
      config,
      redis,
      platform: traced(reporter),
      now,
      logger,
      metrics,
      sweepIntervalMs: plugin.sweepIntervalMs,
      snsClient: plugin.snsClient,
    });
  const access = createAccessAuthorizer({
    config,
    ...(redis && { redis }),
    ...(reporting && { publisher: reporting.publisher }),
    platform: port,
    now,
    logger,
    metrics,
  });
  return { access, config, platforms: [platform, reporter], reporting };
}

/** The parts, built on first use and kept. */
export class PluginParts {
  private built: Promise<Parts> | undefined;
  private done: Parts | undefined;

  constructor(
    private readonly plugin: PluginConfig,
    private readonly ports: Ports,
  ) {}

  /** The parts once built, so a call need not wait on the promise; undefined until then. */
  get ready(): Parts | undefined {
    return this.done;
  }

  get(): Promise<Parts> {
    this.built ??= buildParts(this.plugin, this.ports).then(
      (done) => {
        this.done = done;
        return done;
      },
      (error: unknown) => {
        // A secret that could not be read is read again on the next call.
        this.built = undefined;
        throw error;
      },
    );
    return this.built;
  }
}
