/**
 * The service the reliability tests run against: one user_key service on the local platform with
 * active applications (keys full of `:`, `{`, `}`, `*`), one suspended application, and APIcast-style
 * mapping rules for two routes. Every application starts on a plan without limits; the `Metered` plan
 * has one (on `hits`, for all time, so no period ends during a run) for the runs that change plans and
 * limits. The platform counts every reported call, within limits or not: its counters equal the allowed calls.
 * In oauth mode the service authenticates with OpenID Connect and the application keys are client secrets.
 */
import { randomBytes } from 'node:crypto';
import {
  type AccessConfig,
  type AccessConfigInput,
  type CredentialMode,
  parseConfig,
} from '../../../core/settings/config';
import type { PlatformConfig } from '../../../local/platform';

export const SERVICE_ID = '2555417735060';
/** A plan with a limit on `hits` for all time, high enough that only a change at the platform makes it bite. */
export const METERED_PLAN = 'Metered';
export const METERED_LIMIT = 1_000_000;
/** Two routes, two metrics under `hits`: the platform's `hits` counter is the count of allowed calls. */
export const ROUTES = [
  { method: 'GET', pattern: '/v1/words/{word}.json', metric: 'get_word', delta: 1 },
  { method: 'GET', pattern: '/v1/sentences/{word}.json', metric: 'get_sentence', delta: 1 },
] as const;

export interface Application {
  readonly id: string;
  /**
   * The key the consumer sends: the user key, or in app_id mode the application's first key (in oauth
   * mode its first client secret).
   */
  readonly userKey: string;
  /** In app_id mode, every key of the application (the first is `userKey`). */
  readonly keys: readonly string[];
}

export interface ServiceFixture {
  readonly mode: CredentialMode;
  /** Random per run: a leak of the provider key into any output is a real leak, not a constant. */
  readonly providerKey: string;
  readonly active: readonly Application[];
  readonly suspended: readonly Application[];
  readonly platformConfig: PlatformConfig;
}

const KEY_SHAPES = ['rk:{0}', 'rk*{0}*', 'rk{{0}}', 'rk-{0}', 'RK:{0}:'];

/**
 * `count` active applications (and one suspended) with keys that are random, printable and hostile.
 * In app_id mode each application has `keysPerApp` such app keys (`userKey` holds the first).
 */
export function serviceFixture(
  count: number,
  mode: CredentialMode = 'user_key',
  keysPerApp = 1,
): ServiceFixture {
  const key = (i: number) =>
    (KEY_SHAPES[i % KEY_SHAPES.length] as string).replace('{0}', `${i}-${randomBytes(6).toString('hex')}`);
  const keys = (i: number) =>
    Array.from({ length: mode === 'user_key' ? 1 : keysPerApp }, (_, k) => key(i * keysPerApp + k));
  const applicationWith = (id: string, appKeys: string[]) => ({
    id,
    userKey: appKeys[0] as string,
    keys: appKeys,
  });
  const active = Array.from({ length: count }, (_, i) => applicationWith(`app-${i}`, keys(i)));
  const suspended = [applicationWith('app-suspended', [`rk:suspended-${randomBytes(6).toString('hex')}`])];
  const providerKey = `pk-${randomBytes(12).toString('hex')}`;
  const application = (app: Application, state: 'active' | 'suspended') => ({
    id: app.id,
    ...(mode === 'user_key' ? { userKey: app.userKey, appKeys: [] } : { appKeys: [...app.keys] }),
    plan: 'Unlimited',
    state,
    referrerFilters: [],
  });
  return {
    mode,
    providerKey,
    active,
    suspended,
    platformConfig: {
      services: [
        {
          id: SERVICE_ID,
          providerKey,
          authentication: mode === 'oauth' ? 'oidc' : mode,
          state: 'active',
          metrics: [
            { name: 'hits', children: ROUTES.map((route) => ({ name: route.metric, children: [] })) },
          ],
          plans: [
            { name: 'Unlimited', limits: [] },
            { name: METERED_PLAN, limits: [{ metric: 'hits', period: 'eternity', value: METERED_LIMIT }] },
          ],
          applications: [
            ...active.map((app) => application(app, 'active')),
            ...suspended.map((app) => application(app, 'suspended')),
          ],
        },
      ],
    },
  };
}

export interface AccessConfigParts {
  readonly fixture: ServiceFixture;
  readonly platformUrl: string;
  readonly redis?: { readonly host: string; readonly port: number };
  readonly topicArn?: string;
  readonly overrides?: Partial<AccessConfigInput>;
}

export function accessConfig(parts: AccessConfigParts): AccessConfig {
  return parseConfig({
    serviceId: SERVICE_ID,
    platformUrl: parts.platformUrl,
    platformCredential: parts.fixture.providerKey,
    mappingRules: ROUTES,
    credentialMode: parts.fixture.mode,
    negativeCacheTtlSeconds: 300,
    ...(parts.redis && { redis: { host: parts.redis.host, port: parts.redis.port } }),
    ...(parts.topicArn && { topicArn: parts.topicArn }),
    ...parts.overrides,
  });
}
