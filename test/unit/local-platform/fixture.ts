/** A platform config and helpers shared by the local platform's tests. */
import { afterAll, beforeAll } from 'vitest';
import { type RunningPlatform, type StartPlatformOptions, startPlatform } from '../../../local/platform';

export const USER_KEY_SERVICE = '2555417735060';
export const APP_ID_SERVICE = '2555417735061';
export const SUSPENDED_SERVICE = '2555417735099';
export const PROVIDER_KEY = 'pk-demo';
export const SERVICE_TOKEN = 'st-demo';

/** Wednesday 10 January 2024, 12:30:15 UTC. */
export const WEDNESDAY = Date.UTC(2024, 0, 10, 12, 30, 15);

export const CONFIG = {
  platform: {
    services: [
      {
        id: USER_KEY_SERVICE,
        providerKey: PROVIDER_KEY,
        serviceToken: SERVICE_TOKEN,
        authentication: 'user_key',
        metrics: [{ name: 'hits', children: [{ name: 'get_word' }, { name: 'post_word' }] }],
        plans: [
          {
            name: 'Basic',
            limits: [
              { metric: 'hits', period: 'hour', value: 100 },
              { metric: 'post_word', period: 'eternity', value: 0 },
            ],
          },
          { name: 'Unlimited' },
        ],
        applications: [
          { id: 'app-1', userKey: 'demo-key-1', plan: 'Basic' },
          { id: 'app-2', userKey: 'demo-key-2', plan: 'Basic' },
          { id: 'app-suspended', userKey: 'suspended-key', plan: 'Basic', state: 'suspended' },
          { id: 'app-unlimited', userKey: 'unlimited-key', plan: 'Unlimited' },
        ],
      },
      {
        id: APP_ID_SERVICE,
        providerKey: PROVIDER_KEY,
        authentication: 'app_id',
        metrics: [{ name: 'hits' }],
        plans: [{ name: 'Pro', limits: [{ metric: 'hits', period: 'day', value: 1000 }] }],
        applications: [
          { id: 'keyed-app', appKeys: ['key-a', 'key-b'], plan: 'Pro' },
          { id: 'keyless-app', plan: 'Pro' },
          { id: 'web-app', plan: 'Pro', referrerFilters: ['*.example.com'] },
        ],
      },
      {
        id: SUSPENDED_SERVICE,
        providerKey: 'pk-other',
        authentication: 'user_key',
        state: 'suspended',
        plans: [{ name: 'Basic' }],
        applications: [{ id: 'app-9', userKey: 'key-9', plan: 'Basic' }],
      },
    ],
  },
};

/** A settable clock for the platform. */
export class TestClock {
  constructor(public time: number) {}
  readonly now = () => this.time;
}

/** Starts a platform for the enclosing describe block and stops it after. */
export function usePlatform(options: Partial<StartPlatformOptions> = {}): {
  readonly platform: RunningPlatform;
} {
  const holder = {} as { platform: RunningPlatform };
  beforeAll(async () => {
    holder.platform = await startPlatform({ config: CONFIG, ...options });
  });
  afterAll(async () => {
    await holder.platform?.stop();
  });
  return holder;
}

export interface RawAnswer {
  readonly status: number;
  readonly body: string;
  readonly headers: Headers;
}

export async function get(
  platform: RunningPlatform,
  pathAndQuery: string,
  headers: Record<string, string> = {},
): Promise<RawAnswer> {
  const response = await fetch(`${platform.url}${pathAndQuery}`, {
    headers,
    signal: AbortSignal.timeout(5000),
  });
  return { status: response.status, body: await response.text(), headers: response.headers };
}

export async function post(
  platform: RunningPlatform,
  body: string | FormData | Uint8Array,
  headers: Record<string, string> = { 'content-type': 'application/x-www-form-urlencoded' },
): Promise<RawAnswer> {
  const response = await fetch(`${platform.url}/transactions.xml`, {
    method: 'POST',
    body,
    headers,
    signal: AbortSignal.timeout(5000),
  });
  return { status: response.status, body: await response.text(), headers: response.headers };
}

export const ALL_OPTIONS = { '3scale-options': 'rejection_reason_header=1&limit_headers=1&hierarchy=1' };

export function limitHeaders(answer: RawAnswer): Record<string, string | null> {
  return {
    remaining: answer.headers.get('3scale-limit-remaining'),
    reset: answer.headers.get('3scale-limit-reset'),
    max: answer.headers.get('3scale-limit-max-value'),
  };
}

export const XML_DECLARATION = '<?xml version="1.0" encoding="UTF-8"?>';

export function errorBody(code: string, message: string): string {
  return `${XML_DECLARATION}<error code="${code}">${message}</error>`;
}
