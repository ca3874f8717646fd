/** Stack files and HTTP helpers shared by the end-to-end tests. */
import { XMLParser } from 'fast-xml-parser';

/**
 * The local stack runs every function on the test's one event loop: bursts of concurrent calls get a
 * Redis command timeout long enough that a starved loop does not pass for a slow Redis (whose fallback,
 * authrep, would count a call the script already counted: the reliability suite covers that case).
 */
export const IN_PROCESS_COMMAND_TIMEOUT_MS = 3_000;

export const HOURLY_LIMIT = 5;
export const USER_SERVICE = 'svc-user';
export const APP_SERVICE = 'svc-app';
export const PROVIDER_KEY = 'pk-e2e';

export const PLATFORM_SECTION = {
  services: [
    {
      id: USER_SERVICE,
      providerKey: PROVIDER_KEY,
      authentication: 'user_key',
      metrics: [{ name: 'hits', children: [{ name: 'get_word' }, { name: 'post_word' }] }],
      plans: [
        {
          name: 'Basic',
          limits: [
            { metric: 'hits', period: 'hour', value: HOURLY_LIMIT },
            { metric: 'post_word', period: 'eternity', value: 0 },
          ],
        },
        { name: 'Roomy', limits: [{ metric: 'hits', period: 'hour', value: 1000 }] },
      ],
      applications: [
        { id: 'app-limited', userKey: 'key-limited', plan: 'Basic' },
        { id: 'app-roomy', userKey: 'key-roomy', plan: 'Roomy' },
        { id: 'app-disabled-post', userKey: 'key-post', plan: 'Basic' },
        { id: 'app-suspended', userKey: 'key-suspended', plan: 'Roomy', state: 'suspended' },
      ],
    },
    {
      id: APP_SERVICE,
      providerKey: PROVIDER_KEY,
      authentication: 'app_id',
      metrics: [{ name: 'hits', children: [{ name: 'get_word' }] }],
      plans: [{ name: 'Basic', limits: [{ metric: 'hits', period: 'hour', value: 1000 }] }],
      applications: [{ id: 'app-a', appKeys: ['secret-a'], plan: 'Basic' }],
    },
  ],
};

export const WORD_RULES = [
  { method: 'GET', pattern: '/v1/words/{word}.json', metric: 'get_word', delta: 1 },
  { method: 'POST', pattern: '/v1/words/{word}.json', metric: 'post_word', delta: 1 },
];

export const USER_GATEWAY = {
  serviceId: USER_SERVICE,
  mappingRules: WORD_RULES,
  routes: ['GET /v1/words/{word}', 'POST /v1/words/{word}'],
};

export const APP_GATEWAY = {
  serviceId: APP_SERVICE,
  basePath: '/appid',
  mappingRules: WORD_RULES.slice(0, 1),
  routes: ['GET /v1/words/{word}'],
};

export const STACK_FILE = { platform: PLATFORM_SECTION, gateway: [USER_GATEWAY, APP_GATEWAY] };

/** A call with a deadline, so a hung server fails the test instead of stalling it. */
export async function call(
  url: string,
  init: { method?: string; headers?: Record<string, string> } = {},
): Promise<{ status: number; body: Record<string, unknown> }> {
  const response = await fetch(url, { ...init, signal: AbortSignal.timeout(10_000) });
  const text = await response.text();
  return { status: response.status, body: text === '' ? {} : (JSON.parse(text) as Record<string, unknown>) };
}

interface UsageReportXml {
  '@_metric': string;
  '@_period': string;
  current_value: number;
  max_value: number;
}

/** GET authorize.xml over HTTP (no usage: records nothing) and reads current_value of metric per period. */
export async function platformCurrentValue(
  platformUrl: string,
  query: Record<string, string>,
  metric: string,
  period: string,
): Promise<number | undefined> {
  const url = new URL('/transactions/authorize.xml', platformUrl);
  for (const [name, value] of Object.entries(query)) url.searchParams.set(name, value);
  const response = await fetch(url, { signal: AbortSignal.timeout(10_000) });
  const xml = new XMLParser({ ignoreAttributes: false, isArray: (name) => name === 'usage_report' }).parse(
    await response.text(),
  );
  const reports: UsageReportXml[] = xml.status?.usage_reports?.usage_report ?? [];
  return reports.find((report) => report['@_metric'] === metric && report['@_period'] === period)
    ?.current_value;
}

const HOUR_MS = 3_600_000;

/**
 * A clock that runs in real time from one minute past the start of an hour, so the hourly counters a test
 * reads can never roll over in the middle of it.
 */
export function clockFromStartOfHour(): () => number {
  const offset = Math.floor(Date.now() / HOUR_MS) * HOUR_MS + 60_000 - Date.now();
  return () => Date.now() + offset;
}

/**
 * The kinds of API the end-to-end suites run on, as a stack file's gateway entry says them, with what a
 * refused credential gets on each: a REST API answers 401, an HTTP API 403 (docs/http-api.md). The HTTP
 * API runs on a named stage, so its rawPath carries the stage the mapping rules must never see.
 */
export const API_KINDS = [
  { apiType: 'rest', entry: {}, refusedCredential: 401 },
  { apiType: 'http', entry: { apiType: 'http', stage: 'prod' }, refusedCredential: 403 },
] as const;
