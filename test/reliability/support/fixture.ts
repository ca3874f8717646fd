/**
 * The service the reliability tests run against: one user_key service on the local platform with
 * active applications (keys full of `:`, `{`, `}`, `*`), one suspended application, no limits (so the
 * platform's counters equal the allowed calls), and APIcast-style mapping rules for two routes.
 */
import { randomBytes } from 'node:crypto';
import { type AccessConfig, type AccessConfigInput, parseConfig } from '../../../lambdas/core/config';
import type { PlatformConfig } from '../../../local/platform';

export const SERVICE_ID = '2555417735060';
/** Two routes, two metrics under `hits`: the platform's `hits` counter is the count of allowed calls. */
export const ROUTES = [
  { method: 'GET', pattern: '/v1/words/{word}.json', metric: 'get_word', delta: 1 },
  { method: 'GET', pattern: '/v1/sentences/{word}.json', metric: 'get_sentence', delta: 1 },
] as const;

export interface Application {
  readonly id: string;
  readonly userKey: string;
}

export interface ServiceFixture {
  /** Random per run: a leak of the provider key into any output is a real leak, not a constant. */
  readonly providerKey: string;
  readonly active: readonly Application[];
  readonly suspended: readonly Application[];
  readonly platformConfig: PlatformConfig;
}

const KEY_SHAPES = ['rk:{0}', 'rk*{0}*', 'rk{{0}}', 'rk-{0}', 'RK:{0}:'];

/** `count` active applications (and one suspended) with keys that are random, printable and hostile. */
export function serviceFixture(count: number): ServiceFixture {
  const key = (i: number) =>
    (KEY_SHAPES[i % KEY_SHAPES.length] as string).replace('{0}', `${i}-${randomBytes(6).toString('hex')}`);
  const active = Array.from({ length: count }, (_, i) => ({ id: `app-${i}`, userKey: key(i) }));
  const suspended = [{ id: 'app-suspended', userKey: `rk:suspended-${randomBytes(6).toString('hex')}` }];
  const providerKey = `pk-${randomBytes(12).toString('hex')}`;
  return {
    providerKey,
    active,
    suspended,
    platformConfig: {
      services: [
        {
          id: SERVICE_ID,
          providerKey,
          authentication: 'user_key',
          state: 'active',
          metrics: [
            { name: 'hits', children: ROUTES.map((route) => ({ name: route.metric, children: [] })) },
          ],
          plans: [{ name: 'Unlimited', limits: [] }],
          applications: [
            ...active.map((app) => ({
              id: app.id,
              userKey: app.userKey,
              appKeys: [],
              plan: 'Unlimited',
              state: 'active' as const,
              referrerFilters: [],
            })),
            ...suspended.map((app) => ({
              id: app.id,
              userKey: app.userKey,
              appKeys: [],
              plan: 'Unlimited',
              state: 'suspended' as const,
              referrerFilters: [],
            })),
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
    negativeCacheTtlSeconds: 300,
    ...(parts.redis && { redis: { host: parts.redis.host, port: parts.redis.port } }),
    ...(parts.topicArn && { topicArn: parts.topicArn }),
    ...parts.overrides,
  });
}
