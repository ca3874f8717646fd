/**
 * Names a user_key application for its usage alerts through the platform's Account Management API:
 * `GET /admin/api/applications/find.xml?user_key=...&service_id=...&access_token=...` answers the
 * `<application>` the key belongs to in the service (porta's `Cinstance#to_xml`: id, state,
 * user_account_id, user_key, `<plan>` with its own name, then the application's `<name>`), 404 for none. Only configured when the provider
 * gives an admin access token; the answer is cached in the budget's slot so a busy application is
 * looked up once per TTL, not once per alert.
 *
 * A lookup never holds an alert back: a timeout, a refusal or an unreadable answer is undefined (the
 * alert then names the key by its last characters), and none of them logs the key.
 */
import type http from 'node:http';
import { type ServiceKeys, serviceKeys } from '../budget/keys';
import type { RedisConnection } from '../budget/redis-client';
import { ensureConnected, REDIS_CONNECT_TIMEOUT_MS } from '../budget/redis-client';
import { errorMessage, type LogPort } from '../observability/observability';
import { readXml, type XmlElement } from '../xml/xml-tree';
import { exchange, keepAliveAgent } from './http';

/** Who an application is, as the platform says. */
export interface ApplicationIdentity {
  readonly id: string;
  readonly name: string;
  /** The developer account (`user_account_id`), when the answer carries one. */
  readonly account?: string;
}

export interface AdminApiSettings {
  /** The admin portal's origin, e.g. `https://acme-admin.3scale.net`. */
  readonly url: string;
  readonly accessToken: string;
}

/**
 * An application answer is a couple of kilobytes, three levels deep (`<application>`, `<plan>`, the
 * plan's fields); a little room for extra fields, and the exchange caps the body at 1 MiB.
 */
const APPLICATION_XML_BOUNDS = { maxDepth: 6, maxAttributes: 8, maxNamespaces: 4 } as const;
/** Longest name or id kept: a longer one is cut, so an alert stays readable. */
const MAX_NAME_CHARS = 200;
export const LOOKUP_TIMEOUT_MS = 2_000;
/** A name rarely changes; a renamed application shows its new name within this. */
export const NAME_TTL_SECONDS = 6 * 60 * 60;
/** A key the platform does not find (or refuses to say) is asked again after this. */
const UNKNOWN_TTL_SECONDS = 10 * 60;
const UNKNOWN = '-';

function childText(element: XmlElement, name: string): string | undefined {
  const child = element.children.find((candidate) => candidate.localName === name);
  const value = child?.text.trim();
  return value === undefined || value === '' ? undefined : value.slice(0, MAX_NAME_CHARS);
}

/**
 * The application of a `find.xml` answer, or undefined when the document is not one. The name is the
 * `<application>`'s own `<name>`, not its `<plan>`'s.
 */
export function parseApplicationXml(xml: string): ApplicationIdentity | undefined {
  const reading = readXml(xml, APPLICATION_XML_BOUNDS);
  if (!reading.ok || reading.root.localName !== 'application') return undefined;
  const id = childText(reading.root, 'id');
  if (id === undefined) return undefined;
  const account = childText(reading.root, 'user_account_id');
  return { id, name: childText(reading.root, 'name') ?? id, ...(account !== undefined && { account }) };
}

export interface ApplicationDirectoryDeps {
  readonly serviceId: string;
  readonly admin: AdminApiSettings;
  readonly redis: RedisConnection;
  readonly logger: LogPort;
  /** @default LOOKUP_TIMEOUT_MS */
  readonly timeoutMs?: number;
  /** @default a keep-alive agent for the admin URL's protocol */
  readonly agent?: http.Agent;
}

export class ApplicationDirectory {
  private readonly agent: http.Agent;
  private readonly findUrl: URL;
  private readonly keys: ServiceKeys;

  constructor(private readonly deps: ApplicationDirectoryDeps) {
    this.keys = serviceKeys(deps.serviceId);
    this.findUrl = new URL('/admin/api/applications/find.xml', deps.admin.url);
    this.agent = deps.agent ?? keepAliveAgent(this.findUrl.protocol);
  }

  /** The application holding `userKey`, from the cache or the platform; undefined when unknown. */
  async find(credentialId: string, userKey: string): Promise<ApplicationIdentity | undefined> {
    const cacheKey = this.keys.applicationName(credentialId);
    const cached = await this.cached(cacheKey);
    if (cached !== undefined)
      return cached === UNKNOWN ? undefined : (JSON.parse(cached) as ApplicationIdentity);
    const found = await this.ask(userKey);
    await this.remember(cacheKey, found);
    return found;
  }

  private async cached(cacheKey: string): Promise<string | undefined> {
    try {
      await ensureConnected(this.deps.redis, REDIS_CONNECT_TIMEOUT_MS);
      return (await this.deps.redis.get(cacheKey)) ?? undefined;
    } catch (error) {
      this.deps.logger.warn('application name cache not read', { error: errorMessage(error) });
      return undefined;
    }
  }

  private async remember(cacheKey: string, found: ApplicationIdentity | undefined): Promise<void> {
    try {
      if (found === undefined) await this.deps.redis.set(cacheKey, UNKNOWN, 'EX', UNKNOWN_TTL_SECONDS);
      else await this.deps.redis.set(cacheKey, JSON.stringify(found), 'EX', NAME_TTL_SECONDS);
    } catch (error) {
      this.deps.logger.warn('application name not cached', { error: errorMessage(error) });
    }
  }

  private async ask(userKey: string): Promise<ApplicationIdentity | undefined> {
    const url = new URL(this.findUrl);
    url.searchParams.set('access_token', this.deps.admin.accessToken);
    url.searchParams.set('user_key', userKey);
    url.searchParams.set('service_id', this.deps.serviceId);
    const result = await exchange(
      { method: 'GET', url, headers: { accept: 'application/xml' } },
      this.agent,
      this.deps.timeoutMs ?? LOOKUP_TIMEOUT_MS,
    );
    if (!result.ok) {
      this.deps.logger.warn('application lookup failed: the alert names the key hint', {
        error: result.failure.message,
      });
      return undefined;
    }
    const { status, body } = result.answer;
    const found = status === 200 ? parseApplicationXml(body) : undefined;
    if (found === undefined && status !== 404) {
      this.deps.logger.warn('application lookup answered no application: the alert names the key hint', {
        status,
      });
    }
    return found;
  }
}
