/**
 * Mapping rules read from the platform's proxy configuration (mappingRulesSource `platform`), as APIcast
 * reads its configuration and reloads it every APICAST_CONFIGURATION_CACHE seconds:
 *
 * - the rules are kept in Redis (`am:<serviceId>:rules`, keys.ts) with when they were read; an instance
 *   whose rules are older than the refresh bound reads that key first (one GET), so a promotion another
 *   instance read is taken at once;
 * - when the shared rules are older than the bound too, one instance across all takes the refresh lease
 *   (`SET NX PX`) and reads the platform; the others keep their rules meanwhile and take the new ones
 *   from Redis at their next look (a second later at most). So the platform is read once per bound per
 *   service, not once per instance;
 * - a read that fails keeps the last good rules (in memory, else in Redis) and is logged; its lease is
 *   kept to its expiry, which spaces the retries. With no rules ever read, calls are refused
 *   (`platform_misconfigured`, the alarm) until a read succeeds;
 * - rules read get the checks given rules get (validateMappingRules, and the throttles' bursts).
 *
 * The call that finds the rules stale waits for the refresh (a Redis GET, and for the one instance holding
 * the lease, the platform's answer within its timeout); every other call uses the rules in memory.
 */
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { mappingRulesKeys } from '../budget/keys';
import type { RedisConnection } from '../budget/redis-client';
import { checkThrottlesAgainstRules } from '../budget/throttles';
import { errorMessage, type LogPort } from '../observability/observability';
import { PROXY_CONFIG_TIMEOUT_MS, type ProxyConfigRead, ProxyConfigReader } from '../platform/proxy-config';
import {
  type AccessConfig,
  ConfigError,
  DEFAULT_PROXY_ENVIRONMENT,
  DEFAULT_RULES_REFRESH_SECONDS,
  type MappingRule,
  validateMappingRules,
} from '../settings/config';
import { compileMappingRules, type UsageMapper } from './mapping';
import { type MappingRulesPort, platformRulesAccessOf } from './mapping-rules-source';

/** An instance without fresh rules asks Redis again at most this often (a quarter of a shorter bound). */
const RECHECK_MS = 1_000;
/** A failed platform read is tried again after at most this long (the lease's length). */
const FAILED_READ_RETRY_MS = 30_000;
/** How often an instance with no rules at all looks for those the lease holder is reading. */
const WAIT_POLL_MS = 50;

interface RulesRead {
  readonly readAt: number;
  readonly version: number;
  readonly rules: readonly MappingRule[];
}

interface Held extends RulesRead {
  readonly mapper: UsageMapper;
}

export interface PlatformMappingRulesDeps {
  readonly serviceId: string;
  readonly reader: { read(): Promise<ProxyConfigRead> };
  /** How old the rules may get before they are read again. */
  readonly refreshMs: number;
  /** Undefined: each instance reads the platform once per bound itself. */
  readonly redis?: RedisConnection;
  /** More checks of rules read (the throttles' bursts); throws a ConfigError. */
  readonly check?: (rules: readonly MappingRule[]) => void;
  readonly logger: LogPort;
  /** @default PROXY_CONFIG_TIMEOUT_MS: how long a reader's answer may take */
  readonly readTimeoutMs?: number;
}

export class PlatformMappingRules implements MappingRulesPort {
  private held: Held | undefined;
  private checkedAt = Number.NEGATIVE_INFINITY;
  /** After a failed read, this instance does not read the platform before then. */
  private readNotBefore = Number.NEGATIVE_INFINITY;
  private refreshing: Promise<void> | undefined;
  private readonly keys: ReturnType<typeof mappingRulesKeys>;
  private readonly leaseMs: number;
  private readonly recheckMs: number;

  constructor(private readonly deps: PlatformMappingRulesDeps) {
    this.keys = mappingRulesKeys(deps.serviceId);
    const readMs = deps.readTimeoutMs ?? PROXY_CONFIG_TIMEOUT_MS;
    this.leaseMs = Math.max(readMs + 1_000, Math.min(deps.refreshMs, FAILED_READ_RETRY_MS));
    this.recheckMs = Math.min(RECHECK_MS, deps.refreshMs / 4);
  }

  async mapperAt(now: number): Promise<UsageMapper | undefined> {
    if (!this.fresh(now) && now >= this.checkedAt + this.recheckMs) {
      this.refreshing ??= this.refresh(now).finally(() => {
        this.refreshing = undefined;
      });
      await this.refreshing;
    }
    return this.held?.mapper;
  }

  private fresh(now: number): boolean {
    return this.held !== undefined && now < this.held.readAt + this.deps.refreshMs;
  }

  private async refresh(now: number): Promise<void> {
    this.checkedAt = now;
    this.adopt(await this.readShared());
    if (this.fresh(now) || now < this.readNotBefore) return;
    const lease = await this.takeLease();
    if (lease === undefined) {
      // Another instance is reading the platform: keep the rules held, or wait for its answer.
      if (this.held === undefined) await this.waitForShared();
      return;
    }
    await this.readPlatform(now, lease);
  }

  private adopt(read: RulesRead | undefined): void {
    if (read === undefined || (this.held !== undefined && read.readAt <= this.held.readAt)) return;
    const unchanged = this.held !== undefined && this.held.version === read.version;
    this.held = {
      ...read,
      mapper: unchanged && this.held ? this.held.mapper : compileMappingRules(read.rules),
    };
  }

  private async readPlatform(now: number, lease: string): Promise<void> {
    const read = this.checked(await this.deps.reader.read());
    if (!read.ok) {
      this.readNotBefore = now + this.leaseMs;
      const detail = { kind: read.kind, status: read.status, problem: read.message };
      if (this.held === undefined) {
        this.deps.logger.error(
          'mapping rules could not be read from the platform: calls are refused (platform_misconfigured)',
          detail,
        );
      } else {
        this.deps.logger.warn('mapping rules not refreshed from the platform: the last good ones stay', {
          ...detail,
          version: this.held.version,
        });
      }
      return;
    }
    const fetched: RulesRead = { readAt: now, version: read.version, rules: read.rules };
    if (this.held !== undefined && this.held.version !== read.version) {
      this.deps.logger.info('mapping rules changed on the platform', {
        from: this.held.version,
        to: read.version,
        rules: read.rules.length,
      });
    }
    this.adopt(fetched);
    await this.writeShared(fetched, lease);
  }

  private checked(read: ProxyConfigRead): ProxyConfigRead {
    if (!read.ok || this.deps.check === undefined) return read;
    try {
      this.deps.check(read.rules);
      return read;
    } catch (error) {
      if (!(error instanceof ConfigError)) throw error;
      return { ok: false, kind: 'invalid', message: `${error.setting} ${error.problem}` };
    }
  }

  /** The rules another instance read, or undefined (none, unreadable, or Redis down). */
  private async readShared(): Promise<RulesRead | undefined> {
    const { redis, logger } = this.deps;
    if (redis === undefined) return undefined;
    try {
      const text = await redis.get(this.keys.rules);
      if (text === null) return undefined;
      const stored = JSON.parse(text) as Partial<RulesRead>;
      if (typeof stored.readAt !== 'number' || typeof stored.version !== 'number') return undefined;
      return {
        readAt: stored.readAt,
        version: stored.version,
        rules: validateMappingRules(stored.rules, this.keys.rules),
      };
    } catch (error) {
      logger.warn('shared mapping rules not read', { error: errorMessage(error) });
      return undefined;
    }
  }

  private async writeShared(read: RulesRead, lease: string): Promise<void> {
    const { redis, logger } = this.deps;
    if (redis === undefined) return;
    try {
      await redis.set(this.keys.rules, JSON.stringify(read));
      await redis.eval(RELEASE_LEASE, 1, this.keys.refresh, lease);
    } catch (error) {
      logger.warn('mapping rules read but not shared', { error: errorMessage(error) });
    }
  }

  /** The lease's token when this instance is to read the platform; undefined when another holds it. */
  private async takeLease(): Promise<string | undefined> {
    const token = randomUUID();
    const { redis, logger } = this.deps;
    if (redis === undefined) return token;
    try {
      const taken = await redis.set(this.keys.refresh, token, 'PX', this.leaseMs, 'NX');
      return taken === 'OK' ? token : undefined;
    } catch (error) {
      // Redis down: this instance reads for itself (at most once per lease, readNotBefore).
      logger.warn('mapping rules refresh lease not taken: reading the platform directly', {
        error: errorMessage(error),
      });
      return token;
    }
  }

  /** No rules at all, another instance reading: its answer is awaited as long as its read may take. */
  private async waitForShared(): Promise<void> {
    const deadline = Date.now() + (this.deps.readTimeoutMs ?? PROXY_CONFIG_TIMEOUT_MS) + 500;
    while (this.held === undefined && Date.now() + WAIT_POLL_MS <= deadline) {
      await sleep(WAIT_POLL_MS);
      this.adopt(await this.readShared());
    }
  }
}

/** Deletes the lease only if it is still the caller's. */
const RELEASE_LEASE = `if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end return 0`;

/** The platform's rules for a configuration with mappingRulesSource platform. */
export function platformMappingRulesOf(
  config: AccessConfig,
  deps: { readonly redis?: RedisConnection; readonly logger: LogPort },
): PlatformMappingRules {
  const { adminApiUrl, accessToken } = platformRulesAccessOf(config);
  const reader = new ProxyConfigReader({
    adminApiUrl,
    accessToken,
    serviceId: config.serviceId,
    environment: config.mappingRulesEnvironment ?? DEFAULT_PROXY_ENVIRONMENT,
  });
  return new PlatformMappingRules({
    serviceId: config.serviceId,
    reader,
    refreshMs: (config.mappingRulesRefreshSeconds ?? DEFAULT_RULES_REFRESH_SECONDS) * 1000,
    ...(deps.redis !== undefined && { redis: deps.redis }),
    check: (rules) => checkThrottlesAgainstRules(config.throttles, rules),
    logger: deps.logger,
  });
}
